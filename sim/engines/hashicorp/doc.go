// Package hashicorp is the simulator's hashicorp engine: it runs the
// failover experiment of an experiment.Setup on real hashicorp/raft
// clusters (raftadapter's harness, in real time) and returns the same
// experiment.Result as the simulated engine, so predictions can be
// compared with a real implementation. Its one job is that mapping (the
// Setup onto raftadapter's configuration, raftadapter's trials onto
// sim.Outcomes); it sits above both sim/experiment and raftadapter, which
// stay unaware of each other.
package hashicorp
