package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	d := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x)
		}
		return out
	}
	for _, tc := range []struct {
		xs   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{d(7), 1, 7},
		{d(7), 100, 7},
		{d(1, 2, 3, 4), 50, 2},
		{d(1, 2, 3, 4), 51, 3},
		{d(1, 2, 3, 4), 100, 4},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 10, 1},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9},
		{d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10},
		{d(1, 2, 3), 0, 1},
	} {
		require.Equal(t, tc.want, Percentile(tc.xs, tc.p), "%v p%v", tc.xs, tc.p)
	}
}

func TestSummarize(t *testing.T) {
	outs := []Outcome{
		{Time: 30 * ms, Terms: 1, Messages: 10, OK: true},
		{Time: 10 * ms, Terms: 1, Messages: 10, OK: true},
		{Time: 20 * ms, Terms: 3, Splits: 2, Messages: 40, OK: true},
		{Time: 60 * time.Second, Terms: 5, Splits: 5, Messages: 100},
	}
	s := Summarize(Params{Experiment: "failover", Label: "x"}, outs)
	require.Equal(t, 4, s.Trials)
	require.Equal(t, 1, s.TimedOut)
	require.Equal(t, 10*ms, s.Min)
	require.Equal(t, 60*time.Second, s.Max)
	require.Equal(t, 20*ms, s.P50)
	require.InDelta(t, 7/10.0, s.SplitVoteRate, 1e-12)
	require.InDelta(t, 2.5, s.MeanTerms, 1e-12)
	require.InDelta(t, 40, s.MessagesPerElection, 1e-12)
	require.True(t, math.IsNaN(s.Analytic))
	cdf := s.CDF()
	require.Len(t, cdf, 4)
	require.Equal(t, 1.0, cdf[3].Fraction)
	require.Equal(t, 10*ms, cdf[0].Time)

	empty := Summarize(Params{}, nil)
	require.Zero(t, empty.Trials)
	require.Empty(t, empty.CDF())
}

func TestJSONFieldNames(t *testing.T) {
	s := Summarize(Failover{LAN()}.Params(), []Outcome{{Time: 287 * ms, Terms: 2, Splits: 1, OK: true}})
	s.Seed = 7
	s.Paper = []PaperFigure{{"p50", "~", 287 * ms}}
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s, false))
	require.Equal(t, 1, strings.Count(b.String(), "\n"), "one object per line")
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	for _, k := range []string{"experiment", "nodes", "timeout_min_ms", "timeout_max_ms", "trials", "seed", "min_ms", "p10_ms",
		"p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms", "split_vote_rate", "mean_terms", "messages_per_election", "paper"} {
		require.Contains(t, m, k)
	}
	require.Equal(t, "failover", m["experiment"])
	require.Equal(t, 150.0, m["timeout_min_ms"])
	require.Equal(t, 287.0, m["p50_ms"])
	require.Equal(t, 0.5, m["split_vote_rate"])
	require.Equal(t, 7.0, m["seed"])

	b.Reset()
	require.NoError(t, WriteJSONArray(&b, []Summary{s, s}, true))
	var arr []map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &arr))
	require.Len(t, arr, 2)
	require.Contains(t, arr[0], "cdf")
}

func TestCSVAndTable(t *testing.T) {
	a := Summarize(Params{Experiment: "failover", Label: "150-155ms", Nodes: 5}, []Outcome{{Time: 287 * ms, Terms: 1, OK: true}})
	b := Summarize(Params{Experiment: "failover", Label: "12-24ms", Nodes: 5}, []Outcome{{Time: 35 * ms, Terms: 1, OK: true}, {Time: time.Minute, Terms: 9, Splits: 9}})
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []Summary{a, b}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "experiment,label,nodes,alive,timeout_min_ms"))
	require.Contains(t, lines[1], "150-155ms")

	buf.Reset()
	require.NoError(t, SummaryTable([]Summary{a, b}, false).Write(&buf))
	want := `timeout          trials    min    p10    p50   mean     max` // prefix check below
	_ = want
	out := buf.String()
	rows := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, rows, 3)
	require.Equal(t, len([]rune(rows[0])), len([]rune(rows[1])), "aligned:\n%s", out)
	require.Equal(t, len([]rune(rows[0])), len([]rune(rows[2])), "aligned:\n%s", out)
	for _, r := range rows {
		require.Equal(t, strings.TrimRight(r, " "), r, "no trailing spaces")
	}
	require.Contains(t, rows[2], "(1 cut)")
	require.Contains(t, rows[2], ">=60.0s")

	buf.Reset()
	require.NoError(t, WriteCDFCSV(&buf, []Summary{a}))
	require.Equal(t, "label,ms,fraction\n150-155ms,287,1\n", buf.String())
}

func TestPlot(t *testing.T) {
	a := Summarize(Params{Label: "150-155ms"}, []Outcome{{Time: 150 * ms}, {Time: 287 * ms}, {Time: 300 * ms}})
	b := Summarize(Params{Label: "150-300ms"}, []Outcome{{Time: 160 * ms}, {Time: 190 * ms}})
	panels := []Panel{{Title: "top", Summaries: []Summary{a, b}}, {Title: "bottom", Summaries: []Summary{b}}}
	var svg bytes.Buffer
	require.NoError(t, WritePlot(&svg, "svg", panels))
	require.Contains(t, svg.String(), "<svg")
	require.Contains(t, svg.String(), "150-155ms")
	var png bytes.Buffer
	require.NoError(t, WritePlot(&png, "png", panels[:1]))
	require.True(t, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	require.ErrorIs(t, WritePlot(&png, "pdf", panels), ErrPlotFormat)
	require.Error(t, WritePlot(&png, "svg", nil))
	_, err := PlotFormat("x.jpg")
	require.ErrorIs(t, err, ErrPlotFormat)
	f, err := PlotFormat("X.SVG")
	require.NoError(t, err)
	require.Equal(t, "svg", f)
}
