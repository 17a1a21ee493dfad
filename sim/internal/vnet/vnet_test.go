package vnet

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/memnet"
	"github.com/raftick/raftick/wheel"
)

func newVirtual(t *testing.T) *wheel.Virtual {
	t.Helper()
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	return v
}

// TestRunLimit: Run returns done() when the next deadline lies beyond the
// limit, without advancing to it.
func TestRunLimit(t *testing.T) {
	v := newVirtual(t)
	n := 0
	c := memnet.NewCourier(v.Wheel, func(int) { n++ })
	require.NoError(t, c.Send(1, 10*time.Millisecond))
	require.NoError(t, c.Send(2, 100*time.Millisecond))
	require.False(t, Run(v, 50*time.Millisecond, func() bool { return n == 2 }, nil, 0))
	require.Equal(t, 1, n)
	require.Equal(t, 10*time.Millisecond, v.Now())
}

// TestRunStop: stop is asked every `every` instants and ends the run.
func TestRunStop(t *testing.T) {
	v := newVirtual(t)
	var c *memnet.Courier[int]
	c = memnet.NewCourier(v.Wheel, func(i int) { _ = c.Send(i+1, time.Millisecond) }) // runs forever
	require.NoError(t, c.Send(0, time.Millisecond))
	asked := 0
	ok := Run(v, time.Hour, func() bool { return false }, func() bool { asked++; return asked == 3 }, 4)
	require.False(t, ok)
	require.Equal(t, 3, asked)
	require.Equal(t, 11*time.Millisecond, v.Now(), "stopped before the 12th instant")
}

// TestCopies: no draw for zero probabilities, certain loss and
// duplication, and proportions near the probabilities otherwise.
func TestCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	probe := *rng
	require.Equal(t, 1, Copies(rng, 0, 0))
	require.Equal(t, probe, *rng, "drew for zero probabilities")
	require.Equal(t, 0, Copies(rng, 1, 1))
	require.Equal(t, 2, Copies(rng, 0, 1))
	const n = 100000
	var count [3]int
	for range n {
		count[Copies(rng, 0.2, 0.5)]++
	}
	// Lost 20%; of the rest, half twice. Five standard deviations.
	require.InDelta(t, 0.2*n, count[0], 5*math.Sqrt(n*0.2*0.8))
	require.InDelta(t, 0.4*n, count[2], 5*math.Sqrt(n*0.4*0.6))
}
