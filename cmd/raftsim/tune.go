package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
)

type tuneOpts struct {
	opts
	mins         string
	spreads      string
	objective    string
	maxElections float64
	stableFor    time.Duration
	stableTrials int
	countPV      bool
	maxRounds    int
}

func joinDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func joinFloats(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (a *app) tuneCmd() *cobra.Command {
	o := &tuneOpts{}
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Search for the election timeouts with the fastest failover that stay stable",
		Long: `tune searches a grid of election timeout ranges for the one that minimizes
failover time subject to a bound on unnecessary elections, under the given
latency and loss model.

Every candidate is a range min-max with min from --min and
max = min*(1+spread) for spread from --spread. For each, tune runs
--trials failover trials (the objective: --objective of the failover time,
p99 by default) and --stable-trials windows of --stable-for of a healthy
cluster whose leader never fails (the constraint: the election rounds
started there, all unnecessary, per server and hour of virtual time must be
at most --max-elections). Pre-vote rounds, which change no term, are
shown beside them and count too with --count-prevotes; leader changes per
hour are shown. The heartbeat is half of each min unless --heartbeat is
given (with --model hashicorp, a tenth of it).

Both measurements come with 95% confidence intervals: the objective's
from the order statistics of the failover times (distribution-free), the
rate's exact Poisson (Garwood) interval for the elections counted over the
node-hours simulated. A candidate meets the bound when the rate's whole
interval is at or below it, exceeds it when the interval is above it, and
is uncertain otherwise. While the decision is close (the runner-up's
objective interval overlaps the best one's, or a candidate that could win
is uncertain) tune doubles the trials of those candidates, up to
--max-rounds times, continuing their random streams; if that does not
settle it, it says what it cannot tell apart.

It prints one line per candidate, the recommendation with its intervals,
and the runner-up with its margin. Small minimums fail fast but, with a
long-tailed latency (lognormal) or loss, followers miss heartbeats and
start elections although the leader is alive.`,
		Example: `  raftsim tune --latency lognormal:5ms,0.8
  raftsim tune --latency lognormal:2ms,1 --loss 0.01 --max-elections 0.5 --objective p90
  raftsim tune --latency lognormal:5ms,0.8 --prevote --count-prevotes --max-elections 2
  raftsim tune --min 100ms,150ms,200ms --spread 0.5,1 --stable-for 30m --json
  raftsim tune --model hashicorp --nodes 3 --min 50ms,100ms,200ms --latency normal:1ms,0.5ms --csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runTune(cmd, o) },
	}
	addModelFlags(cmd, &o.opts, false)
	f := cmd.Flags()
	f.DurationVar(&o.heartbeat, "heartbeat", 0, "leader heartbeat interval, below every --min (0: half of each min; a tenth with --model hashicorp)")
	f.IntVar(&o.trials, "trials", 1000, "failover trials per candidate")
	f.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same output, whatever the number of workers")
	f.IntVar(&o.workers, "workers", 0, "parallel workers (0: GOMAXPROCS); changes speed, never results")
	f.BoolVar(&o.json, "json", false, "print JSON Lines (one object per candidate, then the verdict) instead of a table")
	f.BoolVar(&o.csv, "csv", false, "print CSV (one row per candidate) instead of a table")
	f.IntVar(&o.maxRounds, "max-rounds", experiment.DefaultTuneRounds, "refinement rounds at most: while the decision is close, double the trials of the candidates it hinges on (0: none)")
	f.StringVar(&o.mins, "min", joinDurations(experiment.DefaultTuneMins), "candidate minimum election timeouts, comma-separated `durations`")
	f.StringVar(&o.spreads, "spread", joinFloats(experiment.DefaultTuneSpreads), "candidate range widths as `fractions` of min (max = min*(1+spread)), comma-separated; 0 means no randomness (--model hashicorp: 1)")
	f.StringVar(&o.objective, "objective", "p99", "failover statistic to minimize: "+strings.Join(experiment.Objectives, ", "))
	f.Float64Var(&o.maxElections, "max-elections", 1, "largest acceptable rate of unnecessary elections, per server and hour (`N` per node-hour)")
	f.DurationVar(&o.stableFor, "stable-for", experiment.DefaultStableFor, "virtual length of each stable window")
	f.IntVar(&o.stableTrials, "stable-trials", 6, "stable windows per candidate")
	f.BoolVar(&o.countPV, "count-prevotes", false, "let --max-elections bound election plus pre-vote rounds (default: election rounds only)")
	return cmd
}

// tuneFlags names the flag that sets each TuneConfig field, and each
// Setup field a candidate can break.
var tuneFlags = map[string]string{
	"Objective": "objective", "MaxElectionsPerNodeHour": "max-elections", "Spreads": "spread", "Mins": "min",
	"StableFor": "stable-for", "StableTrials": "stable-trials", "FailoverTrials": "trials",
	"TimeoutMin": "min", "TimeoutMax": "spread", "Heartbeat": "heartbeat",
	"Nodes": "nodes", "Latency": "latency", "Disk": "disk", "TimerLateness": "lateness", "Loss": "loss", "Duplicate": "dup", "MaxTime": "max-time",
}

func (a *app) runTune(cmd *cobra.Command, o *tuneOpts) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	f := cmd.Flags()
	if o.stableFor <= 0 {
		return flagError("stable-for", "must be positive, got %v", o.stableFor)
	}
	if o.stableTrials < 1 || o.stableTrials > 1_000_000 {
		return flagError("stable-trials", "must be in [1, 1000000], got %d", o.stableTrials)
	}
	var mins []time.Duration
	for _, p := range strings.Split(o.mins, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return flagError("min", "%q is not a duration (e.g. 150ms)", p)
		}
		mins = append(mins, d)
	}
	var spreads []float64
	if f.Changed("spread") {
		for _, p := range strings.Split(o.spreads, ",") {
			x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return flagError("spread", "%q is not a number (e.g. 0.5)", p)
			}
			spreads = append(spreads, x)
		}
	}
	base, model, err := o.setup(cmd)
	if err != nil {
		return err
	}
	cfg := experiment.TuneConfig{
		Base: base, Mins: mins, Spreads: spreads, Objective: o.objective,
		MaxElectionsPerNodeHour: o.maxElections, FailoverTrials: o.trials,
		StableTrials: o.stableTrials, StableFor: o.stableFor, CountPreVotes: o.countPV,
	}
	cfg.Base.Heartbeat = o.heartbeat
	if err := model.Tune(&cfg); err != nil {
		return configError(err, tuneFlags, "model")
	}
	if err := cfg.Validate(); err != nil {
		return configError(err, tuneFlags, "model")
	}
	if o.maxRounds < 0 {
		return flagError("max-rounds", "must not be negative (0: no refinement rounds), got %d", o.maxRounds)
	}
	cfg.MaxRounds = o.maxRounds
	if o.maxRounds == 0 {
		cfg.MaxRounds = -1
	}
	if a.shard.n > 0 && o.maxRounds != 0 {
		return flagError("shard", "needs --max-rounds 0 with tune: refinement rounds depend on the results of every shard")
	}
	start := time.Now()
	var update func(done, total int)
	finish := func() {}
	runner := func(ctx context.Context, round int, jobs []sim.Job, opts sim.RunOptions) sim.Accumulated {
		switch {
		case a.merged != nil:
			return a.mergedJobs(jobs)
		case a.shard.n > 0:
			labels := make([]string, len(jobs))
			for i := range labels {
				labels[i] = "tune"
			}
			return sim.Accumulated{Err: a.runShardJobs(ctx, "tune", jobs, labels, opts, false)}
		}
		what := "tune"
		if round > 0 {
			what = fmt.Sprintf("tune: refinement round %d of at most %d", round, o.maxRounds)
		}
		update, finish = a.progressBar(what, false)
		opts.Progress = update
		accs := sim.Accumulate(ctx, jobs, opts)
		finish()
		return accs
	}
	r, err := experiment.TuneWith(cmd.Context(), cfg, sim.RunOptions{Seed: o.seed, Workers: o.workers}, runner)
	interrupted, done := false, 0
	var te *sim.TrialError
	var ue usageError
	switch {
	case errors.Is(err, errShardWritten), errors.As(err, &ue):
		return err
	case errors.As(err, &te):
		return trialFailure{what: "tune", err: te}
	case err != nil && cmd.Context().Err() != nil:
		interrupted = true
		for _, c := range r.Candidates {
			if c.Complete {
				done++
			}
		}
		fmt.Fprintf(a.stderr, "raftsim: interrupted: showing the %d of %d candidates that finished (the others are marked partial)\n", done, len(r.Candidates))
		// A search stopped midway recommends nothing: the candidates
		// it did not finish might have won.
		r.Best, r.RunnerUp = -1, -1
	case err != nil:
		return err
	case a.merged == nil && (time.Since(start) > time.Second || a.forceProgress):
		w := o.workers
		if w <= 0 {
			w = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(a.stderr, "raftsim: %d candidates in %.1fs on %d workers\n", len(r.Candidates), time.Since(start).Seconds(), w)
	}
	m := o.partialMeta(interrupted, nil)
	switch {
	case o.json:
		err = m.WriteTuneJSON(a.stdout, r)
	case o.csv:
		err = m.WriteTuneCSV(a.stdout, r)
	default:
		hb := "half of min"
		switch {
		case o.heartbeat > 0:
			hb = o.heartbeat.String()
		case cfg.HeartbeatRatio > 0:
			hb = strconv.FormatFloat(cfg.HeartbeatRatio, 'g', -1, 64) + " of min"
		}
		desc := base
		if cfg.SettleRatio > 0 {
			desc.Settle = 0
			hb += ", crash T+[0, T/5) after the leader is known (harness, T = min)"
		}
		fmt.Fprintf(a.stdout, "tune: %s, heartbeat %s, %s, seed %d\n", desc.Describe(), hb, shortLogsNote(desc, false), o.seed)
		fmt.Fprintf(a.stdout, "objective: %s of failover time over %d trials; constraint: at most %g unnecessary %s per node-hour over %d x %v stable windows (95%% intervals)\n",
			o.objective, o.trials, o.maxElections, r.RoundsCounted(), o.stableTrials, o.stableFor)
		switch err = report.TuneTable(r).Write(a.stdout); {
		case err != nil:
		case interrupted:
			err = writeInterrupted(a.stdout, done, len(r.Candidates), "candidates")
		default:
			_, err = fmt.Fprintln(a.stdout, report.Recommendation(r))
		}
	}
	if err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}
