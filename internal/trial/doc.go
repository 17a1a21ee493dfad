// Package trial holds the rules of a failover or bootstrap trial that the
// experiments of every engine share (package sim/experiment for raftick's
// own nodes, package etcdadapter for etcd's): the default time limit of a
// trial and how many survivors may have short logs. Each engine keeps its
// own Setup and error messages; the rules live here once.
package trial
