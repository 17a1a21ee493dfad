package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// opts are the flags shared by the experiment subcommands.
type opts struct {
	nodes       int
	timeout     string
	heartbeat   time.Duration
	latency     string
	disk        string
	noise       string
	loss, dup   float64
	trials      int
	seed        uint64
	prevote     bool
	checkquorum bool
	model       string
	engine      string
	maxTime     time.Duration
	workers     int
	json, csv   bool
	cdf         bool
	plot        string
	trace       bool
	traceTrial  int
}

// models are the --model presets.
var models = map[string]string{
	"paper": "the Raft paper's LogCabin cluster (default): blocking disk writes, candidates wait for their timeout, whole-ms timeouts, timer noise",
	"plain": "the election package as it is: responses wait for the disk, the node keeps working, continuous timeouts, no noise",
	"hashicorp": "hashicorp/raft's timing: free-running follower timer checked against last contact, [T, 2T) timeouts, " +
		"pre-vote, votes refused while a leader is known, per-follower heartbeats every [T/10, T/5), no disk",
}

// addModelFlags registers the flags that describe the simulated cluster.
func addModelFlags(cmd *cobra.Command, o *opts, withTimeout bool) {
	f := cmd.Flags()
	f.IntVar(&o.nodes, "nodes", 5, "number of servers")
	if withTimeout {
		f.StringVar(&o.timeout, "timeout", "150ms-300ms", "election timeout range `min-max` (e.g. 150ms-300ms, 150-155ms, or one value for no randomness)")
		f.DurationVar(&o.heartbeat, "heartbeat", 0, "leader heartbeat interval (0: half the minimum timeout, as in the paper)")
	}
	f.StringVar(&o.latency, "latency", "", "one-way message latency `spec`: fixed:5ms, uniform:1ms,5ms, normal:5ms,2ms, lognormal:5ms,0.5, empirical:1ms,2ms,7ms (default: the model's)")
	f.StringVar(&o.disk, "disk", "", "disk write time `spec` (same forms as --latency, or none) paid before a vote is answered (default: the model's)")
	f.StringVar(&o.noise, "noise", "", "timer noise `spec` added to every election timeout (same forms, or none; default: the model's)")
	f.Float64Var(&o.loss, "loss", 0, "probability that a message is lost, in [0, 1)")
	f.Float64Var(&o.dup, "dup", 0, "probability that a message is delivered twice, in [0, 1]")
	f.BoolVar(&o.prevote, "prevote", false, "enable pre-vote")
	f.BoolVar(&o.checkquorum, "checkquorum", false, "enable check-quorum (leaders step down without a quorum)")
	f.StringVar(&o.model, "model", "paper", "cluster model preset: "+modelNames())
	f.DurationVar(&o.maxTime, "max-time", 60*time.Second, "per-trial limit in virtual time; a trial that reaches it counts at the limit")
}

func modelNames() string {
	return "paper, plain or hashicorp"
}

// addRunFlags registers the flags that control a run and its output.
func addRunFlags(cmd *cobra.Command, o *opts, defTrials int, withPlot bool) {
	f := cmd.Flags()
	f.IntVar(&o.trials, "trials", defTrials, "number of trials")
	f.Uint64Var(&o.seed, "seed", 1, "random seed: the same seed gives the same output, whatever the number of workers")
	f.IntVar(&o.workers, "workers", 0, "parallel workers (0: GOMAXPROCS); changes speed, never results")
	f.BoolVar(&o.json, "json", false, "print JSON (one object per experiment) instead of a table")
	f.BoolVar(&o.csv, "csv", false, "print CSV instead of a table")
	f.BoolVar(&o.cdf, "cdf", false, "with --json, include each experiment's CDF as [ms, fraction] pairs")
	if withPlot {
		f.StringVar(&o.plot, "plot", "", "write the CDF plot to `FILE` (.svg or .png)")
	}
	f.BoolVar(&o.trace, "trace", false, "print the event log of one trial (see --trace-trial) instead of running the experiment")
	f.IntVar(&o.traceTrial, "trace-trial", 0, "trial index traced by --trace")
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
	if o.plot != "" {
		if _, err := sim.PlotFormat(o.plot); err != nil {
			return flagError("plot", "file name must end in .svg or .png, got %q", o.plot)
		}
	}
	if o.traceTrial < 0 {
		return flagError("trace-trial", "must not be negative, got %d", o.traceTrial)
	}
	if cmd.Flags().Changed("trace-trial") && !o.trace {
		return flagError("trace-trial", "needs --trace")
	}
	return nil
}

func optLatency(flag, value string) (sim.Latency, error) {
	if value == "none" || value == "0" {
		return nil, nil
	}
	l, err := sim.ParseLatency(value)
	if err != nil {
		return nil, flagError(flag, "%s", strings.TrimPrefix(err.Error(), sim.ErrBadLatency.Error()+" "))
	}
	return l, nil
}

