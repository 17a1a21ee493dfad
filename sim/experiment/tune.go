package experiment

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/raftick/raftick/sim"
)

// Objectives lists the failover statistics Tune can minimize.
var Objectives = []string{"p50", "p90", "p99", "mean", "max"}

// ObjectiveValue returns the statistic of s named by objective (one of
// Objectives), and false for an unknown name.
func ObjectiveValue(s sim.Summary, objective string) (time.Duration, bool) {
	switch objective {
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p99":
		return s.P99, true
	case "mean":
		return s.Mean, true
	case "max":
		return s.Max, true
	}
	return 0, false
}

// TuneConfig describes a search for election timeouts. Every candidate is
// a range [min, min*(1+spread)) for min in Mins and spread in Spreads; for
// each, Tune runs FailoverTrials failover trials (the objective) and
// StableTrials stability windows of StableFor (the constraint).
type TuneConfig struct {
	// Base is the cluster model; each candidate replaces its TimeoutMin
	// and TimeoutMax. A Base.Heartbeat of 0 means half of each candidate's
	// minimum (the paper's rule); a fixed one must be below every min.
	Base Setup
	// Mins are the candidate minimum timeouts, each positive. Default
	// DefaultTuneMins.
	Mins []time.Duration
	// Spreads are the candidate range widths as a fraction of min: the
	// maximum timeout is min*(1+spread); each in [0, 100]. Default
	// DefaultTuneSpreads.
	Spreads []float64
	// Objective is the failover statistic to minimize, one of Objectives;
	// "" means "p99".
	Objective string
	// MaxElectionsPerNodeHour bounds the unnecessary elections (election
	// rounds started per server and hour of a stable cluster) of a
	// feasible candidate; must not be negative. A candidate whose stable
	// runs never settled on a leader is infeasible too.
	MaxElectionsPerNodeHour float64
	// FailoverTrials per candidate; 0 means 1000. Must not be negative.
	FailoverTrials int
	// StableTrials is the number of stability windows per candidate; 0
	// means 6. Must not be negative.
	StableTrials int
	// StableFor is the virtual length of one stability window; 0 means
	// DefaultStableFor (10 minutes). Must not be negative.
	StableFor time.Duration
	// HeartbeatRatio, if positive and Base.Heartbeat is 0, sets each
	// candidate's heartbeat interval to min*HeartbeatRatio (hashicorp/raft:
	// 0.1); 0 keeps the Setup rule, half of min. In [0, 1).
	HeartbeatRatio float64
	// CountPreVotes makes the bound apply to election rounds plus pre-vote
	// rounds (pre-vote rounds change no term and disturb no leader, but
	// each costs a round of messages). By default only election rounds
	// count.
	CountPreVotes bool
	// SettleRatio, if positive, sets each candidate's Setup.Settle to
	// min*SettleRatio (raftadapter's harness crashes the leader T after
	// it settled: 1); 0 keeps Base.Settle. Must not be negative.
	SettleRatio float64
}

// Default candidate grid of Tune: 7 minimums times 4 spreads.
var (
	DefaultTuneMins = []time.Duration{25 * time.Millisecond, 50 * time.Millisecond, 75 * time.Millisecond,
		100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}
	DefaultTuneSpreads = []float64{0.1, 0.5, 1, 2}
)

// withDefaults returns c with its zero fields defaulted.
func (c TuneConfig) withDefaults() TuneConfig {
	if len(c.Mins) == 0 {
		c.Mins = DefaultTuneMins
	}
	if len(c.Spreads) == 0 {
		c.Spreads = DefaultTuneSpreads
	}
	if c.Objective == "" {
		c.Objective = "p99"
	}
	if c.FailoverTrials == 0 {
		c.FailoverTrials = 1000
	}
	if c.StableTrials == 0 {
		c.StableTrials = 6
	}
	if c.StableFor == 0 {
		c.StableFor = DefaultStableFor
	}
	return c
}

// Validate reports the first invalid field of c (after defaults), or
// nil: a *sim.FieldError wrapping ErrInvalidConfig. An invalid candidate
// reports the Setup field it breaks (e.g. Heartbeat), its reason naming
// the candidate.
func (c TuneConfig) Validate() error {
	c = c.withDefaults()
	if !slices.Contains(Objectives, c.Objective) {
		return fieldErr("Objective", c.Objective, "must be one of %v", Objectives)
	}
	if math.IsNaN(c.MaxElectionsPerNodeHour) || c.MaxElectionsPerNodeHour < 0 {
		return fieldErr("MaxElectionsPerNodeHour", c.MaxElectionsPerNodeHour, "must not be negative")
	}
	if math.IsNaN(c.HeartbeatRatio) || c.HeartbeatRatio < 0 || c.HeartbeatRatio >= 1 {
		return fieldErr("HeartbeatRatio", c.HeartbeatRatio, "must be in [0, 1)")
	}
	if math.IsNaN(c.SettleRatio) || c.SettleRatio < 0 {
		return fieldErr("SettleRatio", c.SettleRatio, "must not be negative")
	}
	switch {
	case c.FailoverTrials < 0:
		return fieldErr("FailoverTrials", c.FailoverTrials, "must not be negative")
	case c.StableTrials < 0:
		return fieldErr("StableTrials", c.StableTrials, "must not be negative")
	case c.StableFor < 0:
		return fieldErr("StableFor", c.StableFor, "must not be negative")
	}
	for _, f := range c.Spreads {
		if math.IsNaN(f) || f < 0 || f > 100 {
			return fieldErr("Spreads", f, "must be in [0, 100]")
		}
	}
	for _, m := range c.Mins {
		if m <= 0 {
			return fieldErr("Mins", m, "must be positive")
		}
		for _, f := range c.Spreads {
			if err := c.candidate(m, f).Validate(); err != nil {
				var fe *sim.FieldError
				if errors.As(err, &fe) {
					return fieldErr(fe.Field, fe.Value, "candidate %s: %s", RangeLabel(m, spreadMax(m, f)), fe.Reason)
				}
				return err
			}
		}
	}
	return nil
}

