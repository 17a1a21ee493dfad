package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// opts are the flags shared by the experiment subcommands.
type opts struct {
	nodes      int
	timeout    string
	heartbeat  time.Duration
	latency    string
	trials     int
	seed       uint64
	model      string
	engine     string
	etcd       etcdOpts
	maxTime    time.Duration
	workers    int
	json, csv  bool
	cdf        bool
	plot       string
	trace      bool
	traceTrial int
	check      bool
	shortLogs  int    // fidelity.go
	command    string // the subcommand, for the output records
}

// addModelFlags registers the flags that describe the simulated cluster
// (experiment.Knobs declares each).
func addModelFlags(cmd *cobra.Command, o *opts, withTimeout bool) {
	f := cmd.Flags()
	knobFlag(cmd, "nodes", "", &o.nodes)
	if withTimeout {
		knobFlag(cmd, "timeout", "", &o.timeout)
		knobFlag(cmd, "heartbeat", "", &o.heartbeat)
	}
	knobFlag(cmd, "latency", "", nil)
	knobFlag(cmd, "disk", "", nil)
	knobFlag(cmd, "lateness", "", nil)
	knobFlag(cmd, "leaderwrites", "", nil)
	knobFlag(cmd, "cancelbackoff", "", nil)
	knobFlag(cmd, "sendgap", "", nil)
	knobFlag(cmd, "loss", "", nil)
	knobFlag(cmd, "dup", "", nil)
	knobFlag(cmd, "prevote", "", nil)
	knobFlag(cmd, "checkquorum", "", nil)
	f.StringVar(&o.model, "model", "paper", "cluster model preset: "+experiment.ModelNames()+" (see below for what each sets)")
	knobFlag(cmd, "maxtime", "", &o.maxTime)
	addCandidateFlags(cmd)
	defer addModelHelp(cmd)
}

// addRunFlags registers the flags that control a run and its output.
func addRunFlags(cmd *cobra.Command, o *opts, defTrials int, withPlot bool) {
	f := cmd.Flags()
	f.IntVar(&o.trials, "trials", defTrials, "number of trials")
	f.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same output, whatever the number of workers")
	f.IntVar(&o.workers, "workers", 0, "parallel workers (0: GOMAXPROCS); changes speed, never results")
	f.BoolVar(&o.json, "json", false, "print JSON Lines (one self-describing object per table row; see raftsim help records) instead of a table")
	f.BoolVar(&o.csv, "csv", false, "print CSV instead of a table")
	f.BoolVar(&o.cdf, "cdf", false, "with --json, include each experiment's CDF as [ms, fraction] pairs")
	if withPlot {
		f.StringVar(&o.plot, "plot", "", "write the CDF figure to `FILE` (.pdf, .svg or .png, by its extension)")
	}
	f.BoolVar(&o.trace, "trace", false, "print the event log of one trial (see --trace-trial) instead of running the experiment")
	f.IntVar(&o.traceTrial, "trace-trial", 0, "trial index traced by --trace")
	f.BoolVar(&o.check, "check", false, "report how many trials the election safety checker passed (it checks every event of every simulated server; a violation fails the run, exit status 1)")
}

// checkRun validates the run and output flags.
func (o *opts) checkRun(cmd *cobra.Command) error {
	if o.trials < 1 {
		return flagError("trials", "must be at least 1, got %d", o.trials)
	}
	if o.trials > 100_000_000 {
		return flagError("trials", "at most 100000000, got %d", o.trials)
	}
	if o.workers < 0 {
		return flagError("workers", "must not be negative, got %d", o.workers)
	}
	if o.json && o.csv {
		return flagError("csv", "cannot be combined with --json")
	}
	if o.cdf && !o.json {
		return flagError("cdf", "needs --json")
	}
	o.command = cmd.Name()
	if sh := cmd.Flag("shard"); sh == nil || !sh.Changed {
		// A shard writes no figure (merge does): its path is checked there.
		if err := checkPlotPath(cmd, o.plot); err != nil {
			return err
		}
	} else if o.trace {
		return flagError("shard", "cannot be combined with --trace")
	}
	if o.trace && (o.json || o.csv) {
		return flagError("trace", "prints an event log, one line per event; it cannot be combined with --json or --csv")
	}
	if o.traceTrial < 0 {
		return flagError("trace-trial", "must not be negative, got %d", o.traceTrial)
	}
	if cmd.Flags().Changed("trace-trial") && !o.trace {
		return flagError("trace-trial", "needs --trace")
	}
	return nil
}

// setupFlags names the flag to blame for each Setup field on cmd (from
// experiment.Knobs): the flag that set it, or the flag that would
// replace the --model preset's quantity (a latency, a count); a
// preset's on/off mechanism not given as a flag is the preset's, and a
// field no flag names is reported under the caller's fallback.
func setupFlags(cmd *cobra.Command) map[string]string {
	f := cmd.Flags()
	m := map[string]string{}
	for _, k := range experiment.Knobs {
		if k.Flag == "" || f.Lookup(k.Flag) == nil {
			continue
		}
		given := f.Changed(k.Flag) || k.Kind != experiment.KindBool
		for _, old := range k.Old {
			given = given || f.Changed(old)
		}
		for _, field := range k.Fields {
			if _, ok := m[field]; !ok && given {
				m[field] = k.Flag
			}
		}
	}
	return m
}

