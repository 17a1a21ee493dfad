package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
)

type splitOpts struct {
	opts
	alive     int
	fractions string
	rangeW    string
	svModel   string
}

func (a *app) splitVoteCmd() *cobra.Command {
	o := &splitOpts{}
	cmd := &cobra.Command{
		Use:   "splitvote",
		Short: "Measure split-vote rates and compare with the thesis' analytic model",
		Long: `splitvote measures how often an election term splits (no candidate gets a
majority) when ALIVE of NODES servers time out at random over a timeout range
and every message takes the fixed latency L, given as a fraction of the
range; and prints the closed form of Ongaro's thesis (section 9.3) beside it:

  Pr(split) = Sum_{k=c-1..s} C(s,k) l^k (1-l)^(s-k),   c = s - floor(n/2) + 1

--sv-model race (default) is the thesis' own simulation as a timer race on a
virtual wheel; --sv-model cluster runs the election package's nodes (no
pre-vote, no disk) and checks whether term 1 elected a leader.`,
		Example: `  raftsim splitvote --nodes 5 --alive 4 --l 0.01,0.1,0.2
  raftsim splitvote --nodes 9 --alive 5 --l 0.05,0.1 --sv-model cluster --trials 20000
  raftsim splitvote --latency uniform:10ms,20ms   # variable latency (no closed form)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSplitVote(cmd, o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.nodes, "nodes", 5, "servers in the configuration (n)")
	f.IntVar(&o.alive, "alive", 0, "servers alive (s); 0 means nodes-1")
	f.StringVar(&o.fractions, "l", "0.01,0.1,0.2", "comma-separated one-way latencies as fractions of the timeout range")
	f.StringVar(&o.rangeW, "range", "100ms", "width of the timeout range (timeouts are uniform in [range, 2*range))")
	f.StringVar(&o.timeout, "timeout", "", "timeout range `min-max` instead of --range (only its width max-min matters to the model)")
	f.StringVar(&o.latency, "latency", "", "variable one-way latency spec instead of --l (e.g. uniform:10ms,20ms; no closed form)")
	f.StringVar(&o.svModel, "sv-model", "race", "race (thesis' simulation) or cluster (election nodes)")
	f.StringVar(&o.engine, "engine", "raftick", "raftick (virtual time) or raftick-realtime (--sv-model cluster's nodes on real time; 1000 trials unless --trials)")
	addRunFlags(cmd, &o.opts, 100000, false)
	return cmd
}

// splitVoteFlags names the flag that sets each SplitVote field.
var splitVoteFlags = map[string]string{"Nodes": "nodes", "Alive": "alive", "Fraction": "l", "Range": "range", "Model": "sv-model", "Latency": "latency"}

func (a *app) runSplitVote(cmd *cobra.Command, o *splitOpts) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	if o.alive == 0 {
		o.alive = max(o.nodes-1, 1)
	}
	exps, err := a.realtimeSplitVote(cmd, o)
	if err != nil {
		return err
	}
	o.model = "splitvote-" + o.svModel // the records' model: this command has no --model
	base := experiment.SplitVote{Nodes: o.nodes, Alive: o.alive, Model: o.svModel}
	if err := base.Set("range", o.rangeW); err != nil {
		return configError(err, nil, "range")
	}
	if cmd.Flags().Changed("timeout") {
		lo, hi, err := experiment.ParseRange(o.timeout)
		if err != nil {
			return configError(err, nil, "timeout")
		}
		if hi <= lo {
			return flagError("timeout", "needs a range with max above min, got %s", o.timeout)
		}
		base.Range = hi - lo
		o.rangeW = base.Range.String()
	}
	if err := base.Validate(); err != nil {
		return configError(err, splitVoteFlags, "sv-model")
	}
	if cmd.Flags().Changed("latency") {
		l, err := latencyFlag("latency", o.latency)
		if err != nil {
			return err
		}
		if l == nil {
			return flagError("latency", "needs a spec, got %q", o.latency)
		}
		sv := base
		sv.Latency = l
		exps = append(exps, sv)
	} else {
		for _, part := range strings.Split(o.fractions, ",") {
			sv := base
			if err := sv.Set("l", strings.TrimSpace(part)); err != nil {
				return configError(err, nil, "l")
			}
			exps = append(exps, sv)
		}
	}
	if o.trace {
		return traceTrial(cmd.Context(), a.stdout, &o.opts, exps[0])
	}
	trials := make([]int, len(exps))
	for i := range trials {
		trials[i] = o.trials
	}
	if o.engine == realtimeEngine {
		exps = realtimeSplitVotes(exps)
	}
	rs, interrupted, err := a.runExperiments(cmd.Context(), "splitvote", exps, trials, o.seed, o.engineWorkers())
	if err != nil {
		return err
	}
	a.reportChecked(&o.opts, rs)
	if !o.json && !o.csv {
		fmt.Fprintf(a.stdout, "split votes, %d of %d servers alive, timeouts uniform over %s, model %s, seed %d\n", o.alive, o.nodes, o.rangeW, o.svModel, o.seed)
	}
	if err := writeResults(a.stdout, &o.opts, rs, report.SplitVoteTable(rs), trials, interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}
