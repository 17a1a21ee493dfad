// Package etcd is the simulator's etcd engine: it runs the failover and
// bootstrap experiments of an experiment.Setup on real go.etcd.io/raft/v3
// nodes (etcdadapter's clusters, in virtual time) and returns the same
// experiment.Result as the simulated engine, so predictions, such as those
// of the raftick engine's etcd model (experiment.EtcdModel), can be
// compared with a real implementation.
//
// Its one job is the mapping: the Setup onto etcd's settings (Config:
// TickInterval, ElectionTick, HeartbeatTick, PreVote, CheckQuorum; the
// latency, loss, duplication and disk models; short logs and the time
// limit), and etcdadapter's outcomes onto sim.Outcomes. It sits above
// sim/experiment and etcdadapter, which stay unaware of each other.
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
