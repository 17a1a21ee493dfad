package sim

import (
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
	s := Summarize(outs)
	require.Equal(t, 4, s.Trials)
	require.Equal(t, 1, s.TimedOut)
	require.Equal(t, 10*ms, s.Min)
	require.Equal(t, 60*time.Second, s.Max)
	require.Equal(t, 20*ms, s.P50)
	require.InDelta(t, 7/10.0, s.SplitVoteRate, 1e-12)
	require.InDelta(t, 2.5, s.MeanTerms, 1e-12)
	require.InDelta(t, 40, s.MessagesPerElection, 1e-12)
	cdf := s.CDF()
	require.Len(t, cdf, 4)
	require.Equal(t, 1.0, cdf[3].Fraction)
	require.Equal(t, 10*ms, cdf[0].Time)

	empty := Summarize(nil)
	require.Zero(t, empty.Trials)
	require.Empty(t, empty.CDF())
}
