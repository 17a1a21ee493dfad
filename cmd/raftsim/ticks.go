package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

// ticksOpts are the flags of raftsim ticks.
type ticksOpts struct {
	opts
	ticks        string
	stableTrials int
	window       time.Duration
}

func (a *app) ticksCmd() *cobra.Command {
	o := &ticksOpts{}
	cmd := &cobra.Command{
		Use:   "ticks",
		Short: "What exact timers buy over tick-quantized ones: failover, split votes, needless elections",
		Long: `ticks runs the same cluster with exact timers (raftick's wheel fires each
timer at its deadline) and with timers quantized to ticks (etcd raft,
dragonboat and CockroachDB count every timeout in ticks of a fixed period,
each server with its own phase), and reports for each: the failover time
(p50, p99: from the leader's crash until every survivor accepted a new
one), the split-vote rate of those failovers, and the elections a healthy
cluster starts needlessly per node-hour (stable windows of --window under
the latency and loss model, with an exact 95% Poisson interval).

Every row differs only in its tick: timeouts are drawn from the same range
(in whole ticks with a tick), the heartbeat is the same, timer granularity
and lateness are none. The timeouts and the heartbeat must be whole
numbers of every tick; the default range 1s-2s with a heartbeat of 500ms
fits ticks of 1, 10, 100 and 500ms. Deterministic for a seed.`,
		Example: `  raftsim ticks
  raftsim ticks --latency lognormal:5ms,0.8 --loss 0.05 --plot ticks.svg
  raftsim ticks --timeout 150ms-300ms --heartbeat 50ms --ticks 0,1ms,10ms,50ms --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runTicks(cmd, o) },
	}
	addModelFlags(cmd, &o.opts, true)
	addRunFlags(cmd, &o.opts, 1000, true)
	f := cmd.Flags()
	setDefault(f.Lookup("timeout"), "1s-2s")
	setDefault(f.Lookup("model"), "plain")
	f.StringVar(&o.ticks, "ticks", "0,1ms,10ms,100ms,500ms", "tick sizes to compare, comma-separated; 0 or exact is exact timers")
	f.IntVar(&o.stableTrials, "stable-trials", 20, "stable windows per tick size (for the needless elections)")
	f.DurationVar(&o.window, "window", time.Minute, "virtual time of one stable window")
	return cmd
}

// setDefault changes a registered flag's default value (and its help).
func setDefault(f *pflag.Flag, v string) {
	_ = f.Value.Set(v)
	f.DefValue = v
}

// parseTicks parses the --ticks list.
func parseTicks(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "0" || p == "exact" {
			out = append(out, 0)
			continue
		}
		d, err := time.ParseDuration(p)
		if err != nil || d < 0 {
			return nil, flagError("ticks", "%q is not a tick size (want e.g. 0,10ms,100ms)", p)
		}
		out = append(out, d)
	}
	return out, nil
}

func (a *app) runTicks(cmd *cobra.Command, o *ticksOpts) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	if a.shard.n > 0 || a.merged != nil {
		return flagError("shard", "is not available with ticks (its rows are run together); use --trials")
	}
	if o.trace {
		return flagError("trace", "is not available with ticks; trace one row with raftsim failover --tick")
	}
	if o.stableTrials < 1 {
		return flagError("stable-trials", "must be at least 1, got %d", o.stableTrials)
	}
	if o.window <= 0 {
		return flagError("window", "must be positive, got %v", o.window)
	}
	ticks, err := parseTicks(o.ticks)
	if err != nil {
		return err
	}
	s, _, err := o.setup(cmd)
	if err != nil {
		return err
	}
	tc := experiment.TickCost{Setup: s, Ticks: ticks, For: o.window}
	if err := tc.Validate(); err != nil {
		flags := map[string]string{"Ticks": "ticks", "For": "window"}
		for k, v := range setupFlags(cmd) {
			flags[k] = v
		}
		return configError(err, flags, "model")
	}
	if err := s.Measurable(s.Nodes - 1); err != nil {
		return configError(err, setupFlags(cmd), "model")
	}
	update, finish := a.progress("ticks")
	start := time.Now()
	rows, err := experiment.RunTickCost(cmd.Context(), tc, o.trials, o.stableTrials, sim.RunOptions{Seed: o.seed, Workers: o.workers, Progress: update})
	finish()
	interrupted := false
	var te *sim.TrialError
	switch {
	case errors.As(err, &te):
		return trialFailure{what: "ticks", err: te}
	case err != nil && cmd.Context().Err() != nil:
		interrupted = true
		fmt.Fprintln(a.stderr, "raftsim: interrupted: showing the trials that finished")
	case err != nil:
		return err
	}
	if time.Since(start) > time.Second || a.forceProgress {
		fmt.Fprintf(a.stderr, "raftsim: ticks ran in %.1fs\n", time.Since(start).Seconds())
	}
	rs := make([]experiment.Result, len(rows))
	for i, r := range rows {
		rs[i] = r.Failover
	}
	model := s.Describe() + fmt.Sprintf(", heartbeat %v, %s", rs[0].Setup.Heartbeat, shortLogsNote(s, false))
	requested := make([]int, len(rows))
	for i := range requested {
		requested[i] = o.trials
	}
	m := o.partialMeta(interrupted, requested)
	switch {
	case o.json:
		err = m.WriteTicksJSON(a.stdout, rows)
	case o.csv:
		err = m.WriteCSV(a.stdout, rs)
	default:
		fmt.Fprintf(a.stdout, "ticks: exact timers against ticks; %s; timeout %s, stable windows %d x %v, seed %d\n",
			model, experiment.RangeLabel(s.TimeoutMin, s.TimeoutMax), o.stableTrials, o.window, o.seed)
		if err = report.TicksTable(rows).Write(a.stdout); err == nil && interrupted {
			err = writeInterrupted(a.stdout, finishedTrials(rs), sum(requested), "failover trials")
		}
	}
	if err != nil {
		return err
	}
	fig := figure(&o.opts, "Failover with exact and tick-quantized timers", model, []plot.Panel{{Results: rs}})
	if err := writePlot(a.stderr, &o.opts, fig, interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}
