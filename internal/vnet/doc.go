// Package vnet holds the parts of a simulated network on a virtual wheel
// that every simulator in raftick needs alike: a Courier that delivers
// messages after a delay on reusable wheel timers, and Run, the loop that
// advances virtual time deadline by deadline until a condition holds.
// The simulators (sim's Cluster, etcdadapter's Cluster) decide what is
// lost, delayed or cut; vnet only carries and runs.
package vnet