// setup builds the simulated cluster from the model preset and the flags.
func (o *opts) setup(cmd *cobra.Command) (sim.Setup, error) {
	f := cmd.Flags()
	var s sim.Setup
	switch o.model {
	case "paper":
		s = sim.LAN()
	case "plain":
		s = sim.LAN()
		s.DiskBlocks, s.LeaderWrite, s.CandidatesWait, s.KeepTimer = false, false, false, false
		s.Granularity, s.TimerNoise = 0, nil
		s.GroupCommit = true
	case "hashicorp":
		s = sim.HashicorpModel()
	default:
		return s, flagError("model", "unknown model %q (want %s)", o.model, modelNames())
	}
	if o.nodes < 1 || o.nodes > 1000 {
		return s, flagError("nodes", "must be in [1, 1000], got %d", o.nodes)
	}
	if f.Changed("nodes") || o.model != "paper" {
		s.Nodes = o.nodes
	}
	if s.ShortLogs > s.Nodes-2 {
		s.ShortLogs = max(0, s.Nodes-3)
	}
	if f.Lookup("timeout") != nil {
		lo, hi, err := sim.ParseRange(o.timeout)
		if err != nil {
			return s, flagError("timeout", "%v", err)
		}
		s.TimeoutMin, s.TimeoutMax = lo, hi
		if o.model == "hashicorp" && f.Changed("timeout") && hi != lo && hi != 2*lo {
			return s, flagError("timeout", "the hashicorp model draws timeouts from [T, 2T): give T or T-2T, got %s", o.timeout)
		}
		if o.model == "hashicorp" && hi == lo {
			s.TimeoutMax = 2 * lo
		}
		if o.heartbeat < 0 {
			return s, flagError("heartbeat", "must not be negative, got %v", o.heartbeat)
		}
		if o.heartbeat > 0 {
			s.Heartbeat = o.heartbeat
		} else if o.model == "hashicorp" {
			s.Heartbeat = s.TimeoutMin / 10
		}
		if o.model == "hashicorp" {
			s.Settle = s.TimeoutMin
		}
		if hb := s.Heartbeat; hb == 0 && s.TimeoutMin/2 <= 0 {
			return s, flagError("timeout", "minimum %v is too small for a heartbeat of half of it", s.TimeoutMin)
		}
		if hb := s.Heartbeat; hb >= s.TimeoutMin {
			return s, flagError("heartbeat", "%v must be below the minimum election timeout %v", hb, s.TimeoutMin)
		}
	}
	var err error
	if f.Changed("latency") {
		if s.Latency, err = optLatency("latency", o.latency); err != nil {
			return s, err
		}
	}
	if f.Changed("disk") {
		if s.Disk, err = optLatency("disk", o.disk); err != nil {
			return s, err
		}
	}
	if f.Changed("noise") {
		if s.TimerNoise, err = optLatency("noise", o.noise); err != nil {
			return s, err
		}
	}
	if math.IsNaN(o.loss) || o.loss < 0 || o.loss >= 1 {
		return s, flagError("loss", "must be in [0, 1), got %v", o.loss)
	}
	if math.IsNaN(o.dup) || o.dup < 0 || o.dup > 1 {
		return s, flagError("dup", "must be in [0, 1], got %v", o.dup)
	}
	s.Loss, s.Duplicate = o.loss, o.dup
	if f.Changed("prevote") || o.model != "hashicorp" {
		s.PreVote = o.prevote
	}
	s.CheckQuorum = o.checkquorum
	if o.maxTime <= 0 {
		return s, flagError("max-time", "must be positive, got %v", o.maxTime)
	}
	s.MaxTime = o.maxTime
	if err := s.Validate(); err != nil {
		return s, usageError{err}
	}
	return s, nil
}

// describe returns a one-line description of the model for text output.
func describe(s sim.Setup) string {
	str := func(l sim.Latency) string {
		if l == nil {
			return "none"
		}
		return l.String()
	}
	var extra []string
	if s.DiskBlocks {
		extra = append(extra, "writes block the server")
	}
	if s.LeaderWrite {
		extra = append(extra, "new leader writes before its first heartbeat")
	}
	if s.CandidatesWait {
		extra = append(extra, "candidates wait for their timeout")
	}
	if s.KeepTimer {
		extra = append(extra, "keep their deadline when deposed")
	}
	if s.Granularity > 0 {
		if s.Granularity == time.Millisecond {
			extra = append(extra, "timeouts in whole milliseconds")
		} else {
			extra = append(extra, fmt.Sprintf("timeouts in multiples of %v", s.Granularity))
		}
	}
	if s.Detection == election.CheckLastContact {
		extra = append(extra, "last-contact detection")
	}
	if s.Stickiness == election.StickyUntilTimeout && (s.LeaderStickiness || s.PreVote) {
		extra = append(extra, "(pre-)votes refused while a leader is known")
	}
	if s.HeartbeatPerPeer || s.HeartbeatJitter {
		hb := "heartbeats"
		if s.HeartbeatPerPeer {
			hb = "per-follower heartbeats"
		}
		if s.HeartbeatJitter {
			hb += " every [hb, 2hb)"
		}
		extra = append(extra, hb)
	}
	if s.Settle > 0 {
		extra = append(extra, fmt.Sprintf("crash %v-%v after the leader is known (harness)", s.Settle, s.Settle+s.TimeoutMin/5))
	}
	line := fmt.Sprintf("%d servers, latency %s, disk %s, timer noise %s", s.Nodes, str(s.Latency), str(s.Disk), str(s.TimerNoise))
	if s.Loss > 0 || s.Duplicate > 0 {
		line += fmt.Sprintf(", loss %g, dup %g", s.Loss, s.Duplicate)
	}
	if len(extra) > 0 {
		line += "; " + strings.Join(extra, ", ")
	}
	return line
}
