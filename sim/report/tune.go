package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim/experiment"
)

// interval formats a 95% confidence interval of durations: "[360ms,
// 390ms]", or "[360ms, ?]" without an upper bound.
func interval(lo, hi time.Duration, bounded bool) string {
	if !bounded {
		return "[" + fmtMS(lo) + ", ?]"
	}
	return "[" + fmtMS(lo) + ", " + fmtMS(hi) + "]"
}

// rateInterval formats a 95% confidence interval of rates.
func rateInterval(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return fmt.Sprintf("[%.2f, ?]", lo)
	}
	return fmt.Sprintf("[%.2f, %.2f]", lo, hi)
}

// TuneTable returns the text table of r's candidates: minimum and maximum
// timeout, spread, the objective and its 95% interval, failover trials,
// unnecessary elections per node-hour and their 95% interval (exact
// Poisson), the stable windows' node-hours, pre-vote rounds per node-hour,
// leader changes per hour, and what the trials say about the bound; the
// recommendation is marked "best" and the runner-up "runner-up".
func TuneTable(r experiment.TuneResult) Table {
	obj := r.Config.Objective
	t := Table{Header: []string{"min", "max", "spread", obj, obj + " 95% CI", "trials",
		r.Config.RateName() + "/node-h", "95% CI", "node-h", "prevotes/node-h", "leader chg/h", "bound"}}
	for i, c := range r.Candidates {
		o := fmtMS(c.Objective)
		trials := fmt.Sprint(c.Failover.Trials)
		if c.Failover.TimedOut > 0 {
			trials += fmt.Sprintf(" (%d cut)", c.Failover.TimedOut)
			if c.Objective >= c.Failover.Max {
				o = ">=" + o
			}
		}
		status := map[string]string{"feasible": "met", "infeasible": "exceeded", "uncertain": "uncertain",
			"unsettled": "exceeded (unsettled)", "partial": "partial"}[c.Status]
		switch i {
		case r.Best:
			status += "  <- best"
		case r.RunnerUp:
			status += "  <- runner-up"
		}
		if c.Failover.Trials == 0 && c.Stability.Trials == 0 {
			// Nothing ran (an interrupt): no figure, rather than zeros
			// that read as measurements.
			t.Rows = append(t.Rows, []string{fmtMS(c.TimeoutMin), fmtMS(c.TimeoutMax), fmt.Sprintf("%g", c.Spread),
				"–", "–", "0", "–", "–", "–", "–", "–", status})
			continue
		}
		t.Rows = append(t.Rows, []string{
			fmtMS(c.TimeoutMin), fmtMS(c.TimeoutMax), fmt.Sprintf("%g", c.Spread), o,
			interval(c.ObjectiveLow, c.ObjectiveHigh, c.ObjectiveBounded), trials,
			fmt.Sprintf("%.2f", c.Unnecessary), rateInterval(c.RateLow, c.RateHigh), fmt.Sprintf("%.2f", c.Stability.NodeHours),
			fmt.Sprintf("%.2f", c.Stability.PreVotesPerNodeHour), fmt.Sprintf("%.2f", c.Stability.LeaderChangesPerHour), status,
		})
	}
	return t
}

// Recommendation returns the verdict of r in one to three lines: the
// recommendation with the 95% intervals of its objective and of its
// unnecessary elections, the runner-up with its margin, and, when the
// trials could not settle the decision, what they cannot tell apart.
func Recommendation(r experiment.TuneResult) string {
	bound := strconv.FormatFloat(r.Config.MaxElectionsPerNodeHour, 'g', -1, 64)
	obj := r.Config.Objective
	var b strings.Builder
	if r.Best < 0 {
		fmt.Fprintf(&b, "no candidate is feasible: none is known to stay under %s unnecessary %s per node-hour (95%% interval) with all its trials; try larger minimums or spreads, or more --stable-trials",
			bound, r.RoundsCounted())
	} else {
		c := r.Candidates[r.Best]
		fmt.Fprintf(&b, "recommended: %s (%s %s, 95%% CI %s; %.2f unnecessary %s per node-hour, 95%% CI %s <= %s)",
			experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax), obj, fmtMS(c.Objective), interval(c.ObjectiveLow, c.ObjectiveHigh, c.ObjectiveBounded),
			c.Unnecessary, r.RoundsCounted(), rateInterval(c.RateLow, c.RateHigh), bound)
		if r.RunnerUp >= 0 {
			u := r.Candidates[r.RunnerUp]
			overlap := "intervals apart"
			if (!c.ObjectiveBounded || u.ObjectiveLow <= c.ObjectiveHigh) && (!u.ObjectiveBounded || c.ObjectiveLow <= u.ObjectiveHigh) {
				overlap = "intervals overlap"
			}
			margin := fmtMS(u.Objective-c.Objective) + " slower"
			if u.Objective < c.Objective {
				margin = fmtMS(c.Objective-u.Objective) + " faster"
			}
			fmt.Fprintf(&b, "\nrunner-up: %s (%s %s, %s, %s; bound %s)", experiment.RangeLabel(u.TimeoutMin, u.TimeoutMax), obj,
				fmtMS(u.Objective), margin, overlap, map[string]string{"feasible": "met", "uncertain": "uncertain"}[u.Status])
		}
	}
	rounds := ""
	if r.Rounds > 0 {
		rounds = fmt.Sprintf(" after %d refinement round(s)", r.Rounds)
	}
	if !r.Decided {
		fmt.Fprintf(&b, "\ncannot tell%s: %s; run more --trials or --stable-trials to decide", rounds, r.Undecided)
	} else if r.Rounds > 0 {
		fmt.Fprintf(&b, "\ndecided%s", rounds)
	}
	return b.String()
}

