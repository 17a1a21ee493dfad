package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
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
with --over (one or two parameters). Parameters: ` + strings.Join(experiment.SetupParams, ", ") + `.
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
	addColumnsHelp(cmd)
	cmd.Flags().StringVar(&o.experiment, "experiment", "failover", "failover or bootstrap")
	cmd.Flags().StringArrayVar(&o.over, "over", nil, "swept parameter `name=v1,v2,...` (give one or two)")
	addEtcdFlags(cmd, &o.opts)
	addCrashFlags(cmd)
	addUntilFlag(cmd, "the experiment's own: all for failover, majority for bootstrap")
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
	o.etcdDefaults(cmd)
	base, _, err := o.setup(cmd)
	if err != nil {
		return err
	}
	if base, err = o.etcdSetup(cmd, base); err != nil {
		return err
	}
	if o.experiment == "bootstrap" && !isColdStart(cmd) {
		base.ShortLogs = 0 // a bootstrap has equal logs unless shortlogs= (or a cold-start model) says otherwise
	}
	var axes []experiment.Axis
	for _, s := range o.over {
		ax, err := experiment.ParseAxis(s)
		if err != nil {
			return overError("", err)
		}
		axes = append(axes, ax)
	}
	var exps []experiment.Experiment
	var labels []string
	for _, point := range experiment.Grid(axes) {
		s := base
		for _, kv := range point {
			if err := s.Set(kv[0], kv[1]); err != nil {
				return overError("", err)
			}
		}
		if err := s.Validate(); err != nil {
			return overError(experiment.GridLabel(point), err)
		}
		if o.experiment == "bootstrap" && (s.Crash > 1 || s.CrashAfterHeartbeat) {
			return flagError("over", "%s: crash and crashoffset apply to failover only", experiment.GridLabel(point))
		}
		if err := s.Measurable(aliveOf(s, o.experiment == "bootstrap")); err != nil {
			return overError(experiment.GridLabel(point), err)
		}
		if err := o.checkCost(s, 0); err != nil {
			return flagError("over", "%s: %v", experiment.GridLabel(point), err)
		}
		e, err := o.engineExperiment(cmd, s, o.experiment == "bootstrap")
		if err != nil {
			return err
		}
		exps = append(exps, e)
		labels = append(labels, experiment.GridLabel(point))
	}
	if o.trace {
		return traceTrial(cmd.Context(), a.stdout, &o.opts, exps[0])
	}
	trials := make([]int, len(exps))
	for i := range trials {
		trials[i] = o.trials
	}
	rs, interrupted, err := a.runExperiments(cmd.Context(), "sweep", exps, trials, o.seed, o.workers)
	if err != nil {
		return err
	}
	a.reportChecked(&o.opts, rs)
	for i := range rs {
		rs[i].Label = labels[i]
	}
	table := report.SummaryTable(rs, false)
	table.Header[0] = "parameters"
	if !o.json && !o.csv {
		fmt.Fprintf(a.stdout, "sweep of %s over %s: %s, %s, seed %d\n", o.experiment, strings.Join(o.over, " and "), sweptDescribe(base, axes), sweptLogs(base, axes, o.experiment == "bootstrap"), o.seed)
	}
	if err := writeResults(a.stdout, &o.opts, rs, table, trials, interrupted); err != nil {
		return err
	}
	fig := figure(&o.opts, "Sweep of "+o.experiment+" over "+strings.Join(o.over, " and "), sweptDescribe(base, axes), []plot.Panel{{Results: rs}})
	if err := writePlot(a.stderr, &o.opts, fig, interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// sweepParams names the sweep parameter (experiment.Knobs' name) that
// sets each Setup field.
var sweepParams = func() map[string]string {
	m := map[string]string{}
	for _, k := range experiment.Knobs {
		for _, field := range k.Fields {
			if _, ok := m[field]; !ok {
				m[field] = k.Name
			}
		}
	}
	return m
}()

// overError reports a bad --over value (at the grid point label, if
// any) in the words of the sweep parameters.
func overError(label string, err error) error {
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		return flagError("over", "%v", err)
	}
	name := fe.Field
	if p, ok := sweepParams[name]; ok {
		name = p
	} else if name != strings.ToLower(name) {
		name = "" // a Go field name: say only the value
	}
	at := ""
	if label != "" {
		at = label + ": "
	}
	if name == "" {
		return flagError("over", "%s%s: %s", at, fe.ValueString(), fe.Reason)
	}
	return flagError("over", "%s%s=%s: %s", at, name, fe.ValueString(), fe.Reason)
}

// sweptDescribe returns base.Describe() with the swept parameters shown
// as "(swept)" instead of their base values.
func sweptDescribe(base experiment.Setup, axes []experiment.Axis) string {
	d := base.Describe()
	str := func(l sim.Latency) string {
		if l == nil {
			return "none"
		}
		return l.String()
	}
	for _, ax := range axes {
		var old, repl string
		switch ax.Name {
		case "nodes":
			old, repl = fmt.Sprintf("%d servers", base.Nodes), "servers (swept)"
		case "latency":
			old, repl = "latency "+str(base.Latency), "latency (swept)"
		case "disk":
			old, repl = "disk "+str(base.Disk), "disk (swept)"
		case "lateness", "noise":
			old, repl = "timer lateness "+str(base.TimerLateness), "timer lateness (swept)"
		case "loss", "dup":
			old, repl = fmt.Sprintf(", loss %g, dup %g", base.Loss, base.Duplicate), ", loss and dup (swept)"
		}
		if old != "" {
			d = strings.Replace(d, old, repl, 1)
		}
	}
	return d
}
