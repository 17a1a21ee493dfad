// Package raftick is the timer layer for Raft-style consensus systems: a
// shared timing wheel, a repeating randomized timer on it, Raft leader
// election built on such timers, a host for many Raft groups on one node,
// and a deterministic cluster simulator.
//
// This package holds no code: it documents the module. The packages are
//
//	wheel        a hierarchical timing wheel; real-time and virtual drivers
//	repeated     a repeating timer with election-timeout jitter
//	election     one Raft node's leader election on such timers
//	multiraft    many groups' election nodes on one host
//	sim          the discrete-event cluster simulator (cmd/raftsim is its CLI)
//	raftadapter  the bridge to github.com/hashicorp/raft
//	etcdadapter  go.etcd.io/raft/v3 nodes ticked by a wheel
//
// The examples of this package are the Go code of the module's README,
// compiled and run by go test.
package raftick