// tuneCandidateRecord returns the fields of candidate i's output object.
func (m Meta) tuneCandidateRecord(r experiment.TuneResult, i int) record {
	c := r.Candidates[i]
	f, s := c.Failover, c.Stability
	var rec record
	m.head(&rec, "tune-candidate")
	rec.add("seed", r.Seed)
	rec.add("trials", f.Trials+s.Trials)
	rec.add("trials_requested", c.FailoverRequested+c.StableRequested)
	rec.add("label", experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax))
	rec.add("timeout_min_ms", toMS(c.TimeoutMin))
	rec.add("timeout_max_ms", toMS(c.TimeoutMax))
	rec.add("spread", c.Spread)
	rec.add("objective", r.Config.Objective)
	rec.add("objective_ms", toMS(c.Objective))
	rec.add("objective_ci95_low_ms", toMS(c.ObjectiveLow))
	var hi *float64
	if c.ObjectiveBounded {
		v := toMS(c.ObjectiveHigh)
		hi = &v
	}
	rec.add("objective_ci95_high_ms", hi)
	rec.add("failover_trials", f.Trials)
	rec.add("failover_censored", f.TimedOut)
	rec.add("failover_no_leader", f.NoLeader)
	rec.add("lower_bounds", nonNil(lowerBounds(f.Summary)))
	rec.stats(f.Summary)
	rec.add("stable_trials", s.Trials)
	rec.add("unsettled", s.Unsettled)
	rec.add("node_hours", round6(s.NodeHours))
	rec.add("elections", s.Elections)
	rec.add("prevotes", s.PreVotes)
	rec.add("leader_changes", s.LeaderChanges)
	rec.add("elections_per_node_hour", round6(s.ElectionsPerNodeHour))
	rec.add("prevotes_per_node_hour", round6(s.PreVotesPerNodeHour))
	rec.add("leader_changes_per_hour", round6(s.LeaderChangesPerHour))
	rec.add("unnecessary_per_node_hour", round6(c.Unnecessary))
	rec.add("unnecessary_ci95_low", round6(c.RateLow))
	var rhi *float64
	if !math.IsInf(c.RateHigh, 1) {
		v := round6(c.RateHigh)
		rhi = &v
	}
	rec.add("unnecessary_ci95_high", rhi)
	rec.add("max_elections_per_node_hour", r.Config.MaxElectionsPerNodeHour)
	rec.add("count_prevotes", r.Config.CountPreVotes)
	rec.add("stable_for_s", r.Config.StableFor.Seconds())
	rec.add("status", c.Status)
	rec.add("complete", c.Complete)
	rec.add("feasible", c.Feasible)
	rec.add("best", i == r.Best)
	rec.add("runner_up", i == r.RunnerUp)
	rec.add("params", params(c.Failover.Setup))
	return rec
}

// tuneVerdictRecord returns the fields of the verdict object.
func (m Meta) tuneVerdictRecord(r experiment.TuneResult) record {
	var rec record
	m.head(&rec, "tune-verdict")
	rec.add("seed", r.Seed)
	done, requested := 0, 0
	for _, c := range r.Candidates {
		done += c.Failover.Trials + c.Stability.Trials
		requested += c.FailoverRequested + c.StableRequested
	}
	rec.add("trials", done)
	rec.add("trials_requested", requested)
	rec.add("objective", r.Config.Objective)
	rec.add("max_elections_per_node_hour", r.Config.MaxElectionsPerNodeHour)
	label := func(i int) any {
		if i < 0 {
			return nil
		}
		c := r.Candidates[i]
		return experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax)
	}
	rec.add("best", label(r.Best))
	rec.add("runner_up", label(r.RunnerUp))
	var margin *float64
	if r.Best >= 0 && r.RunnerUp >= 0 {
		v := toMS(r.Candidates[r.RunnerUp].Objective - r.Candidates[r.Best].Objective)
		margin = &v
	}
	rec.add("runner_up_margin_ms", margin)
	rec.add("refinement_rounds", r.Rounds)
	rec.add("decided", r.Decided)
	rec.add("undecided", r.Undecided)
	rec.add("candidates", len(r.Candidates))
	rec.add("params", params(r.Config.Base))
	return rec
}

// WriteTuneJSON writes r as JSON Lines, with no Meta (see
// Meta.WriteTuneJSON).
func WriteTuneJSON(w io.Writer, r experiment.TuneResult) error { return Meta{}.WriteTuneJSON(w, r) }

// WriteTuneJSON writes r as JSON Lines: one self-describing
// "tune-candidate" object per candidate (its setup, objective and
// unnecessary elections with their 95% intervals, status), then one
// "tune-verdict" object (best, runner-up and margin, refinement rounds,
// whether the decision is stable).
func (m Meta) WriteTuneJSON(w io.Writer, r experiment.TuneResult) error {
	for i := range r.Candidates {
		if err := m.tuneCandidateRecord(r, i).writeJSON(w); err != nil {
			return err
		}
	}
	if m.Interrupted {
		return nil // a search stopped midway has no verdict
	}
	return m.tuneVerdictRecord(r).writeJSON(w)
}

// WriteTuneCSV writes r's candidates as CSV, with no Meta.
func WriteTuneCSV(w io.Writer, r experiment.TuneResult) error { return Meta{}.WriteTuneCSV(w, r) }

// WriteTuneCSV writes a header and one row per candidate, with the
// fields of the "tune-candidate" JSON objects as columns.
func (m Meta) WriteTuneCSV(w io.Writer, r experiment.TuneResult) error {
	cw := csv.NewWriter(w)
	for i := range r.Candidates {
		rec := m.tuneCandidateRecord(r, i)
		if i == 0 {
			if err := cw.Write(rec.csvHeader()); err != nil {
				return err
			}
		}
		if err := cw.Write(rec.csvRow()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
