package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/engines/realtime"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/twosample"
)

// compareOpts are compare's own flags.
type compareOpts struct {
	table     bool
	bootstrap bool
	alpha     float64
	perServer bool
}

func (a *app) compareCmd() *cobra.Command {
	o := &opts{}
	co := &compareOpts{}
	cmd := &cobra.Command{
		Use:   "compare",
		Short: "Run a setup on raftick's virtual model and on its real-time engine, and test whether they agree",
		Long: `compare runs one failover setup (the flags of raftsim failover, --model
plain unless given) on --engine raftick, the virtual model users tune with,
and on --engine raftick-realtime, raftick's own nodes on real-time wheels as
deployed, and prints both distributions, their difference at each
percentile, and the two-sample Kolmogorov–Smirnov test with its p-value: a
p-value below --alpha says the engines differ by more than noise.

It also prints the lateness the real-time engine measured of itself (how
late its wheels ran a callback past the deadline; how late its network
delivered a message), and a third run: the virtual model with those
measurements added, the timer lateness to every election timeout (as
--lateness empirical:...) and the delivery lateness to every message's
latency, tested against the real-time run too.

--table runs the rows of the real-time evidence in docs/simulator.md (four
timeout ranges, fixed and log-normal latency, with and without 5% loss,
pre-vote and CheckQuorum on and off) and prints one line per row with the
targets: p50 and p90 within 5%, p99 within 10%, the test not rejecting.
The real-time trials take real time: about 0.4s each at 150-300ms.`,
		Example: `  raftsim compare --timeout 50-100ms --latency fixed:1ms --trials 1000
  raftsim compare --timeout 12-24ms --latency lognormal:1ms,0.5 --loss 0.05 --prevote --checkquorum
  raftsim compare --table --trials 1000`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runCompare(cmd, o, co) },
	}
	addModelFlags(cmd, o, true)
	f := cmd.Flags()
	f.IntVar(&o.trials, "trials", 1000, "number of trials on each engine")
	f.Uint64Var(&o.seed, "seed", 1, "random seed (the real-time engine's draws are seeded, its interleaving is not)")
	f.IntVar(&o.workers, "workers", 0, fmt.Sprintf("real-time trials run at a time (0: %d); the virtual engine uses every core", realtimeWorkers))
	f.BoolVar(&co.table, "table", false, "run the rows of docs/simulator.md's real-time evidence instead of one setup")
	f.BoolVar(&co.bootstrap, "bootstrap", false, "compare cold starts (raftsim bootstrap) instead of failovers")
	f.Float64Var(&co.alpha, "alpha", 0.01, "significance level of the two-sample test, in (0, 1)")
	f.BoolVar(&co.perServer, "wheel-per-server", false, "give each real-time server a wheel of its own (as deployed servers have) instead of one wheel for the group")
	addShortLogsFlag(cmd, o, "the model's, 2 of 4 survivors")
	return cmd
}

// A comparison is one setup on both engines, and on the virtual engine
// with the real-time engine's measured lateness.
type comparison struct {
	label                 string
	setup                 experiment.Setup
	virtual, real, withLt experiment.Result
	ks, ksLt              twosample.KSResult
	timer, delivery       realtime.Lateness
	took                  time.Duration
	load0, load1          string
	runs                  int // runs of the three that finished
}

// compareInterrupted returns err, or after an interrupt (ctx cancelled)
// says how many of the comparison's runs finished and returns
// errInterrupted: a comparison with a run missing has no result to print.
func (a *app) compareInterrupted(ctx context.Context, err error, done, total int) error {
	if ctx.Err() == nil {
		return err
	}
	fmt.Fprintf(a.stdout, "interrupted: %d of %d runs finished; no comparison without all of them\n", done, total)
	return errInterrupted
}