func spreadMax(lo time.Duration, f float64) time.Duration {
	return lo + time.Duration(math.Round(float64(lo)*f))
}

func (c TuneConfig) candidate(lo time.Duration, f float64) Setup {
	s := c.Base
	s.TimeoutMin, s.TimeoutMax = lo, spreadMax(lo, f)
	if c.HeartbeatRatio > 0 && s.Heartbeat == 0 {
		s.Heartbeat = time.Duration(math.Round(float64(lo) * c.HeartbeatRatio))
	}
	if c.SettleRatio > 0 {
		s.Settle = time.Duration(math.Round(float64(lo) * c.SettleRatio))
	}
	return s
}

// Candidate is one timeout range Tune evaluated.
type Candidate struct {
	TimeoutMin, TimeoutMax time.Duration
	Spread                 float64
	// Failover summarizes the failover trials, Stability the stable
	// windows.
	Failover  Result
	Stability StabilitySummary
	// Objective is the chosen statistic of Failover (capped at the trial
	// limit when some trials timed out).
	Objective time.Duration
	// Unnecessary is the constrained rate: Stability.ElectionsPerNodeHour,
	// plus PreVotesPerNodeHour with TuneConfig.CountPreVotes.
	Unnecessary float64
	// Complete reports that all trials of the candidate ran (false after
	// an interrupt); an incomplete candidate is never recommended.
	Complete bool
	// Feasible: complete, every stable window settled, and Unnecessary <=
	// the bound.
	Feasible bool
}

// TuneResult is the outcome of Tune.
type TuneResult struct {
	// Config is the configuration with its defaults filled in.
	Config TuneConfig
	Seed   uint64
	// Candidates in grid order (Mins slowest, then Spreads).
	Candidates []Candidate
	// Best is the index of the recommended candidate: the feasible one
	// with the smallest Objective, ties broken by fewer unnecessary
	// elections (Candidate.Unnecessary), then by grid order. -1 if no candidate is feasible.
	Best int
}

// Tune searches the grid of c for the timeout range that minimizes the
// failover objective subject to the bound on unnecessary elections. All
// trials of all candidates run through sim.Run with opts (in parallel,
// trial i drawing from sim.TrialRand(opts.Seed, i)), so the result
// depends only on c and opts.Seed. On cancellation it returns what
// finished, with the unfinished candidates marked incomplete, and
// ctx.Err(); if a trial fails it returns the *sim.TrialError.
func Tune(ctx context.Context, c TuneConfig, opts sim.RunOptions) (TuneResult, error) {
	if err := c.Validate(); err != nil {
		return TuneResult{Best: -1}, err
	}
	c = c.withDefaults()
	res := TuneResult{Config: c, Seed: opts.Seed, Best: -1}
	var jobs []sim.Job
	var fos []Failover
	var sts []Stability
	for _, lo := range c.Mins {
		for _, f := range c.Spreads {
			s := c.candidate(lo, f)
			fo, st := Failover{s}, Stability{Setup: s, For: c.StableFor}
			fos, sts = append(fos, fo), append(sts, st)
			jobs = append(jobs, JobOf(fo, c.FailoverTrials), JobOf(st, c.StableTrials))
			res.Candidates = append(res.Candidates, Candidate{TimeoutMin: s.TimeoutMin, TimeoutMax: s.TimeoutMax, Spread: f})
		}
	}
	outs, err := sim.Run(ctx, jobs, opts)
	for i := range res.Candidates {
		cd := &res.Candidates[i]
		fo, so := outs[2*i], outs[2*i+1]
		cd.Failover = fos[i].Result(fo)
		cd.Failover.Seed = opts.Seed
		cd.Stability = sts[i].Summarize(so)
		cd.Objective, _ = ObjectiveValue(cd.Failover.Summary, c.Objective)
		cd.Unnecessary = cd.Stability.ElectionsPerNodeHour
		if c.CountPreVotes {
			cd.Unnecessary += cd.Stability.PreVotesPerNodeHour
		}
		cd.Complete = len(fo) == c.FailoverTrials && len(so) == c.StableTrials
		cd.Feasible = cd.Complete && cd.Stability.Unsettled == 0 && cd.Unnecessary <= c.MaxElectionsPerNodeHour
		if !cd.Feasible {
			continue
		}
		if res.Best < 0 || better(*cd, res.Candidates[res.Best]) {
			res.Best = i
		}
	}
	return res, err
}

// better reports whether a beats b as a recommendation.
func better(a, b Candidate) bool {
	if a.Objective != b.Objective {
		return a.Objective < b.Objective
	}
	return a.Unnecessary < b.Unnecessary
}

// Rounds names what the bound counts: "elections", or "elections and
// pre-votes" with TuneConfig.CountPreVotes.
func (r TuneResult) Rounds() string {
	if r.Config.CountPreVotes {
		return "elections and pre-votes"
	}
	return "elections"
}
