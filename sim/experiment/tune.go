package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
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
	// MaxRounds bounds the refinement rounds (see TuneWith): 0 means
	// DefaultTuneRounds, a negative value none.
	MaxRounds int
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
			cand := c.candidate(m, f)
			err := cand.Validate()
			if err == nil {
				err = cand.Measurable(cand.Nodes - 1)
			}
			if err != nil {
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
	// limit when some trials timed out), and ObjectiveLow and
	// ObjectiveHigh its 95% confidence interval (ObjectiveInterval);
	// ObjectiveBounded is false when the interval has no upper bound
	// (ObjectiveHigh is then meaningless).
	Objective                   time.Duration
	ObjectiveLow, ObjectiveHigh time.Duration
	ObjectiveBounded            bool
	// Unnecessary is the constrained rate: Stability.ElectionsPerNodeHour,
	// plus PreVotesPerNodeHour with TuneConfig.CountPreVotes; RateLow and
	// RateHigh are its exact (Garwood) 95% Poisson confidence interval.
	Unnecessary       float64
	RateLow, RateHigh float64
	// FailoverRequested and StableRequested are the failover trials and
	// stable windows asked of the candidate so far (the refinement rounds
	// included); Complete reports that all of them ran (false after an
	// interrupt). An incomplete candidate is never recommended.
	FailoverRequested, StableRequested int
	Complete                           bool
	// Status is what the trials say about the bound: "feasible" (the
	// rate's interval lies at or below it), "infeasible" (above it),
	// "uncertain" (the interval contains it), "unsettled" (a stable
	// window never settled on a leader: infeasible) or "partial"
	// (interrupted).
	Status string
	// Feasible: Status is "feasible".
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
	// elections (Candidate.Unnecessary), then by grid order. -1 if no
	// candidate is feasible.
	Best int
	// RunnerUp is the index of the next candidate that could be
	// recommended (feasible or uncertain, by Objective), or -1.
	RunnerUp int
	// Rounds is the number of refinement rounds that ran (each doubling
	// the trials of the candidates the decision hinged on).
	Rounds int
	// Decided reports that the decision is stable: no other candidate's
	// objective interval overlaps the best one's, and no candidate that
	// could beat it is uncertain about the bound. Otherwise Undecided says
	// in words what the trials cannot tell apart.
	Decided   bool
	Undecided string
}

// DefaultTuneRounds is the number of refinement rounds when
// TuneConfig.MaxRounds is 0.
const DefaultTuneRounds = 3

// A TuneRunner runs the jobs of one round of Tune (round 0: the whole
// grid; then the refinement rounds) and returns their accumulators.
// sim.Accumulate is the default; a program can run the jobs elsewhere
// (shards) instead.
type TuneRunner func(ctx context.Context, round int, jobs []sim.Job, opts sim.RunOptions) sim.Accumulated

// Tune searches the grid of c for the timeout range that minimizes the
// failover objective subject to the bound on unnecessary elections, with
// TuneWith and sim.Accumulate.
func Tune(ctx context.Context, c TuneConfig, opts sim.RunOptions) (TuneResult, error) {
	return TuneWith(ctx, c, opts, func(ctx context.Context, _ int, jobs []sim.Job, opts sim.RunOptions) sim.Accumulated {
		return sim.Accumulate(ctx, jobs, opts)
	})
}

