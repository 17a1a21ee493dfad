// Package msink resolves the go-metrics sink a raftick component reports
// to: the one configured, go-metrics' global one by default, or none.
package msink