// knobFlag registers the flag of the knob named name (experiment.Knobs):
// its type, default and help come from the table; note, if not empty, is
// the subcommand's default, appended to the help. bind, if not nil,
// stores the value (*int, *string or *time.Duration, matching the kind);
// otherwise the flag is read back by applyKnobFlags.
func knobFlag(cmd *cobra.Command, name, note string, bind any) {
	k, ok := experiment.KnobNamed(name)
	if !ok || k.Flag == "" {
		panic("raftsim: no knob with a flag named " + name) // a programming error
	}
	help := k.Help
	if note != "" {
		help += " (default: " + note + ")"
	}
	f := cmd.Flags()
	flags := append([]string{k.Flag}, k.Old...)
	for i, flag := range flags {
		switch k.Kind {
		case experiment.KindInt:
			def, _ := strconv.Atoi(k.Default)
			p, _ := bind.(*int)
			if p == nil {
				p = new(int)
			}
			f.IntVar(p, flag, def, help)
		case experiment.KindFloat:
			def, _ := strconv.ParseFloat(k.Default, 64)
			f.Float64(flag, def, help)
		case experiment.KindBool:
			f.Bool(flag, k.Default == "true", help)
		case experiment.KindDuration:
			var def time.Duration
			if k.Default != "" {
				def, _ = time.ParseDuration(k.Default)
			}
			p, _ := bind.(*time.Duration)
			if p == nil {
				p = new(time.Duration)
			}
			f.DurationVar(p, flag, def, help)
		default:
			p, _ := bind.(*string)
			if p == nil {
				p = new(string)
			}
			f.StringVar(p, flag, k.Default, help)
		}
		if i > 0 {
			f.Lookup(flag).Usage = "old name of --" + k.Flag
			_ = f.MarkHidden(flag)
		}
	}
}

// alwaysApplied are the knobs whose flag sets the Setup even when it was
// not given: its default replaces the preset's.
var alwaysApplied = []string{"nodes", "loss", "dup", "maxtime"}

// applyKnobFlags sets s from the knob flags registered on cmd, in the
// order of experiment.Knobs, skipping the knobs named in skip: each flag
// given (or always applied) goes through Setup.Set, and a knob that is on
// is refused with an engine that does not honour it (Knob.Honours).
func applyKnobFlags(cmd *cobra.Command, s *experiment.Setup, skip ...string) error {
	f := cmd.Flags()
	engine := ""
	if e := f.Lookup("engine"); e != nil {
		engine = e.Value.String()
	}
	for _, k := range experiment.Knobs {
		if k.Flag == "" || f.Lookup(k.Flag) == nil || slices.Contains(skip, k.Name) {
			continue
		}
		flag, changed := k.Flag, f.Changed(k.Flag)
		for _, old := range k.Old {
			if f.Changed(old) {
				flag, changed = old, true
			}
		}
		if !changed && !slices.Contains(alwaysApplied, k.Name) {
			continue
		}
		value := f.Lookup(flag).Value.String()
		if engine != "" && !k.Honours(engine) && k.On(value) {
			return flagError(flag, "needs --engine raftick (the simulated servers), not %s", engine)
		}
		if value == "" && k.Kind == experiment.KindLatency {
			return flagError(flag, "needs a spec such as normal:5ms,2ms, or none")
		}
		if err := k.Set(s, value); err != nil {
			return configError(err, nil, flag)
		}
	}
	return nil
}

// configError turns err, a configuration error of the library, into a
// usage error naming the flag that set the refused field: flags maps
// field names to flag names, and a field with no flag is reported under
// fallback. Go field names never reach the user.
func configError(err error, flags map[string]string, fallback string) error {
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		return usageError{err}
	}
	flag, ok := flags[fe.Field]
	if !ok {
		flag = fallback
	}
	return usageError{fmt.Errorf("--%s %s: %s", flag, fe.ValueString(), fe.Reason)}
}

// latencyFlag parses the latency spec of a flag ("none" or "0": none).
func latencyFlag(flag, value string) (sim.Latency, error) {
	if value == "" {
		return nil, flagError(flag, "needs a spec such as normal:5ms,2ms, or none")
	}
	l, err := experiment.OptionalLatency(value)
	if err != nil {
		return nil, configError(err, nil, flag)
	}
	return l, nil
}

// setup builds the simulated cluster from the model preset and the flags.
func (o *opts) setup(cmd *cobra.Command) (experiment.Setup, experiment.Model, error) {
	f := cmd.Flags()
	m, err := experiment.ModelNamed(o.model)
	if err != nil {
		return experiment.Setup{}, m, configError(err, nil, "model")
	}
	s := m.Setup().WithNodes(o.nodes)
	if f.Lookup("timeout") != nil {
		lo, hi, err := experiment.ParseRange(o.timeout)
		if err != nil {
			return s, m, configError(err, nil, "timeout")
		}
		if err := m.Timing(&s, lo, hi, o.heartbeat); err != nil {
			return s, m, configError(err, setupFlags(cmd), "model")
		}
	}
	if err := checkFailoverModel(cmd); err != nil {
		return s, m, err
	}
	if err := checkUntilFlag(cmd); err != nil {
		return s, m, err
	}
	if err := applyKnobFlags(cmd, &s, "nodes", "timeout", "heartbeat", "shortlogs"); err != nil {
		return s, m, err
	}
	if err := o.applyShortLogs(cmd, &s); err != nil {
		return s, m, err
	}
	if err := s.Validate(); err != nil {
		return s, m, configError(err, setupFlags(cmd), "model")
	}
	if err := o.checkCost(s, 0); err != nil {
		return s, m, err
	}
	return s, m, nil
}
