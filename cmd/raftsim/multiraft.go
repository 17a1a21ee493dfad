package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/multiraftsim"
	"github.com/raftick/raftick/sim/report"
)

type multiraftOpts struct {
	groups, nodes, replicas int
	active                  float64
	hibernateAfter          time.Duration
	coalesce                string
	timeout                 string
	heartbeat               time.Duration
	latency                 string
	warmup, window, settle  time.Duration
	seed                    uint64
	json                    bool
	engine                  string
}

// multiraftFlags names the flag of each multiraftsim.Config field.
var multiraftFlags = map[string]string{
	"Groups": "groups", "Nodes": "nodes", "Replicas": "replicas", "Active": "active",
	"HibernateAfter": "hibernate-after", "TimeoutMin": "timeout", "Heartbeat": "heartbeat",
	"Window": "window",
}

func (a *app) multiraftCmd() *cobra.Command {
	o := &multiraftOpts{}
	cmd := &cobra.Command{
		Use:   "multiraft",
		Short: "Crash one node of a multi-raft cluster with hibernating groups and time the recovery",
		Long: `multiraft runs --groups Raft groups of --replicas replicas over --nodes hosts
(multiraft.Host) on one virtual wheel. Group g lives on nodes g..g+R-1 (mod
N) and starts with the first as leader, so every node leads the same number
of groups. A --active fraction of the groups is busy (every replica touched
every heartbeat interval); the others hibernate after --hibernate-after of
idleness and cost no timer work. After --warmup, a first --window measures
the message and timer rates; then node 1 crashes. The run reports the time
from the crash until each group node 1 led has a new leader (p50, p99, max
over those groups), the elections in groups it did not lead (should be 0),
and a second window of rates, --settle after the crash.

Messages are election and hibernation messages as the groups send them
(before coalescing); batches are what the transport carries (after
coalescing, with liveness messages). Timer events are wheel timers fired,
network deliveries not counted.`,
		Example: `  raftsim multiraft --groups 100000 --nodes 5 --active 0.01 --hibernate-after 1s
  raftsim multiraft --groups 100000 --active 1 --hibernate-after 0 --coalesce off
  raftsim multiraft --groups 20000 --timeout 150ms-300ms --latency uniform:1ms,5ms --json
  raftsim multiraft --groups 10000 --engine realtime`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runMultiraft(cmd, o) },
	}
	d := multiraftsim.DefaultConfig()
	f := cmd.Flags()
	f.IntVar(&o.groups, "groups", d.Groups, "number of Raft groups")
	f.IntVar(&o.nodes, "nodes", d.Nodes, "number of nodes (hosts)")
	f.IntVar(&o.replicas, "replicas", d.Replicas, "replicas per group")
	f.Float64Var(&o.active, "active", d.Active, "`FRACTION` of the groups that are busy, in [0, 1]")
	f.DurationVar(&o.hibernateAfter, "hibernate-after", d.HibernateAfter, "idle time after which a group hibernates (0: never)")
	f.StringVar(&o.coalesce, "coalesce", "on", "coalesce heartbeats per peer node: on or off")
	f.StringVar(&o.timeout, "timeout", "1s-2s", "election timeout range `min-max`")
	f.DurationVar(&o.heartbeat, "heartbeat", 0, "heartbeat interval (0: a tenth of the minimum timeout)")
	f.StringVar(&o.latency, "latency", "fixed:1ms", "one-way batch latency `spec` (see raftsim failover --help), or none")
	f.DurationVar(&o.warmup, "warmup", d.Warmup, "virtual time before the first measurement")
	f.DurationVar(&o.window, "window", d.Window, "length of each measurement window")
	f.DurationVar(&o.settle, "settle", d.Settle, "virtual time from the crash to the second measurement")
	f.Uint64Var(&o.seed, "seed", d.Seed, "random seed: the same seed gives the same output")
	f.BoolVar(&o.json, "json", false, "print one JSON object (JSON Lines) instead of a table")
	f.StringVar(&o.engine, "engine", "virtual", "virtual (one virtual wheel) or realtime (the hosts on a real-time wheel, in real time: --warmup + 2 --window + --settle)")
	return cmd
}