// TuneWith searches the grid of c. Round 0 runs FailoverTrials failover
// trials and StableTrials stability windows of every candidate through
// run (in parallel, trial i drawing from sim.TrialRand(opts.Seed, i)).
// While the decision is close (TuneResult.Decided is false) and fewer
// than MaxRounds refinement rounds ran, a round doubles the failover
// trials of the candidates whose objective intervals overlap the best
// one's, and the stable windows of the candidates whose feasibility is
// uncertain, continuing their trial streams. The result depends only on
// c and opts.Seed. On cancellation it returns what finished, with the
// unfinished candidates marked incomplete, and ctx.Err(); if a trial
// fails it returns the *sim.TrialError.
func TuneWith(ctx context.Context, c TuneConfig, opts sim.RunOptions, run TuneRunner) (TuneResult, error) {
	if err := c.Validate(); err != nil {
		return TuneResult{Best: -1, RunnerUp: -1}, err
	}
	c = c.withDefaults()
	res := TuneResult{Config: c, Seed: opts.Seed, Best: -1, RunnerUp: -1}
	var fos []Failover
	var sts []Stability
	for _, lo := range c.Mins {
		for _, f := range c.Spreads {
			s := c.candidate(lo, f)
			fos, sts = append(fos, Failover{s}), append(sts, Stability{Setup: s, For: c.StableFor})
			res.Candidates = append(res.Candidates, Candidate{TimeoutMin: s.TimeoutMin, TimeoutMax: s.TimeoutMax, Spread: f})
		}
	}
	n := len(res.Candidates)
	foAcc, stAcc := make([]sim.Accumulator, n), make([]sim.Accumulator, n)
	foRan, stRan := make([]int, n), make([]int, n) // trials asked for so far
	foMore, stMore := make([]bool, n), make([]bool, n)
	for i := range n {
		foMore[i], stMore[i] = true, true
	}
	rounds := c.MaxRounds
	if rounds == 0 {
		rounds = DefaultTuneRounds
	}
	var err error
	for round := 0; ; round++ {
		var jobs []sim.Job
		type slot struct {
			cand   int
			stable bool
		}
		var slots []slot
		for i := range n {
			if foMore[i] {
				k := c.FailoverTrials
				if round > 0 {
					k = foRan[i]
				}
				jobs = append(jobs, sim.Job{Trials: k, First: foRan[i], Trial: JobOf(fos[i], 0).Trial, Weight: trialWeight(fos[i].Setup, 2*fos[i].TimeoutMax+fos[i].Settle)})
				slots = append(slots, slot{i, false})
				foRan[i] += k
			}
			if stMore[i] {
				k := c.StableTrials
				if round > 0 {
					k = stRan[i]
				}
				jobs = append(jobs, sim.Job{Trials: k, First: stRan[i], Trial: JobOf(sts[i], 0).Trial, Weight: trialWeight(sts[i].Setup, c.StableFor)})
				slots = append(slots, slot{i, true})
				stRan[i] += k
			}
		}
		accs := run(ctx, round, jobs, opts)
		for k, sl := range slots {
			if k >= len(accs.Accs) {
				break
			}
			if sl.stable {
				stAcc[sl.cand].Merge(&accs.Accs[k])
			} else {
				foAcc[sl.cand].Merge(&accs.Accs[k])
			}
		}
		res.evaluate(fos, foAcc, stAcc, foRan, stRan)
		if round > 0 {
			res.Rounds = round
		}
		if accs.Err != nil {
			err = accs.Err
			break
		}
		if res.Decided || round >= max(rounds, 0) {
			break
		}
		clear(foMore)
		clear(stMore)
		res.contenders(foMore, stMore)
	}
	return res, err
}

// trialWeight estimates the cost of a trial that simulates about span of
// virtual time on s: the number of heartbeat intervals in it (events are
// mostly heartbeats and their answers), for progress reports.
func trialWeight(s Setup, span time.Duration) int {
	hb := max(s.heartbeat(), time.Microsecond)
	return int(min(max(span/hb, 1), 1<<20))
}

// evaluate recomputes every candidate's statistics, intervals and
// status, the best, the runner-up and whether the decision is stable.
func (r *TuneResult) evaluate(fos []Failover, foAcc, stAcc []sim.Accumulator, foRan, stRan []int) {
	c := r.Config
	r.Best, r.RunnerUp = -1, -1
	for i := range r.Candidates {
		cd := &r.Candidates[i]
		// Summaries of copies: the accumulators grow in later rounds.
		cd.Failover = fos[i].Result(nil)
		cd.Failover.Summary = cloneAcc(&foAcc[i]).Summary()
		cd.Failover.Seed = r.Seed
		cd.Stability = stabilityOf(fos[i].Nodes, cloneAcc(&stAcc[i]).Summary())
		cd.Objective, _ = ObjectiveValue(cd.Failover.Summary, c.Objective)
		cd.ObjectiveLow, cd.ObjectiveHigh, cd.ObjectiveBounded = ObjectiveInterval(cd.Failover.Summary, c.Objective)
		count := cd.Stability.Elections
		cd.Unnecessary = cd.Stability.ElectionsPerNodeHour
		if c.CountPreVotes {
			count += cd.Stability.PreVotes
			cd.Unnecessary += cd.Stability.PreVotesPerNodeHour
		}
		cd.RateLow, cd.RateHigh = PoissonInterval(count, cd.Stability.NodeHours)
		cd.FailoverRequested, cd.StableRequested = foRan[i], stRan[i]
		cd.Complete = cd.Failover.Trials == foRan[i] && cd.Stability.Trials == stRan[i]
		bound := c.MaxElectionsPerNodeHour
		switch {
		case !cd.Complete:
			cd.Status = "partial"
		case cd.Stability.Unsettled > 0:
			cd.Status = "unsettled"
		case cd.RateHigh <= bound:
			cd.Status = "feasible"
		case cd.RateLow > bound:
			cd.Status = "infeasible"
		default:
			cd.Status = "uncertain"
		}
		cd.Feasible = cd.Status == "feasible"
		if cd.Feasible && (r.Best < 0 || better(*cd, r.Candidates[r.Best])) {
			r.Best = i
		}
	}
	for i, cd := range r.Candidates {
		if i == r.Best || cd.Status != "feasible" && cd.Status != "uncertain" {
			continue
		}
		if r.RunnerUp < 0 || better(cd, r.Candidates[r.RunnerUp]) {
			r.RunnerUp = i
		}
	}
	fo, st := make([]bool, len(r.Candidates)), make([]bool, len(r.Candidates))
	r.Undecided = r.contenders(fo, st)
	r.Decided = r.Undecided == ""
}

