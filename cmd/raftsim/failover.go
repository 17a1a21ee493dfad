package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/engines/hashicorp"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

func (a *app) failoverCmd() *cobra.Command {
	o := &opts{}
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Crash the leader of a stable cluster and time the election of a new one",
		Long: `failover runs the experiment of Figure 16 of the Raft paper: a stable cluster
whose leader just sent a heartbeat to every follower (so their election
timers start together, the worst case for split votes) loses its leader at
a random point of the heartbeat interval; two of the survivors have shorter
logs and cannot win. Each trial measures the time from the crash until every
survivor has accepted the new leader's first heartbeat.

With --engine hashicorp the trials run on real hashicorp/raft clusters in
real time (raftadapter), one after another, with the settings of --model
hashicorp unless --model is given: --timeout T means hashicorp's
HeartbeatTimeout = ElectionTimeout = T (timeouts in [T, 2T)), pre-vote on.
Compare with --engine raftick --model hashicorp, its simulated counterpart.

With --engine etcd the trials run on real etcd raft nodes (etcdadapter) in
virtual time, in parallel, deterministic for a seed, with the settings of
--model etcd unless --model is given: --timeout T means ElectionTick 10
ticks of T/10 (timeouts in [T, 2T)), a heartbeat of one tick, pre-vote and
CheckQuorum on; --tick, --election-tick and --heartbeat-tick set etcd's
ticks. Compare with --model etcd, its simulated counterpart.

With --engine raftick-realtime the trials run raftick's own election nodes
as deployed: on real-time wheels, over an in-process network that holds
each message for the latency model's draw in real time, with --model plain
unless --model is given, ` + realtimeWorkersNote + `. raftsim compare runs a
setup on both raftick engines and tests whether they agree.`,
		Example: `  raftsim failover --timeout 150ms-300ms
  raftsim failover --engine hashicorp --nodes 3 --timeout 100ms --trials 20
  raftsim failover --engine raftick --model hashicorp --nodes 3 --timeout 100ms --trials 2000
  raftsim failover --engine etcd --timeout 1s --trials 10000
  raftsim failover --engine raftick-realtime --timeout 50-100ms --trials 200
  raftsim failover --model etcd --timeout 1s --prevote=false
  raftsim failover --timeout 12-24ms --trials 500 --json
  raftsim failover --latency normal:5ms,2ms --disk none --model plain --plot failover.svg
  raftsim failover --timeout 150-155ms --trace --trace-trial 3`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runFailover(cmd, o, false) },
	}
	addModelFlags(cmd, o, true)
	addRunFlags(cmd, o, 1000, true)
	addColumnsHelp(cmd)
	cmd.Flags().StringVar(&o.engine, "engine", "raftick", "raftick (simulated, virtual time), raftick-realtime (raftick's nodes on real time), hashicorp (real hashicorp/raft nodes, real time) or etcd (real etcd raft nodes, virtual time)")
	addEtcdFlags(cmd, o)
	addCrashFlags(cmd)
	addUntilFlag(cmd, "all, the paper's")
	addShortLogsFlag(cmd, o, "the model's, 2 of 4 survivors for paper")
	addTimersAtCrashFlag(cmd)
	addClockRateFlag(cmd)
	addLatenessSpreadFlags(cmd)
	return cmd
}

