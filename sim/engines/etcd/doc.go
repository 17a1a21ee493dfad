// Package etcd is the simulator's etcd engine: it runs the failover and
// bootstrap experiments of an experiment.Setup on real go.etcd.io/raft/v3
// nodes (etcdadapter's Nodes, in virtual time) and returns the same
// experiment.Result as the simulated engine, so predictions, such as those
// of the raftick engine's etcd model (experiment.EtcdModel), can be
// compared with a real implementation.
//
// A Cluster puts N etcdadapter Nodes on one virtual wheel that carries
// every node's ticker, every disk write and every message in flight, with
// a pluggable network (latency function, loss, duplication, a drop rule)
// and disk; it runs as "jump to the next deadline, fire it" on one
// goroutine, reproducibly from its random source.
//
// The trials themselves are package experiment's (RunFailover,
// RunBootstrap), written once for every engine; this package maps the
// Setup onto etcd's settings (Config: TickInterval, ElectionTick,
// HeartbeatTick, PreVote, CheckQuorum; the latency, loss, duplication and
// disk models) and implements experiment.Cluster on a Cluster: a short
// log is an entry the leader proposes and whose appends to the short
// nodes are dropped.
//
// Failover and Bootstrap are experiment.Experiments, so their trials run
// through sim's runner like the simulated engine's: in parallel, each a
// function of its seed and index only, the same whatever the number of
// workers. Setups etcd cannot express are refused by Check with a
// *sim.FieldError naming the field: a timeout range other than [T, 2T),
// timeouts or a heartbeat that are not whole ticks, and the options of
// other implementations (candidates waiting for their timeout, blocking
// disks, timer noise, last-contact detection, ...).
package etcd