func (a *app) runMultiraft(cmd *cobra.Command, o *multiraftOpts) error {
	c := multiraftsim.DefaultConfig()
	c.Groups, c.Nodes, c.Replicas, c.Active = o.groups, o.nodes, o.replicas, o.active
	c.HibernateAfter, c.Heartbeat, c.Seed = o.hibernateAfter, o.heartbeat, o.seed
	c.Warmup, c.Window, c.Settle = o.warmup, o.window, o.settle
	switch o.engine {
	case "virtual":
	case "realtime":
		c.Realtime = true
	default:
		return flagError("engine", "want virtual or realtime, got %q", o.engine)
	}
	switch o.coalesce {
	case "on":
		c.Coalesce = true
	case "off":
		c.Coalesce = false
	default:
		return flagError("coalesce", "want on or off, got %q", o.coalesce)
	}
	var err error
	if c.TimeoutMin, c.TimeoutMax, err = experiment.ParseRange(o.timeout); err != nil {
		return configError(err, nil, "timeout")
	}
	if c.Latency, err = latencyFlag("latency", o.latency); err != nil {
		return err
	}
	if c.Warmup < 0 {
		return flagError("warmup", "must not be negative, got %v", c.Warmup)
	}
	if c.Settle <= 0 {
		return flagError("settle", "must be positive, got %v", c.Settle)
	}
	if err := c.Validate(); err != nil {
		return configError(err, multiraftFlags, "window")
	}
	if err := checkMultiraftCost(c); err != nil {
		return err
	}
	if a.shard.n > 0 {
		return flagError("shard", "is not available with multiraft: it runs one cluster, which does not split into shares")
	}
	a.markStarted()
	update, finish := a.progressBar("multiraft", false)
	r, err := multiraftsim.RunProgress(cmd.Context(), c, update)
	finish()
	if err != nil && cmd.Context().Err() == nil {
		return err
	}
	if err != nil {
		// Interrupted: nothing was measured, and the output says so.
		if o.json {
			if err := multiraftRecord(r, c, true).WriteJSON(a.stdout); err != nil {
				return err
			}
		} else {
			a.multiraftHeader(c, o)
			if err := writeInterrupted(a.stdout, 0, 1, "runs"); err != nil {
				return err
			}
		}
		return errInterrupted
	}
	if r.Safety != nil {
		return fmt.Errorf("multiraft: election safety violated (seed %d): %w", c.Seed, r.Safety)
	}
	if o.json {
		return multiraftRecord(r, c, false).WriteJSON(a.stdout)
	}
	w := a.stdout
	a.multiraftHeader(c, o)
	fmt.Fprintf(w, "node %d crashed, leading %d groups; %d of them have a leader again (%d woken by liveness)\n",
		r.Crashed, r.Affected, r.Recovered, r.LivenessWakes)
	fmt.Fprintf(w, "recovery: p50 %v  p99 %v  max %v  (2x max election timeout: %v)\n",
		r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), r.Max.Round(time.Millisecond), 2*c.TimeoutMax)
	fmt.Fprintf(w, "groups it did not lead that elected a leader: %d\n", r.UnaffectedNewLeaders)
	if c.Realtime {
		fmt.Fprintf(w, "real-time wheel after the crash: a probe timer late by p50 %v  p99 %v  max %v; %d fires over a tick late, max %v\n",
			r.Lateness[0].Round(time.Microsecond), r.Lateness[1].Round(time.Microsecond), r.Lateness[2].Round(time.Microsecond),
			r.Wheel.LateFires, r.Wheel.MaxLateness.Round(time.Microsecond))
	}
	if r.BehindSpells > 0 {
		fmt.Fprintf(w, "surviving hosts fell behind %d times and let %d election timers run on (overload handling)\n", r.BehindSpells, r.LaggingSkips)
	}
	fmt.Fprintf(w, "%-14s %14s %14s %14s %14s\n", "per second", "messages", "batches", "timer events", "deliveries")
	for _, row := range []struct {
		name string
		r    multiraftsim.Rates
	}{{"before crash", r.Before}, {"after crash", r.After}} {
		fmt.Fprintf(w, "%-14s %14.0f %14.0f %14.0f %14.0f\n", row.name, row.r.Messages, row.r.Batches, row.r.TimerEvents, row.r.Deliveries)
	}
	clock := map[bool]string{false: "virtual time", true: "real time"}[c.Realtime]
	fmt.Fprintf(w, "awake replicas before the crash: %d of %d; %v of %s\n",
		r.AwakeBefore, c.Groups*c.Replicas, r.VirtualTotal.Round(time.Millisecond), clock)
	fmt.Fprintf(a.stderr, "raftsim: %v of %s in %v\n", r.VirtualTotal.Round(time.Millisecond), clock, r.Elapsed.Round(time.Millisecond))
	if r.Recovered < r.Affected {
		return fmt.Errorf("multiraft: %d of %d groups had no new leader %v after the crash (raise --settle)", r.Affected-r.Recovered, r.Affected, c.Settle+c.Window)
	}
	return nil
}