// cloneAcc returns a copy of a that shares nothing with it.
func cloneAcc(a *sim.Accumulator) *sim.Accumulator {
	var b sim.Accumulator
	b.Merge(a)
	return &b
}

// contenders marks the candidates the decision hinges on: in fo those
// whose objective interval overlaps the best one's (and the best), in st
// those whose feasibility is uncertain while they could beat the best.
// It returns why the decision is not stable, or "" if it is.
func (r *TuneResult) contenders(fo, st []bool) string {
	var why []string
	if r.Best < 0 {
		for i, cd := range r.Candidates {
			if cd.Status == "uncertain" {
				st[i] = true
				why = append(why, fmt.Sprintf("whether %s stays under the bound (rate %.2g-%.2g per node-hour)", label(cd), cd.RateLow, cd.RateHigh))
			}
		}
		return strings.Join(why, "; ")
	}
	b := r.Candidates[r.Best]
	for i, cd := range r.Candidates {
		if i == r.Best || cd.Status != "feasible" && cd.Status != "uncertain" {
			continue
		}
		// Could cd's objective be as good as the best's? Then its
		// feasibility matters; and if the intervals intersect, which one
		// is faster is open too.
		couldBeat := !b.ObjectiveBounded || cd.ObjectiveLow <= b.ObjectiveHigh
		if !couldBeat {
			continue
		}
		if cd.Status == "uncertain" {
			st[i] = true
			why = append(why, fmt.Sprintf("whether %s (%s %v) stays under the bound", label(cd), r.Config.Objective, short(cd.Objective)))
		}
		if !cd.ObjectiveBounded || b.ObjectiveLow <= cd.ObjectiveHigh {
			fo[i], fo[r.Best] = true, true
			why = append(why, fmt.Sprintf("%s from %s (%s intervals overlap)", label(b), label(cd), r.Config.Objective))
		}
	}
	return strings.Join(why, "; ")
}

// short rounds d for a message: to the millisecond from 10ms, else to
// 10µs.
func short(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

func label(c Candidate) string { return RangeLabel(c.TimeoutMin, c.TimeoutMax) }

// stabilityOf returns the StabilitySummary of a cluster of nodes servers
// from the Summary of its stable windows.
func stabilityOf(nodes int, s sim.Summary) StabilitySummary {
	st := StabilitySummary{Trials: s.Trials, Unsettled: s.TimedOut, Measured: s.TotalTime,
		Elections: s.Elections, PreVotes: s.PreVotes, LeaderChanges: s.LeaderChanges, TrialsWithElection: s.WithElection,
		Leaderless: s.Leaderless}
	hours := st.Measured.Hours()
	st.NodeHours = hours * float64(max(nodes, 1))
	if st.NodeHours > 0 {
		st.ElectionsPerNodeHour = float64(st.Elections) / st.NodeHours
		st.PreVotesPerNodeHour = float64(st.PreVotes) / st.NodeHours
		st.LeaderChangesPerHour = float64(st.LeaderChanges) / hours
		st.LeaderlessPerHour = time.Duration(float64(st.Leaderless) / hours)
	}
	return st
}

// better reports whether a beats b as a recommendation.
func better(a, b Candidate) bool {
	if a.Objective != b.Objective {
		return a.Objective < b.Objective
	}
	return a.Unnecessary < b.Unnecessary
}

// RoundsCounted names what the bound counts: "elections", or "elections and
// pre-votes" with TuneConfig.CountPreVotes.
func (r TuneResult) RoundsCounted() string {
	if r.Config.CountPreVotes {
		return "elections and pre-votes"
	}
	return "elections"
}

// RateName names the bounded rate in a column header: "elections", or
// "elections+prevotes" with CountPreVotes.
func (c TuneConfig) RateName() string {
	if c.CountPreVotes {
		return "elections+prevotes"
	}
	return "elections"
}
