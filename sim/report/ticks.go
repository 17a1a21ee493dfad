package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/raftick/raftick/sim/experiment"
)

// TicksTable returns the text table of experiment.RunTickCost's rows:
// the timers, failover trials, p50 and p99, the split-vote rate, and the
// unnecessary elections per node-hour with their 95% interval and the
// node-hours measured.
func TicksTable(rows []experiment.TickRow) Table {
	t := Table{Header: []string{"timers", "trials", "p50", "p99", "split", "elections/node-h", "95% CI", "node-h"}}
	for _, r := range rows {
		s := r.Failover.Summary
		t.Rows = append(t.Rows, []string{
			r.Label(), strconv.Itoa(s.Trials), fmtMS(s.P50), fmtMS(s.P99),
			fmt.Sprintf("%.1f%%", 100*s.SplitVoteRate),
			fmt.Sprintf("%.2f", r.Stability.ElectionsPerNodeHour), rateInterval(r.RateLow, r.RateHigh),
			fmt.Sprintf("%.1f", r.Stability.NodeHours),
		})
	}
	return t
}

// WriteTicksJSON writes one JSON object per row on one line each: the
// failover result record of the row (Meta.WriteJSON, its label "exact"
// or "tick 100ms"), followed by tick_ms, stable_windows, node_hours,
// elections, elections_per_node_hour and its 95% interval
// (elections_per_node_hour_low, _high; high is null when unbounded).
func (m Meta) WriteTicksJSON(w io.Writer, rows []experiment.TickRow) error {
	for i, row := range rows {
		r := m.resultRecord(row.Failover, m.requested(i, row.Failover.Trials), false)
		r.add("tick_ms", toMS(row.Tick))
		r.add("stable_windows", row.Stability.Trials)
		r.add("node_hours", round6(row.Stability.NodeHours))
		r.add("elections", row.Stability.Elections)
		r.add("elections_per_node_hour", round6(row.Stability.ElectionsPerNodeHour))
		r.add("elections_per_node_hour_low", round6(row.RateLow))
		var hi *float64
		if h := round6(row.RateHigh); row.RateHigh <= 1e300 {
			hi = &h
		}
		r.add("elections_per_node_hour_high", hi)
		if err := r.writeJSON(w); err != nil {
			return err
		}
	}
	return nil
}
