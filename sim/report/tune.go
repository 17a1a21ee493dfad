package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/raftick/raftick/sim/experiment"
)

// TuneTable returns the text table of r's candidates: minimum and maximum
// timeout, spread, the
// objective, failover trials, unnecessary elections and pre-vote rounds
// per node-hour, leader changes per hour, and whether the candidate is
// feasible; the recommendation is marked "best".
func TuneTable(r experiment.TuneResult) Table {
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
func Recommendation(r experiment.TuneResult) string {
	bound := strconv.FormatFloat(r.Config.MaxElectionsPerNodeHour, 'g', -1, 64)
	if r.Best < 0 {
		return fmt.Sprintf("no candidate is feasible: every one exceeds %s unnecessary %s per node-hour or is incomplete; try larger minimums or spreads", bound, r.Rounds())
	}
	c := r.Candidates[r.Best]
	return fmt.Sprintf("recommended: %s (%s %s, %.2f unnecessary %s per node-hour <= %s)",
		experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax), r.Config.Objective, fmtMS(c.Objective), c.Unnecessary, r.Rounds(), bound)
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

func candidateJSON(r experiment.TuneResult, i int) tuneCandidateJSON {
	c := r.Candidates[i]
	f, s := c.Failover, c.Stability
	return tuneCandidateJSON{
		Label: experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax), TimeoutMinMS: toMS(c.TimeoutMin), TimeoutMaxMS: toMS(c.TimeoutMax),
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
func WriteTuneJSON(w io.Writer, r experiment.TuneResult) error {
	b := r.Config.Base
	j := tuneJSON{
		Experiment: "tune", Nodes: b.Nodes, Loss: b.Loss, Duplicate: b.Duplicate,
		Objective: r.Config.Objective, MaxElectionsPerNodeHour: r.Config.MaxElectionsPerNodeHour, CountPreVotes: r.Config.CountPreVotes,
		StableForS: r.Config.StableFor.Seconds(), Seed: r.Seed, Candidates: []tuneCandidateJSON{},
	}
	j.Latency, j.Disk = spec(b.Latency), spec(b.Disk)
	for i := range r.Candidates {
		j.Candidates = append(j.Candidates, candidateJSON(r, i))
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
func WriteTuneCSV(w io.Writer, r experiment.TuneResult) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"label", "timeout_min_ms", "timeout_max_ms", "spread", "objective", "objective_ms",
		"failover_trials", "failover_timed_out", "p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms",
		"stable_trials", "unsettled", "node_hours", "elections", "prevotes", "leader_changes",
		"elections_per_node_hour", "prevotes_per_node_hour", "leader_changes_per_hour", "unnecessary_per_node_hour", "complete", "feasible", "best", "seed"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for i := range r.Candidates {
		j := candidateJSON(r, i)
		_ = cw.Write([]string{j.Label, f(j.TimeoutMinMS), f(j.TimeoutMaxMS), f(j.Spread), r.Config.Objective, f(j.ObjectiveMS),
			strconv.Itoa(j.FailoverTrials), strconv.Itoa(j.FailoverTimedOut), f(j.P50MS), f(j.MeanMS), f(j.P90MS), f(j.P99MS), f(j.MaxMS),
			strconv.Itoa(j.StableTrials), strconv.Itoa(j.Unsettled), f(j.NodeHours), strconv.Itoa(j.Elections), strconv.Itoa(j.PreVotes),
			strconv.Itoa(j.LeaderChanges), f(j.ElectionsPerNodeHour), f(j.PreVotesPerNodeHour), f(j.LeaderChangesPerHour), f(j.Unnecessary),
			strconv.FormatBool(j.Complete), strconv.FormatBool(j.Feasible), strconv.FormatBool(j.Best), strconv.FormatUint(r.Seed, 10)})
	}
	cw.Flush()
	return cw.Error()
}
