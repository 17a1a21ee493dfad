// Package sim is the engine of a deterministic discrete-event simulator
// of Raft leader election: clusters of election.Nodes on one virtual
// timing wheel that carries every node's timers and every message in
// flight, so a run is "jump to the next deadline, fire it" — thousands of
// elections per second, reproducible byte for byte from a seed. Its one
// job is to run clusters and trials and to summarize what they measured;
// the experiments are in sim/experiment, their output in sim/report.
//
// # A tour
//
// A Cluster is the simulated group, built from a Config. Its Network
// gives every directed link a one-way latency (a Latency: Fixed, Uniform,
// Normal truncated at 0, LogNormal or Empirical; ParseLatency reads the
// command-line form "normal:5ms,2ms"), drops and duplicates messages at
// random, and charges a disk write before a server answers a vote. With
// DiskBlocks a write blocks its server, as LogCabin's writes under its
// lock do; TimersWait and RearmAfterTermWrite complete that model of a
// blocking server through the election package's
// Config.Emulate.ServerLock hook.
// Partition, Cut and Heal change the topology while it runs (Linked
// reports a link); Crash,
// Restart (term and vote survive) and Pause inject faults. Run advances
// virtual time until a condition holds, and stops early when the
// Config's Context is cancelled. Err tells a run that cannot be trusted:
// a callback on the wheel panicked (the wheel recovers it and goes on),
// or the run was interrupted.
//
// Run (the function) executes the trials of many Jobs across all cores;
// trial i draws from TrialRand(seed, i) and outcomes are gathered in
// trial order, so the output does not depend on GOMAXPROCS. Summaries and
// Accumulate stream the outcomes into an Accumulator per job instead,
// whose memory does not grow with the number of trials (exact times up to
// SampleCap, a histogram within SketchError beyond) and whose Summary
// depends only on the outcomes, not their order; accumulators of the
// shards of a run (RunOptions.Shard) merge into the whole run's. A failed
// trial stops the run with a *TrialError naming the trial and its seed.
// Summarize turns Outcomes into percentiles, split-vote rate, terms and
// messages per election and a CDF.
//
// Configuration errors are *FieldError values wrapping ErrInvalidConfig.
package sim
