package experiment

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

// TestClockRate: each server's timeouts are scaled by its own rate, drawn
// per trial within the bound; with exact 150ms timeouts the first
// election of a cold start comes at 150ms times the fastest rate.
func TestClockRate(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 150*ms
	s.Latency, s.Disk = sim.Fixed(ms), nil
	s.ClockRate = 0.01
	require.NoError(t, s.Validate())
	for i := range 20 {
		first := earliest(firstElections(t, s, rand.New(rand.NewPCG(seed, uint64(i))), 1))
		require.InDelta(t, float64(150*ms), float64(first), 0.01*float64(150*ms))
		require.NotEqual(t, 150*ms, first, "a rate of exactly 1 has probability 0")
	}
	for _, bad := range []float64{-0.1, 0.6} {
		s.ClockRate = bad
		require.ErrorIs(t, s.Validate(), ErrInvalidConfig)
	}
	s.ClockRate, s.Tick, s.TimeoutMax = 0.01, 10*ms, 300*ms
	require.ErrorIs(t, s.Validate(), ErrInvalidConfig)
}

// TestLatenessSpread: the timer lateness is scaled by one factor per
// trial (every server's first timeout comes at the same instant), or by
// one per server with LatenessPerServer, within the bound.
func TestLatenessSpread(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 150*ms
	s.Latency, s.Disk = sim.Fixed(10*ms), nil
	s.TimerLateness = sim.Fixed(ms)
	s.LatenessSpread = 0.5
	firsts := func(i int) map[election.ID]time.Duration {
		first := firstElections(t, s, rand.New(rand.NewPCG(seed, uint64(i))), s.Nodes)
		require.Len(t, first, s.Nodes, "every server times out before a request reaches it")
		for _, at := range first {
			require.GreaterOrEqual(t, at, 150*ms+ms/2)
			require.LessOrEqual(t, at, 150*ms+3*ms/2)
		}
		return first
	}
	for i := range 10 {
		f := firsts(i)
		for id := range f {
			require.Equal(t, f[1], f[id], "one factor for the trial")
		}
	}
	s.LatenessPerServer = true
	for i := range 10 {
		f := firsts(i)
		require.NotEqual(t, f[1], f[2], "a factor per server")
	}
	s.LatenessPerServer = false
	for _, bad := range []float64{-0.1, 1.1} {
		s.LatenessSpread = bad
		require.ErrorIs(t, s.Validate(), ErrInvalidConfig)
	}
	s.LatenessSpread, s.TimerLateness = 0.5, nil
	require.ErrorIs(t, s.Validate(), ErrInvalidConfig, "nothing to scale")
	s.LatenessSpread, s.LatenessPerServer = 0, true
	require.ErrorIs(t, s.Validate(), ErrInvalidConfig, "per server needs a spread")
}

// firstElections starts a cold cluster of s drawing from rng and returns
// when each server first started an election, once n of them did (or a
// second passed).
func firstElections(t *testing.T, s Setup, rng *rand.Rand, n int) map[election.ID]time.Duration {
	t.Helper()
	require.NoError(t, s.Validate())
	first := map[election.ID]time.Duration{}
	c := s.Config(rng)
	c.Observer = func(e election.Event) {
		if _, ok := first[e.Node]; !ok && e.Type == election.EventElectionStart {
			first[e.Node] = e.At
		}
	}
	cl, err := sim.NewCluster(c)
	require.NoError(t, err)
	require.NoError(t, cl.Start())
	cl.RunFor(time.Second, func() bool { return len(first) >= n })
	cl.Close()
	require.GreaterOrEqual(t, len(first), n)
	return first
}

// earliest returns the smallest of the times.
func earliest(times map[election.ID]time.Duration) time.Duration {
	var first time.Duration
	for _, at := range times {
		if first == 0 || at < first {
			first = at
		}
	}
	return first
}