func (a *app) bootstrapCmd() *cobra.Command {
	o := &opts{}
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Start a fresh cluster and time the election of its first leader",
		Long: `bootstrap starts every server of a fresh cluster at the same instant and
measures the time until a majority knows the first leader (the leader and
enough followers that accepted its first heartbeat). --engine etcd runs it
on real etcd raft nodes, --engine raftick-realtime on raftick's nodes in
real time (see failover).`,
		Example: `  raftsim bootstrap --nodes 3 --timeout 150ms-300ms
  raftsim bootstrap --prevote --latency uniform:1ms,5ms --csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runFailover(cmd, o, true) },
	}
	addModelFlags(cmd, o, true)
	addRunFlags(cmd, o, 1000, true)
	addColumnsHelp(cmd)
	addEtcdFlags(cmd, o)
	addUntilFlag(cmd, "majority")
	addShortLogsFlag(cmd, o, "0")
	addClockRateFlag(cmd)
	addLatenessSpreadFlags(cmd)
	return cmd
}

func (a *app) runFailover(cmd *cobra.Command, o *opts, bootstrap bool) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	o.etcdDefaults(cmd)
	if err := a.realtimeDefaults(cmd, o); err != nil {
		return err
	}
	if !bootstrap {
		switch o.engine {
		case "raftick", "etcd", realtimeEngine:
		case "hashicorp":
			// The real engine is hashicorp/raft: unless told otherwise,
			// take the settings of its model (a timeout T meaning
			// [T, 2T), pre-vote on).
			if !cmd.Flags().Changed("model") {
				o.model = "hashicorp"
			}
		default:
			return flagError("engine", "unknown engine %q (want raftick, raftick-realtime, hashicorp or etcd)", o.engine)
		}
	}
	s, _, err := o.setup(cmd)
	if err != nil {
		return err
	}
	if s, err = o.etcdSetup(cmd, s); err != nil {
		return err
	}
	if err := s.Measurable(aliveOf(s, bootstrap)); err != nil {
		return configError(err, setupFlags(cmd), "model")
	}
	if !bootstrap && o.engine == "hashicorp" {
		if o.check {
			return flagError("check", "needs simulated servers: the hashicorp engine's real nodes report no events to check")
		}
		return a.runHashicorp(cmd.Context(), o, s)
	}
	e, err := o.engineExperiment(cmd, s, bootstrap)
	if err != nil {
		return err
	}
	if o.trace {
		return traceTrial(cmd.Context(), a.stdout, o, e)
	}
	d := e.Result(nil)
	rs, interrupted, err := a.runExperiments(cmd.Context(), d.Experiment, []experiment.Experiment{e}, []int{o.trials}, o.seed, o.engineWorkers())
	if err != nil {
		return err
	}
	a.reportChecked(o, rs)
	if !o.json && !o.csv {
		fmt.Fprintf(a.stdout, "%s%s: %s, heartbeat %v, %s, seed %d\n", d.Experiment, engineNote(d), s.Describe(), d.Setup.Heartbeat, shortLogsNote(s, bootstrap), o.seed)
	}
	if err := writeResults(a.stdout, o, rs, report.SummaryTable(rs, false), []int{o.trials}, interrupted); err != nil {
		return err
	}
	title := map[bool]string{false: "Failover: time without a leader after the leader crashes", true: "Bootstrap: time to the first leader"}[bootstrap]
	if err := writePlot(a.stderr, o, figure(o, title, s.Describe()+", "+shortLogsNote(s, bootstrap), []plot.Panel{{Results: rs}}), interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// hashicorpFlags names the flags of the fields hashicorp.Check refuses.
var hashicorpFlags = map[string]string{"Nodes": "nodes", "TimeoutMin": "timeout", "TimeoutMax": "timeout",
	"CandidateMin": "candidate-timeout", "Crash": "crash", "Until": "until"}

// runHashicorp runs the failover experiment on real hashicorp/raft
// clusters and prints the same summary.
func (a *app) runHashicorp(ctx context.Context, o *opts, s experiment.Setup) error {
	if err := hashicorp.Check(s); err != nil {
		return configError(err, hashicorpFlags, "engine")
	}
	if o.trace {
		return flagError("trace", "is not available with --engine hashicorp")
	}
	if a.shard.n > 0 {
		return flagError("shard", "is not available with --engine hashicorp (its real-time trials are not seeded, so shards would not add up to a run)")
	}
	if s.Disk != nil && o.model == "plain" {
		fmt.Fprintln(a.stderr, "raftsim: note: --engine hashicorp uses in-memory stores; --disk is ignored")
	}
	update, finish := a.progress("hashicorp failover")
	r, err := hashicorp.Failover(ctx, s, o.trials, o.seed, update)
	finish()
	interrupted := false
	if err != nil {
		if ctx.Err() == nil {
			return err
		}
		interrupted = true
		fmt.Fprintf(a.stderr, "raftsim: interrupted: showing the %d of %d trials that finished\n", r.Trials, o.trials)
	}
	rs := []experiment.Result{r}
	if !o.json && !o.csv {
		lat := "none added"
		if s.Latency != nil {
			lat = s.Latency.String()
		}
		fmt.Fprintf(a.stdout, "failover on real hashicorp/raft nodes (real time, %d servers, latency %s, pre-vote %v); hashicorp's timers are not seeded\n", s.Nodes, lat, s.PreVote)
	}
	if err := writeResults(a.stdout, o, rs, report.SummaryTable(rs, false), []int{o.trials}, interrupted); err != nil {
		return err
	}
	fig := figure(o, "Failover on real hashicorp/raft nodes (real time)", fmt.Sprintf("%d servers, pre-vote %v", s.Nodes, s.PreVote), []plot.Panel{{Results: rs}})
	if err := writePlot(a.stderr, o, fig, interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// aliveOf returns the servers running during the measurement: all of
// them for bootstrap, all but the crashed leader for failover.
func aliveOf(s experiment.Setup, bootstrap bool) int {
	if bootstrap {
		return s.Nodes
	}
	return s.Nodes - 1
}