func (a *app) runCompare(cmd *cobra.Command, o *opts, co *compareOpts) error {
	o.engine = realtimeEngine
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	if err := a.realtimeDefaults(cmd, o); err != nil {
		return err
	}
	if !(co.alpha > 0 && co.alpha < 1) {
		return flagError("alpha", "must be in (0, 1), got %g", co.alpha)
	}
	if co.table {
		for _, flag := range []string{"timeout", "latency", "loss", "prevote", "checkquorum", "model"} {
			if cmd.Flags().Changed(flag) {
				return flagError(flag, "cannot be combined with --table (its rows set it)")
			}
		}
		return a.compareTable(cmd.Context(), o, co)
	}
	s, _, err := o.setup(cmd)
	if err != nil {
		return err
	}
	if err := s.Measurable(aliveOf(s, co.bootstrap)); err != nil {
		return configError(err, setupFlags(cmd), "model")
	}
	if err := realtime.Check(s); err != nil {
		return configError(err, setupFlags(cmd), "engine")
	}
	c, err := a.compare(cmd.Context(), s, s.Describe(), o, co)
	if err != nil {
		return a.compareInterrupted(cmd.Context(), err, c.runs, 3)
	}
	return writeComparison(a.stdout, c, co)
}

// compare runs s on both engines (and the virtual one with the measured
// lateness).
func (a *app) compare(ctx context.Context, s experiment.Setup, label string, o *opts, co *compareOpts) (comparison, error) {
	c := comparison{label: label, setup: s}
	mk := func(s experiment.Setup, stats *realtime.Stats) experiment.Experiment {
		e := realtime.Engine{Stats: stats, WheelPerServer: co.perServer}
		switch {
		case stats != nil && co.bootstrap:
			return realtime.Bootstrap{Setup: s, Engine: e}
		case stats != nil:
			return realtime.Failover{Setup: s, Engine: e}
		case co.bootstrap:
			return experiment.Bootstrap{Setup: s}
		}
		return experiment.Failover{Setup: s}
	}
	run := func(what string, e experiment.Experiment, workers int) (experiment.Result, error) {
		update, finish := a.progress(what)
		rs, err := experiment.Run(ctx, []experiment.Experiment{e}, []int{o.trials}, sim.RunOptions{Seed: o.seed, Workers: workers, Progress: update})
		finish()
		if err != nil {
			return experiment.Result{}, err
		}
		return rs[0], nil
	}
	var err error
	if c.virtual, err = run("virtual "+label, mk(s, nil), 0); err != nil {
		return c, err
	}
	c.runs++
	stats := &realtime.Stats{}
	c.load0 = loadavg()
	start := time.Now()
	if c.real, err = run("real time "+label, mk(s, stats), o.engineWorkers()); err != nil {
		return c, err
	}
	c.runs++
	c.took = time.Since(start)
	c.load1 = loadavg()
	c.timer, c.delivery = stats.Timer(), stats.Delivery()
	lt := s
	lt.TimerLateness = sim.Empirical(quantiles(c.timer.Sample, 1000))
	late := sim.Empirical(quantiles(c.delivery.Sample, 1000))
	if lt.Latency == nil {
		lt.Latency = late
	} else {
		lt.Latency = realtime.Plus(lt.Latency, late)
	}
	if c.withLt, err = run("virtual+lateness "+label, mk(lt, nil), 0); err != nil {
		return c, err
	}
	c.runs++
	c.ks = twosample.KS(c.virtual.Summary.Times(), c.real.Summary.Times())
	c.ksLt = twosample.KS(c.withLt.Summary.Times(), c.real.Summary.Times())
	return c, nil
}

// quantiles returns n evenly spaced quantiles of sorted (all of it if
// shorter), so that an empirical model of it stays small.
func quantiles(sorted []time.Duration, n int) []time.Duration {
	if len(sorted) <= n {
		if len(sorted) == 0 {
			return []time.Duration{0}
		}
		return sorted
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = sorted[(2*i+1)*len(sorted)/(2*n)]
	}
	return out
}

// loadavg returns the first three fields of /proc/loadavg, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// relDiff returns (b-a)/a.
func relDiff(a, b time.Duration) float64 {
	if a == 0 {
		return 0
	}
	return float64(b-a) / float64(a)
}

