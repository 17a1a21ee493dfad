package main

import (
	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/engines/realtime"
	"github.com/raftick/raftick/sim/experiment"
)

// realtimeEngine is the --engine value of raftick's nodes on real time.
const realtimeEngine = "raftick-realtime"

// realtimeWorkers is the real-time engine's default --workers: trials
// in parallel, each mostly asleep (see docs/simulator.md for what it does
// to the timing on this machine's 2 cores).
const realtimeWorkers = 2

const realtimeWorkersNote = "2 trials at a time (--workers)"

// realtimeDefaults applies --engine raftick-realtime's defaults (--model
// plain: the election package as deployed) and refuses what it cannot do.
func (a *app) realtimeDefaults(cmd *cobra.Command, o *opts) error {
	if o.engine != realtimeEngine {
		return nil
	}
	if !cmd.Flags().Changed("model") {
		o.model = "plain"
	}
	if a.shard.n > 0 {
		return flagError("shard", "is not available with --engine %s (real-time trials are not reproducible, so shards would not add up to a run)", realtimeEngine)
	}
	return nil
}

// engineWorkers returns --workers, or the real-time engine's default.
func (o *opts) engineWorkers() int {
	if o.engine == realtimeEngine && o.workers == 0 {
		return realtimeWorkers
	}
	return o.workers
}

// realtimeExperiment returns the experiment of s on the real-time engine,
// collecting its lateness in stats (nil: none).
func realtimeExperiment(cmd *cobra.Command, s experiment.Setup, bootstrap bool, stats *realtime.Stats) (experiment.Experiment, error) {
	if err := realtime.Check(s); err != nil {
		return nil, configError(err, setupFlags(cmd), "engine")
	}
	e := realtime.Engine{Stats: stats}
	if bootstrap {
		return realtime.Bootstrap{Setup: s, Engine: e}, nil
	}
	return realtime.Failover{Setup: s, Engine: e}, nil
}

// realtimeSplitVote checks splitvote's --engine: raftick-realtime runs
// --sv-model cluster, 1000 trials unless --trials says otherwise. It
// returns the (empty) list of experiments to fill.
func (a *app) realtimeSplitVote(cmd *cobra.Command, o *splitOpts) ([]experiment.Experiment, error) {
	switch o.engine {
	case "raftick":
		return nil, nil
	case realtimeEngine:
	default:
		return nil, flagError("engine", "unknown engine %q (want raftick or raftick-realtime)", o.engine)
	}
	f := cmd.Flags()
	if f.Changed("sv-model") && o.svModel != "cluster" {
		return nil, flagError("sv-model", "--engine %s runs election nodes: give cluster, not %q", realtimeEngine, o.svModel)
	}
	if o.trace {
		return nil, flagError("trace", "is not available with --engine %s", realtimeEngine)
	}
	if err := a.realtimeDefaults(cmd, &o.opts); err != nil {
		return nil, err
	}
	o.svModel = "cluster"
	if !f.Changed("trials") {
		o.trials = 1000
	}
	return nil, nil
}

// realtimeSplitVotes puts split-vote experiments on the real-time engine.
func realtimeSplitVotes(exps []experiment.Experiment) []experiment.Experiment {
	out := make([]experiment.Experiment, len(exps))
	for i, e := range exps {
		out[i] = realtime.SplitVote{SplitVote: e.(experiment.SplitVote)}
	}
	return out
}
