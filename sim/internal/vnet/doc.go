// Package vnet is the simulator's plumbing on a virtual wheel: Run
// advances virtual time deadline by deadline until a condition holds,
// and Copies draws how many copies of a message a lossy, duplicating
// network delivers. The engines' clusters (sim.Cluster, the etcd engine's
// Cluster) carry every message in flight with a memnet.Courier (the
// project's one message carrier) and draw its fate with Copies; what is
// delayed or cut stays theirs.
package vnet
