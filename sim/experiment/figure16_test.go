package experiment

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
)

func TestFigureRowsAreThePapers(t *testing.T) {
	for _, r := range PaperRows() {
		fig, ok := FigureRow(RangeLabel(r.Min, r.Max))
		require.True(t, ok, "row %s", RangeLabel(r.Min, r.Max))
		for i := 1; i < len(fig); i++ {
			require.Less(t, fig[i-1], fig[i], "row %s: percentiles ascend", RangeLabel(r.Min, r.Max))
		}
	}
	_, ok := FigureRow("150-250ms")
	require.False(t, ok)
	// The quoted figures the data must give back (within reading error).
	fig, _ := FigureRow("150-155ms")
	require.InDelta(t, 287, fig[1].Seconds()*1000, 1, "the paper's 150-155ms median")
}

func TestFigure16Cells(t *testing.T) {
	ms := time.Millisecond
	mk := func(label string, p10, p50, p90, p99 time.Duration) Result {
		return Result{Label: label, Summary: sim.Summary{Trials: 10, P10: p10, P50: p50, P90: p90, P99: p99}}
	}
	fig, _ := FigureRow("150-155ms")
	rs := []Result{
		mk("150-155ms", fig[0], fig[1]*111/100, fig[2]*89/100, fig[3]*109/100),
		mk("150-155ms", 0, 0, 0, 0),     // a repeated row counts once
		mk("150-250ms", ms, ms, ms, ms), // not a row of the figure
		{Label: "150-175ms"},            // nothing measured
	}
	cells := Figure16Cells(rs)
	require.Len(t, cells, 4)
	var agree []bool
	for _, c := range cells {
		require.Equal(t, "150-155ms", c.Label)
		agree = append(agree, c.Agrees())
	}
	require.Equal(t, []bool{true, false, false, true}, agree)
	require.InDelta(t, 0.11, cells[1].Error(), 0.001)
	require.Equal(t, []string{"p10", "p50", "p90", "p99"}, []string{cells[0].Stat, cells[1].Stat, cells[2].Stat, cells[3].Stat})
}
