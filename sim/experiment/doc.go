// Package experiment defines the simulator's experiments on the sim
// engine: what to build, what to measure, and the Result of the trials.
// Its one job is the experiments; running clusters is sim's, printing
// results is sim/report's.
//
// # A tour
//
// A Setup describes a simulated cluster in the terms of the experiments:
// servers, election timeout range, heartbeat, the election package's
// options, the network (sim.Network, embedded) and the trial's time
// limit. Validate checks it, Describe says it in one line, and Set
// changes one setting from its command-line form (for sweeps over a
// Grid of Axis values). Models names the presets: PaperModel (the Raft
// paper's LogCabin cluster, calibrated against its published figures),
// PlainModel (the election package as it is) and HashicorpModel
// (hashicorp/raft v1.8.0's timing); a Model also keeps its timing rules
// (Timing, Tune).
//
// A Setup also carries the variants of the experiments: a candidate
// timeout range of its own and binary exponential backoff
// (CandidateMin, CandidateMax, CandidateBackoff; Howard et al.), how many
// servers a failover crashes and when (Crash, CrashAfterHeartbeat), and
// where the clock stops (Until).
//
// Experiments are values with their parameters: Failover (Figure 16 of
// the Raft paper), Bootstrap (cold start), SplitVote (the split-vote
// model of Ongaro's thesis, with its closed form SplitVote.Analytic),
// Stability (a healthy cluster over minutes of virtual time, counting the
// elections nobody needed), Partition (a Stability window with the links
// cut in one of the named Shapes around the leader, counting also the
// time without a leader) and the rows of the paper's figure
// (PaperExperiments, whose Results carry the figures the paper quotes).
// Run executes many experiments through sim.Run and returns their
// Results; Tune searches a grid of timeout ranges for the fastest
// failover whose unnecessary elections stay under a bound.
//
// Configuration errors are *sim.FieldError values wrapping
// ErrInvalidConfig; their Field is the Go field (or setting) name, for
// callers to map to their own names.
package experiment
