package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// opts are the flags shared by the experiment subcommands.
type opts struct {
	nodes       int
	timeout     string
	heartbeat   time.Duration
	latency     string
	disk        string
	noise       string
	sendGap     string
	leaderW     int
	cancelBO    time.Duration
	loss, dup   float64
	trials      int
	seed        uint64
	prevote     bool
	checkquorum bool
	model       string
	engine      string
	etcd        etcdOpts
	maxTime     time.Duration
	workers     int
	json, csv   bool
	cdf         bool
	plot        string
	trace       bool
	traceTrial  int
	check       bool
	v           variantOpts  // variants.go
	fid         fidelityOpts // fidelity.go
	command     string       // the subcommand, for the output records
}

// addModelFlags registers the flags that describe the simulated cluster.
func addModelFlags(cmd *cobra.Command, o *opts, withTimeout bool) {
	f := cmd.Flags()
	f.IntVar(&o.nodes, "nodes", 5, "number of servers")
	if withTimeout {
		f.StringVar(&o.timeout, "timeout", "150ms-300ms", "election timeout range `min-max` (e.g. 150ms-300ms, 150-155ms, or one value for no randomness)")
		f.DurationVar(&o.heartbeat, "heartbeat", 0, "leader heartbeat interval (0: half the minimum timeout, as in the paper)")
	}
	f.StringVar(&o.latency, "latency", "", "one-way message latency `spec`: fixed:5ms, uniform:LO,HI, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, empirical:D1,D2,... (see below; default: the model's)")
	f.StringVar(&o.disk, "disk", "", "disk write time `spec` (same forms as --latency, or none) paid before a vote is answered (default: the model's)")
	f.StringVar(&o.noise, "lateness", "", "timer lateness `spec`: how late a server acts on a due timer, added to every election and candidate timeout (same forms, or none; default: the model's)")
	f.StringVar(&o.noise, "noise", "", "old name of --lateness")
	_ = f.MarkHidden("noise")
	f.IntVar(&o.leaderW, "leader-writes", 0, "disk writes a new leader makes before its first heartbeat: 2 is LogCabin's code up to 2014-02-05 (SimpleFileLog::append fsyncs the entry's file and the metadata under the lock), 0 its code from d021532 on (the fsyncs overlap replication) (default: the model's)")
	f.DurationVar(&o.cancelBO, "cancel-backoff", 0, "model LogCabin's cancelled RPCs: a server whose role or term changes cancels its unanswered requests and sends those peers nothing until this long after each left (LogCabin: 2s until 2014-03-19, then half the election timeout; 0: off, every preset)")
	f.StringVar(&o.sendGap, "send-gap", "", "serialize each server's requests: one leaves a `spec` draw after the previous one (same forms, or none), as LogCabin's per-peer threads issue RPCs under the server's lock (default: the model's, none in every preset)")
	f.Float64Var(&o.loss, "loss", 0, "probability that a message is lost, in [0, 1)")
	f.Float64Var(&o.dup, "dup", 0, "probability that a message is delivered twice, in [0, 1]")
	f.BoolVar(&o.prevote, "prevote", false, "enable pre-vote")
	f.BoolVar(&o.checkquorum, "checkquorum", false, "enable check-quorum (leaders step down without a quorum)")
	f.StringVar(&o.model, "model", "paper", "cluster model preset: "+experiment.ModelNames()+" (see below for what each sets)")
	f.DurationVar(&o.maxTime, "max-time", 60*time.Second, "per-trial limit in virtual time; a trial that reaches it counts at the limit")
	addCandidateFlags(cmd, o)
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

// setupFlags names the flag that sets each Setup field; fields no flag
// sets come from the --model preset.
var setupFlags = map[string]string{
	"Nodes": "nodes", "ShortLogs": "short-logs", "TimeoutMin": "timeout", "TimeoutMax": "timeout", "Heartbeat": "heartbeat",
	"Latency": "latency", "Disk": "disk", "TimerLateness": "lateness", "Loss": "loss", "Duplicate": "dup", "MaxTime": "max-time",
	"CandidateMin": "candidate-timeout", "CandidateMax": "candidate-timeout", "Crash": "crash",
	"CrashAfterHeartbeat": "crash-offset", "Until": "until", "TimersAtCrash": "timers-at-crash", "ClockRate": "clock-rate",
	"SendGap": "send-gap", "CancelBackoff": "cancel-backoff", "LatenessSpread": "lateness-spread", "LatenessPerServer": "lateness-per-server", "LeaderWrite": "leader-writes", "LeaderWrites": "leader-writes",
}

// simulatedOnly refuses flag, a mechanism of the simulated servers, when
// cmd runs real etcd raft or hashicorp/raft nodes (--engine).
func simulatedOnly(cmd *cobra.Command, flag string) error {
	if e := cmd.Flags().Lookup("engine"); e != nil && e.Value.String() != "raftick" && !realtimeHonours(e.Value.String(), flag) {
		return flagError(flag, "needs --engine raftick (the simulated servers), not %s", e.Value.String())
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
			return s, m, configError(err, setupFlags, "model")
		}
	}
	for _, l := range []struct {
		flag string
		dst  *sim.Latency
	}{{"latency", &s.Latency}, {"disk", &s.Disk}, {"lateness", &s.TimerLateness}, {"noise", &s.TimerLateness}, {"send-gap", &s.SendGap}} {
		if f.Changed(l.flag) {
			if err := simulatedOnly(cmd, "send-gap"); l.flag == "send-gap" && err != nil {
				return s, m, err
			}
			if *l.dst, err = latencyFlag(l.flag, f.Lookup(l.flag).Value.String()); err != nil {
				return s, m, err
			}
		}
	}
	if f.Changed("cancel-backoff") {
		if o.cancelBO < 0 {
			return s, m, flagError("cancel-backoff", "must not be negative, got %v", o.cancelBO)
		}
		if err := simulatedOnly(cmd, "cancel-backoff"); err != nil && o.cancelBO > 0 {
			return s, m, err
		}
		s.CancelBackoff = o.cancelBO
	}
	if f.Changed("leader-writes") {
		if o.leaderW < 0 || o.leaderW > 100 {
			return s, m, flagError("leader-writes", "must be in [0, 100], got %d", o.leaderW)
		}
		if err := simulatedOnly(cmd, "leader-writes"); err != nil {
			return s, m, err
		}
		s.LeaderWrite, s.LeaderWrites = o.leaderW > 0, o.leaderW
	}
	s.Loss, s.Duplicate = o.loss, o.dup
	if f.Changed("prevote") {
		s.PreVote = o.prevote
	}
	if f.Changed("checkquorum") {
		s.CheckQuorum = o.checkquorum
	}
	if err := o.v.apply(cmd, &s); err != nil {
		return s, m, err
	}
	if err := o.fid.apply(cmd, &s); err != nil {
		return s, m, err
	}
	if o.maxTime <= 0 {
		return s, m, flagError("max-time", "must be positive, got %v", o.maxTime)
	}
	s.MaxTime = o.maxTime
	if err := s.Validate(); err != nil {
		return s, m, configError(err, setupFlags, "model")
	}
	if err := o.checkCost(s, 0); err != nil {
		return s, m, err
	}
	return s, m, nil
}
