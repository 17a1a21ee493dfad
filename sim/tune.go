package sim

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
)

// Objectives lists the failover statistics Tune can minimize.
var Objectives = []string{"p50", "p90", "p99", "mean", "max"}

// ObjectiveValue returns the statistic of s named by objective (one of
// Objectives), and false for an unknown name.
func ObjectiveValue(s Summary, objective string) (time.Duration, bool) {
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

// ErrBadTune is wrapped by TuneConfig.Validate errors.
var ErrBadTune = errors.New("sim: bad tune config")

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

// Validate reports the first invalid field of c (after defaults), or nil.
func (c TuneConfig) Validate() error {
	c = c.withDefaults()
	if !slices.Contains(Objectives, c.Objective) {
		return fmt.Errorf("%w: TuneConfig.Objective %q is not one of %v", ErrBadTune, c.Objective, Objectives)
	}
	if math.IsNaN(c.MaxElectionsPerNodeHour) || c.MaxElectionsPerNodeHour < 0 {
		return fmt.Errorf("%w: TuneConfig.MaxElectionsPerNodeHour (%v) must not be negative", ErrBadTune, c.MaxElectionsPerNodeHour)
	}
	if math.IsNaN(c.HeartbeatRatio) || c.HeartbeatRatio < 0 || c.HeartbeatRatio >= 1 {
		return fmt.Errorf("%w: TuneConfig.HeartbeatRatio (%v) must be in [0, 1)", ErrBadTune, c.HeartbeatRatio)
	}
	if math.IsNaN(c.SettleRatio) || c.SettleRatio < 0 {
		return fmt.Errorf("%w: TuneConfig.SettleRatio (%v) must not be negative", ErrBadTune, c.SettleRatio)
	}
	if c.FailoverTrials < 0 || c.StableTrials < 0 || c.StableFor < 0 {
		return fmt.Errorf("%w: TuneConfig.FailoverTrials (%d), StableTrials (%d) and StableFor (%v) must not be negative",
			ErrBadTune, c.FailoverTrials, c.StableTrials, c.StableFor)
	}
	for _, f := range c.Spreads {
		if math.IsNaN(f) || f < 0 || f > 100 {
			return fmt.Errorf("%w: TuneConfig.Spreads: %v must be in [0, 100]", ErrBadTune, f)
		}
	}
	for _, m := range c.Mins {
		if m <= 0 {
			return fmt.Errorf("%w: TuneConfig.Mins: %v must be positive", ErrBadTune, m)
		}
		for _, f := range c.Spreads {
			if err := c.candidate(m, f).Validate(); err != nil {
				return fmt.Errorf("%w: candidate %s: %w", ErrBadTune, RangeLabel(m, spreadMax(m, f)), err)
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
	Failover  Summary
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
// trials of all candidates run through Run with opts (in parallel, trial i
// drawing from TrialRand(opts.Seed, i)), so the result depends only on c
// and opts.Seed. On cancellation it returns what finished, with the
// unfinished candidates marked incomplete, and ctx.Err().
func Tune(ctx context.Context, c TuneConfig, opts RunOptions) (TuneResult, error) {
	if err := c.Validate(); err != nil {
		return TuneResult{Best: -1}, err
	}
	c = c.withDefaults()
	res := TuneResult{Config: c, Seed: opts.Seed, Best: -1}
	var jobs []Job
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
	outs, err := Run(ctx, jobs, opts)
	for i := range res.Candidates {
		cd := &res.Candidates[i]
		fo, so := outs[2*i], outs[2*i+1]
		cd.Failover = Summarize(fos[i].Params(), fo)
		cd.Failover.Seed = opts.Seed
		cd.Stability = SummarizeStability(sts[i].Params(), so)
		cd.Stability.Seed = opts.Seed
		cd.Objective, _ = ObjectiveValue(cd.Failover, c.Objective)
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

// TuneTable returns the text table of r's candidates: minimum and maximum
// timeout, spread, the
// objective, failover trials, unnecessary elections and pre-vote rounds
// per node-hour, leader changes per hour, and whether the candidate is
// feasible; the recommendation is marked "best".
func TuneTable(r TuneResult) Table {
	t := Table{Header: []string{"min", "max", "spread", r.Config.Objective, "trials",
		"elections/node-h", "prevotes/node-h", "leader chg/h", "feasible"}}
	for i, c := range r.Candidates {
		obj := fmtMS(c.Objective)
		trials := fmt.Sprint(c.Failover.Trials)
		if c.Failover.TimedOut > 0 {
			trials += fmt.Sprintf(" (%d cut)", c.Failover.TimedOut)
			if c.Objective >= c.Failover.Max {
				obj = ">=" + obj
			}
		}
		feasible := "no"
		switch {
		case !c.Complete:
			feasible = "partial"
		case c.Stability.Unsettled > 0:
			feasible = "no (unsettled)"
		case c.Feasible:
			feasible = "yes"
		}
		if i == r.Best {
			feasible += "  <- best"
		}
		t.Rows = append(t.Rows, []string{
			fmtMS(c.TimeoutMin), fmtMS(c.TimeoutMax),
			fmt.Sprintf("%g", c.Spread), obj, trials,
			fmt.Sprintf("%.2f", c.Stability.ElectionsPerNodeHour), fmt.Sprintf("%.2f", c.Stability.PreVotesPerNodeHour),
			fmt.Sprintf("%.2f", c.Stability.LeaderChangesPerHour), feasible,
		})
	}
	return t
}

// Recommendation returns the one-line verdict of r, e.g. "recommended:
// 150-300ms (p99 372ms, 0.00 unnecessary elections per node-hour <= 1)".
func (r TuneResult) Recommendation() string {
	bound := strconv.FormatFloat(r.Config.MaxElectionsPerNodeHour, 'g', -1, 64)
	if r.Best < 0 {
		return fmt.Sprintf("no candidate is feasible: every one exceeds %s unnecessary %s per node-hour or is incomplete; try larger minimums or spreads", bound, r.rounds())
	}
	c := r.Candidates[r.Best]
	return fmt.Sprintf("recommended: %s (%s %s, %.2f unnecessary %s per node-hour <= %s)",
		RangeLabel(c.TimeoutMin, c.TimeoutMax), r.Config.Objective, fmtMS(c.Objective), c.Unnecessary, r.rounds(), bound)
}

// rounds names what the bound counts.
func (r TuneResult) rounds() string {
	if r.Config.CountPreVotes {
		return "elections and pre-votes"
	}
	return "elections"
}

type tuneCandidateJSON struct {
	Label                string  `json:"label"`
	TimeoutMinMS         float64 `json:"timeout_min_ms"`
	TimeoutMaxMS         float64 `json:"timeout_max_ms"`
	Spread               float64 `json:"spread"`
	ObjectiveMS          float64 `json:"objective_ms"`
	FailoverTrials       int     `json:"failover_trials"`
	FailoverTimedOut     int     `json:"failover_timed_out"`
	P50MS                float64 `json:"p50_ms"`
	MeanMS               float64 `json:"mean_ms"`
	P90MS                float64 `json:"p90_ms"`
	P99MS                float64 `json:"p99_ms"`
	MaxMS                float64 `json:"max_ms"`
	StableTrials         int     `json:"stable_trials"`
	Unsettled            int     `json:"unsettled"`
	NodeHours            float64 `json:"node_hours"`
	Elections            int     `json:"elections"`
	PreVotes             int     `json:"prevotes"`
	LeaderChanges        int     `json:"leader_changes"`
	ElectionsPerNodeHour float64 `json:"elections_per_node_hour"`
	PreVotesPerNodeHour  float64 `json:"prevotes_per_node_hour"`
	LeaderChangesPerHour float64 `json:"leader_changes_per_hour"`
	Unnecessary          float64 `json:"unnecessary_per_node_hour"`
	Complete             bool    `json:"complete"`
	Feasible             bool    `json:"feasible"`
	Best                 bool    `json:"best"`
}

type tuneJSON struct {
	Experiment              string              `json:"experiment"`
	Nodes                   int                 `json:"nodes"`
	Latency                 string              `json:"latency,omitempty"`
	Disk                    string              `json:"disk,omitempty"`
	Loss                    float64             `json:"loss,omitempty"`
	Duplicate               float64             `json:"dup,omitempty"`
	Objective               string              `json:"objective"`
	MaxElectionsPerNodeHour float64             `json:"max_elections_per_node_hour"`
	CountPreVotes           bool                `json:"count_prevotes"`
	StableForS              float64             `json:"stable_for_s"`
	Seed                    uint64              `json:"seed"`
	Best                    *tuneCandidateJSON  `json:"best"`
	Candidates              []tuneCandidateJSON `json:"candidates"`
}

func (r TuneResult) candidateJSON(i int) tuneCandidateJSON {
	c := r.Candidates[i]
	f, s := c.Failover, c.Stability
	return tuneCandidateJSON{
		Label: RangeLabel(c.TimeoutMin, c.TimeoutMax), TimeoutMinMS: toMS(c.TimeoutMin), TimeoutMaxMS: toMS(c.TimeoutMax),
		Spread: c.Spread, ObjectiveMS: toMS(c.Objective), FailoverTrials: f.Trials, FailoverTimedOut: f.TimedOut,
		P50MS: toMS(f.P50), MeanMS: toMS(f.Mean), P90MS: toMS(f.P90), P99MS: toMS(f.P99), MaxMS: toMS(f.Max),
		StableTrials: s.Trials, Unsettled: s.Unsettled, NodeHours: round6(s.NodeHours),
		Elections: s.Elections, PreVotes: s.PreVotes, LeaderChanges: s.LeaderChanges,
		ElectionsPerNodeHour: round6(s.ElectionsPerNodeHour), PreVotesPerNodeHour: round6(s.PreVotesPerNodeHour),
		LeaderChangesPerHour: round6(s.LeaderChangesPerHour), Unnecessary: round6(c.Unnecessary),
		Complete: c.Complete, Feasible: c.Feasible, Best: i == r.Best,
	}
}

// WriteTuneJSON writes r as one indented JSON object: the model, the
// objective and bound, the best candidate (null if none) and every
// candidate.
func WriteTuneJSON(w io.Writer, r TuneResult) error {
	b := r.Config.Base
	j := tuneJSON{
		Experiment: "tune", Nodes: b.Nodes, Loss: b.Loss, Duplicate: b.Duplicate,
		Objective: r.Config.Objective, MaxElectionsPerNodeHour: r.Config.MaxElectionsPerNodeHour, CountPreVotes: r.Config.CountPreVotes,
		StableForS: r.Config.StableFor.Seconds(), Seed: r.Seed, Candidates: []tuneCandidateJSON{},
	}
	if b.Latency != nil {
		j.Latency = b.Latency.String()
	}
	if b.Disk != nil {
		j.Disk = b.Disk.String()
	}
	for i := range r.Candidates {
		j.Candidates = append(j.Candidates, r.candidateJSON(i))
	}
	if r.Best >= 0 {
		best := j.Candidates[r.Best]
		j.Best = &best
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// WriteTuneCSV writes a header and one row per candidate.
func WriteTuneCSV(w io.Writer, r TuneResult) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"label", "timeout_min_ms", "timeout_max_ms", "spread", "objective", "objective_ms",
		"failover_trials", "failover_timed_out", "p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms",
		"stable_trials", "unsettled", "node_hours", "elections", "prevotes", "leader_changes",
		"elections_per_node_hour", "prevotes_per_node_hour", "leader_changes_per_hour", "unnecessary_per_node_hour", "complete", "feasible", "best", "seed"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for i := range r.Candidates {
		j := r.candidateJSON(i)
		_ = cw.Write([]string{j.Label, f(j.TimeoutMinMS), f(j.TimeoutMaxMS), f(j.Spread), r.Config.Objective, f(j.ObjectiveMS),
			strconv.Itoa(j.FailoverTrials), strconv.Itoa(j.FailoverTimedOut), f(j.P50MS), f(j.MeanMS), f(j.P90MS), f(j.P99MS), f(j.MaxMS),
			strconv.Itoa(j.StableTrials), strconv.Itoa(j.Unsettled), f(j.NodeHours), strconv.Itoa(j.Elections), strconv.Itoa(j.PreVotes),
			strconv.Itoa(j.LeaderChanges), f(j.ElectionsPerNodeHour), f(j.PreVotesPerNodeHour), f(j.LeaderChangesPerHour), f(j.Unnecessary),
			strconv.FormatBool(j.Complete), strconv.FormatBool(j.Feasible), strconv.FormatBool(j.Best), strconv.FormatUint(r.Seed, 10)})
	}
	cw.Flush()
	return cw.Error()
}
