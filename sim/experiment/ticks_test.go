package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

func tickCost() TickCost {
	s := PlainModel()
	s.TimeoutMin, s.TimeoutMax = time.Second, 2*time.Second
	s.Latency, s.Loss = sim.LogNormal(5*ms, 0.8), 0.05
	return TickCost{Setup: s, Ticks: DefaultTicks, For: 10 * time.Second}
}

// TestTickCostDeterministic: the rows are a function of the seed, not of
// the number of workers, and each row runs the cluster with its tick.
func TestTickCostDeterministic(t *testing.T) {
	seed := testseed.Seed(t)
	c := tickCost()
	run := func(workers int) []TickRow {
		rows, err := RunTickCost(context.Background(), c, 30, 3, sim.RunOptions{Seed: seed, Workers: workers})
		require.NoError(t, err)
		return rows
	}
	a, b := run(1), run(3)
	require.Len(t, a, len(DefaultTicks))
	for i := range a {
		require.Equal(t, a[i].Failover.Times(), b[i].Failover.Times(), "row %d", i)
		require.Equal(t, a[i].Failover.SplitVoteRate, b[i].Failover.SplitVoteRate)
		require.Equal(t, a[i].Stability, b[i].Stability)
		require.Equal(t, [2]float64{a[i].RateLow, a[i].RateHigh}, [2]float64{b[i].RateLow, b[i].RateHigh})
	}
	for i, r := range a {
		require.Equal(t, DefaultTicks[i], r.Tick)
		require.Equal(t, DefaultTicks[i], r.Failover.Setup.Tick)
		require.Equal(t, 30, r.Failover.Trials)
		require.Equal(t, 3, r.Stability.Trials)
		require.InDelta(t, 3*10.0/3600*5, r.Stability.NodeHours, 1e-9)
		require.LessOrEqual(t, r.RateLow, r.Stability.ElectionsPerNodeHour)
		require.GreaterOrEqual(t, r.RateHigh, r.Stability.ElectionsPerNodeHour)
	}
	require.Equal(t, "exact", a[0].Label())
	require.Equal(t, "tick 100ms", a[3].Label())
}

func TestTickCostValidate(t *testing.T) {
	c := tickCost()
	require.NoError(t, c.Validate())
	for _, tc := range []struct {
		ticks []time.Duration
		field string
	}{
		{nil, "Ticks"},
		{[]time.Duration{-time.Millisecond}, "Ticks"},
		{[]time.Duration{0, 300 * ms}, "Ticks"}, // 1s is not a whole number of 300ms ticks
	} {
		c.Ticks = tc.ticks
		err := c.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig)
		var fe *sim.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
	}
	// Granularity and lateness give way to the ticks.
	c = tickCost()
	c.Granularity, c.TimerLateness = ms, sim.Uniform(0, 200*time.Microsecond)
	require.NoError(t, c.Validate())
	require.Zero(t, c.Row(10*ms).Granularity)
	require.Nil(t, c.Row(0).TimerLateness)
}
