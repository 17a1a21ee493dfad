package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
)

type sweepOpts struct {
	opts
	experiment string
	over       []string
}

func (a *app) sweepCmd() *cobra.Command {
	o := &sweepOpts{}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run an experiment over a grid of one or two parameters",
		Long: `sweep runs failover or bootstrap for every combination of the values given
with --over (one or two parameters). Parameters: ` + strings.Join(sim.SetupParams, ", ") + `.
Values are separated by commas, or by semicolons when they contain commas
(latency specs); the other flags set the base values.`,
		Example: `  raftsim sweep --over timeout=150-155ms,150-200ms,150-300ms
  raftsim sweep --over 'latency=fixed:1ms;normal:5ms,2ms' --over nodes=3,5,7 --trials 300
  raftsim sweep --experiment bootstrap --over prevote=false,true --csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runSweep(cmd, o) },
	}
	addModelFlags(cmd, &o.opts, true)
	addRunFlags(cmd, &o.opts, 1000, true)
	cmd.Flags().StringVar(&o.experiment, "experiment", "failover", "failover or bootstrap")
	cmd.Flags().StringArrayVar(&o.over, "over", nil, "swept parameter `name=v1,v2,...` (give one or two)")
	return cmd
}

func (a *app) runSweep(cmd *cobra.Command, o *sweepOpts) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	if o.experiment != "failover" && o.experiment != "bootstrap" {
		return flagError("experiment", "must be failover or bootstrap, got %q", o.experiment)
	}
	if len(o.over) == 0 || len(o.over) > 2 {
		return flagError("over", "give one or two parameters to sweep, got %d", len(o.over))
	}
	base, err := o.setup(cmd)
	if err != nil {
		return err
	}
	var axes []sim.Axis
	for _, s := range o.over {
		ax, err := sim.ParseAxis(s)
		if err != nil {
			return flagError("over", "%s", strings.TrimPrefix(err.Error(), sim.ErrBadParam.Error()+" "))
		}
		axes = append(axes, ax)
	}
	var exps []sim.Experiment
	var labels []string
	for _, point := range sim.Grid(axes) {
		s := base
		for _, kv := range point {
			if err := s.Set(kv[0], kv[1]); err != nil {
				return flagError("over", "%s", strings.TrimPrefix(err.Error(), sim.ErrBadParam.Error()+" "))
			}
		}
		if err := s.Validate(); err != nil {
			return flagError("over", "%s: %v", sim.GridLabel(point), err)
		}
		if o.experiment == "bootstrap" {
			exps = append(exps, sim.Bootstrap{Setup: s})
		} else {
			exps = append(exps, sim.Failover{Setup: s})
		}
		labels = append(labels, sim.GridLabel(point))
	}
	if o.trace {
		return traceTrial(a.stdout, &o.opts, exps[0])
	}
	trials := make([]int, len(exps))
	for i := range trials {
		trials[i] = o.trials
	}
	ss, interrupted, err := a.runExperiments(cmd.Context(), "sweep", exps, trials, o.seed, o.workers)
	if err != nil {
		return err
	}
	for i := range ss {
		ss[i].Label = labels[i]
	}
	table := sim.SummaryTable(ss, false)
	table.Header[0] = "parameters"
	if !o.json && !o.csv {
		fmt.Fprintf(a.stdout, "sweep of %s: %s, seed %d\n", o.experiment, describe(base), o.seed)
	}
	if err := writeResults(a.stdout, &o.opts, ss, table); err != nil {
		return err
	}
	if err := writePlot(&o.opts, []sim.Panel{{Title: "sweep of " + o.experiment, Summaries: ss}}); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}
