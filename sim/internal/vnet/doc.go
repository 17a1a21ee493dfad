// Package vnet is the simulator's message courier on a virtual wheel: a
// Courier delivers messages after a delay on reusable wheel timers, and
// Run advances virtual time deadline by deadline until a condition holds.
// The engines' clusters (sim.Cluster, the etcd engine's Cluster) decide
// what is lost, delayed or cut; vnet only carries and runs.
package vnet