// multiraftHeader prints the first line of the table: the run's setup.
func (a *app) multiraftHeader(c multiraftsim.Config, o *multiraftOpts) {
	fmt.Fprintf(a.stdout, "multiraft: %d groups x %d replicas on %d nodes, %.4g active, hibernate after %v, coalesce %s, timeout %v-%v, latency %v, seed %d, %s\n",
		c.Groups, c.Replicas, c.Nodes, c.Active, c.HibernateAfter, o.coalesce, c.TimeoutMin, c.TimeoutMax, c.Latency, c.Seed, map[bool]string{false: "virtual time", true: "real time"}[c.Realtime])
}

// multiraftRecord is the --json form of a result: the fields every
// raftsim record has (its one model is named "multiraft", its one trial
// the run), every parameter, and what was measured unless interrupted.
// Durations are in ms.
func multiraftRecord(r multiraftsim.Result, c multiraftsim.Config, interrupted bool) *report.Record {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	hb := c.Heartbeat
	if hb == 0 {
		hb = c.TimeoutMin / 10 // election's default: a tenth of the timeout
	}
	m := report.Meta{Tool: "raftsim", Version: version(), Command: "multiraft", Model: "multiraft", Interrupted: interrupted}
	done := 1
	if interrupted {
		done = 0
	}
	rec := m.NewRecord("multiraft", c.Seed, done, 1)
	if !interrupted {
		rates := func(x multiraftsim.Rates) map[string]float64 {
			return map[string]float64{"messages": x.Messages, "batches": x.Batches, "timer_events": x.TimerEvents, "deliveries": x.Deliveries}
		}
		rec.Add("crashed", r.Crashed)
		rec.Add("affected", r.Affected)
		rec.Add("recovered", r.Recovered)
		rec.Add("p50_ms", ms(r.P50))
		rec.Add("p99_ms", ms(r.P99))
		rec.Add("max_ms", ms(r.Max))
		rec.Add("unaffected_new_leaders", r.UnaffectedNewLeaders)
		rec.Add("liveness_wakes", r.LivenessWakes)
		rec.Add("before", rates(r.Before))
		rec.Add("after", rates(r.After))
		rec.Add("awake_before", r.AwakeBefore)
		rec.Add("virtual_ms", ms(r.VirtualTotal))
	}
	rec.AddParams([]experiment.Param{
		{Name: "groups", Value: c.Groups}, {Name: "nodes", Value: c.Nodes}, {Name: "replicas", Value: c.Replicas},
		{Name: "active", Value: c.Active}, {Name: "hibernate_after_ms", Value: ms(c.HibernateAfter)}, {Name: "coalesce", Value: c.Coalesce},
		{Name: "timeout_min_ms", Value: ms(c.TimeoutMin)}, {Name: "timeout_max_ms", Value: ms(c.TimeoutMax)},
		{Name: "heartbeat_ms", Value: ms(hb)}, {Name: "latency", Value: latencySpec(c.Latency)},
		{Name: "warmup_ms", Value: ms(c.Warmup)}, {Name: "window_ms", Value: ms(c.Window)}, {Name: "settle_ms", Value: ms(c.Settle)},
	})
	return rec
}

// latencySpec is a latency model's spec, "none" for none.
func latencySpec(l sim.Latency) string {
	if l == nil {
		return "none"
	}
	return l.String()
}
