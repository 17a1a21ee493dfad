// Package sim is a deterministic discrete-event simulator of Raft leader
// election: clusters of election.Nodes on one virtual timing wheel that
// carries every node's timers and every message in flight, so a run is
// "jump to the next deadline, fire it" — thousands of elections per second,
// reproducible byte for byte from a seed.
//
// # A tour
//
// A Cluster is the simulated group. Its Network gives every directed link
// a one-way latency (a Latency: Fixed, Uniform, Normal truncated at 0,
// LogNormal or Empirical; ParseLatency reads the command-line form
// "normal:5ms,2ms"), drops and duplicates messages at random, and charges
// a disk write before a server answers a vote. Partition, Cut and Heal
// change the topology while it runs; Crash, Restart (term and vote survive)
// and Pause inject faults. Run advances virtual time until a condition
// holds.
//
// Experiments are values with their parameters: Failover (Figure 16 of the
// Raft paper), Bootstrap (cold start), SplitVote (the split-vote model of
// Ongaro's thesis, with SplitVoteAnalytic, its closed form) and Stability
// (a healthy cluster over minutes of virtual time, counting the elections
// nobody needed; SummarizeStability turns them into rates per node-hour).
// Tune searches a grid of timeout ranges for the fastest failover whose
// unnecessary elections stay under a bound. Run executes
// the trials of many experiments across all cores; trial i draws from
// TrialRand(seed, i) and results are gathered in trial order, so the output
// does not depend on GOMAXPROCS. Summarize turns outcomes into percentiles,
// split-vote rate, terms and messages per election and a CDF, which
// SummaryTable, WriteJSON, WriteCSV and WritePlot render.
//
// # The paper model
//
// LAN returns the cluster model calibrated against the paper's published
// figures (PaperRows): LogCabin on a gigabit LAN, where a server holds its
// lock while it writes its term and vote, candidates wait for their own
// timeout and keep its deadline when a higher term deposes them, and
// timeouts are drawn in whole milliseconds. HashicorpModel is
// hashicorp/raft v1.8.0's timing, to compare with real clusters through
// raftadapter. See README.md in this directory for how each choice was
// made and how the simulated figures compare with the paper's and with
// hashicorp/raft's.
package sim