// meets reports the targets: p50 and p90 within 5%, p99 within 10%, and
// the test not rejecting at alpha.
func (c comparison) meets(alpha float64) (ok bool, why string) {
	v, r := c.virtual.Summary, c.real.Summary
	var miss []string
	if d := relDiff(v.P50, r.P50); d > 0.05 || d < -0.05 {
		miss = append(miss, "p50")
	}
	if d := relDiff(v.P90, r.P90); d > 0.05 || d < -0.05 {
		miss = append(miss, "p90")
	}
	if d := relDiff(v.P99, r.P99); d > 0.10 || d < -0.10 {
		miss = append(miss, "p99")
	}
	if c.ks.Rejects(alpha) {
		miss = append(miss, "KS")
	}
	if len(miss) == 0 {
		return true, "yes"
	}
	return false, "no: " + strings.Join(miss, ",")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

func writeComparison(w io.Writer, c comparison, co *compareOpts) error {
	fmt.Fprintf(w, "%s: %s\n", c.virtual.Experiment, c.label)
	fmt.Fprintf(w, "real time: %d trials in %.1fs; load average %s before, %s after\n\n", c.real.Trials, c.took.Seconds(), c.load0, c.load1)
	rows := []experiment.Result{c.virtual, c.real, c.withLt}
	rows[0].Label, rows[1].Label, rows[2].Label = "virtual", "real time", "virtual+lateness"
	if err := report.SummaryTable(rows, false).Write(w); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\npercentile\tvirtual\treal time\tdifference\t\tvirtual+lateness\tdifference\t")
	v, r, l := c.virtual.Summary, c.real.Summary, c.withLt.Summary
	for _, p := range []struct {
		name    string
		v, r, l time.Duration
	}{{"p10", v.P10, r.P10, l.P10}, {"p50", v.P50, r.P50, l.P50}, {"mean", v.Mean, r.Mean, l.Mean}, {"p90", v.P90, r.P90, l.P90}, {"p99", v.P99, r.P99, l.P99}, {"max", v.Max, r.Max, l.Max}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.2fms\t%+.1f%%\t%s\t%+.1f%%\t\n", p.name, ms(p.v), ms(p.r), float64(p.r-p.v)/1e6, 100*relDiff(p.v, p.r), ms(p.l), 100*relDiff(p.l, p.r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nKolmogorov–Smirnov, virtual vs real time: D = %.4f, p = %.3g (n = %d, %d): %s at α = %g\n", c.ks.D, c.ks.P, c.ks.N, c.ks.M, verdict(c.ks, co.alpha), co.alpha)
	fmt.Fprintf(w, "Kolmogorov–Smirnov, virtual+lateness vs real time: D = %.4f, p = %.3g: %s\n", c.ksLt.D, c.ksLt.P, verdict(c.ksLt, co.alpha))
	ok, why := c.meets(co.alpha)
	_ = ok
	fmt.Fprintf(w, "targets (p50, p90 within 5%%, p99 within 10%%, test not rejecting): %s\n", why)
	fmt.Fprintf(w, "\nreal-time lateness measured: timers %s; message deliveries %s\n", lateness(c.timer), lateness(c.delivery))
	return nil
}

func verdict(k twosample.KSResult, alpha float64) string {
	if k.Rejects(alpha) {
		return "rejects equal distributions"
	}
	return "does not reject"
}

func lateness(l realtime.Lateness) string {
	if l.Count == 0 {
		return "none measured"
	}
	return fmt.Sprintf("n=%d p50 %s p90 %s p99 %s max %s", l.Count, ms(l.Quantile(0.5)), ms(l.Quantile(0.9)), ms(l.Quantile(0.99)), ms(l.Sample[len(l.Sample)-1]))
}

// A tableRow is one row of the real-time evidence: a timeout range, a
// latency, the loss, and pre-vote with CheckQuorum or not (--model
// plain).
type tableRow struct {
	timeout, latency string
	loss             float64
	pvcq             bool
}

// tableRows are the rows of docs/simulator.md's real-time evidence: each
// timeout range once with fixed latency and once with log-normal latency
// and 5% loss, pre-vote and CheckQuorum alternating.
var tableRows = []tableRow{
	{"150-300ms", "fixed:1ms", 0, false},
	{"150-300ms", "lognormal:1ms,0.5", 0.05, true},
	{"50-100ms", "fixed:1ms", 0, true},
	{"50-100ms", "lognormal:1ms,0.5", 0.05, false},
	{"12-24ms", "fixed:1ms", 0, false},
	{"12-24ms", "lognormal:1ms,0.5", 0.05, true},
	{"150-155ms", "fixed:1ms", 0, true},
	{"150-155ms", "lognormal:1ms,0.5", 0.05, false},
}

func (r tableRow) setup(nodes int, maxTime time.Duration) (experiment.Setup, error) {
	s := experiment.PlainModel()
	s.Nodes = nodes
	s.MaxTime = maxTime
	lo, hi, err := experiment.ParseRange(r.timeout)
	if err != nil {
		return s, err
	}
	s.TimeoutMin, s.TimeoutMax = lo, hi
	if s.Latency, err = experiment.OptionalLatency(r.latency); err != nil {
		return s, err
	}
	s.Loss = r.loss
	s.PreVote, s.CheckQuorum = r.pvcq, r.pvcq
	return s, s.Validate()
}

func (r tableRow) label() string {
	l := r.timeout + " " + r.latency
	if r.loss > 0 {
		l += fmt.Sprintf(" loss %g%%", 100*r.loss)
	}
	if r.pvcq {
		return l + " prevote+checkquorum"
	}
	return l + " plain"
}

// compareTable runs tableRows and prints a line per row.
func (a *app) compareTable(ctx context.Context, o *opts, co *compareOpts) error {
	t := report.Table{Header: []string{"row", "p50 v/rt", "Δ", "p90 v/rt", "Δ", "p99 v/rt", "Δ", "KS D", "p", "targets", "+lateness p", "timer late p50/p99", "took", "load before/after"}}
	start := time.Now()
	met := 0
	for _, r := range tableRows {
		s, err := r.setup(o.nodes, o.maxTime)
		if err != nil {
			return err
		}
		c, err := a.compare(ctx, s, r.label(), o, co)
		if err != nil {
			return a.compareInterrupted(ctx, err, 3*len(t.Rows)+c.runs, 3*len(tableRows))
		}
		v, rt := c.virtual.Summary, c.real.Summary
		ok, why := c.meets(co.alpha)
		if ok {
			met++
		}
		pair := func(a, b time.Duration) string { return fmt.Sprintf("%.1f/%.1f", float64(a)/1e6, float64(b)/1e6) }
		pct := func(a, b time.Duration) string { return fmt.Sprintf("%+.1f%%", 100*relDiff(a, b)) }
		t.Rows = append(t.Rows, []string{r.label(), pair(v.P50, rt.P50), pct(v.P50, rt.P50), pair(v.P90, rt.P90), pct(v.P90, rt.P90),
			pair(v.P99, rt.P99), pct(v.P99, rt.P99), fmt.Sprintf("%.3f", c.ks.D), fmt.Sprintf("%.3g", c.ks.P), why, fmt.Sprintf("%.3g", c.ksLt.P),
			fmt.Sprintf("%.2f/%.2fms", float64(c.timer.Quantile(0.5))/1e6, float64(c.timer.Quantile(0.99))/1e6),
			fmt.Sprintf("%.0fs", c.took.Seconds()), c.load0 + " / " + c.load1})
		fmt.Fprintf(a.stderr, "raftsim: compare: %s: %s (%.0fs)\n", r.label(), why, c.took.Seconds())
	}
	fmt.Fprintf(a.stdout, "failover, raftick (virtual) vs raftick-realtime, %d trials each, seed %d, %d real-time workers, model plain; times in ms\n", o.trials, o.seed, o.engineWorkers())
	if err := t.Write(a.stdout); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "%d of %d rows meet the targets (p50, p90 within 5%%, p99 within 10%%, KS not rejecting at α = %g); %.0fs in all\n", met, len(tableRows), co.alpha, time.Since(start).Seconds())
	return nil
}
