package repeated_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/repeated"
)

const maxDuration = time.Duration(math.MaxInt64)

// chiSquare19 is the 0.999 quantile of the chi-square distribution with 19
// degrees of freedom: with a fixed seed the check is deterministic, and a
// correct uniform draw would fail it with probability 0.001 per seed.
const chiSquare19 = 43.82

// TestJitterDistributions draws from every policy with a fixed seed and
// checks that the draws stay in the documented range [lo, hi) and cover it
// uniformly (20 equal buckets, chi-square test).
func TestJitterDistributions(t *testing.T) {
	cases := []struct {
		name   string
		j      repeated.Jitter
		base   time.Duration
		st     repeated.State
		lo, hi time.Duration
	}{
		{"uniform-extra", repeated.UniformExtra(50 * ms), 150 * ms, repeated.State{}, 150 * ms, 200 * ms},
		{"proportional f=1", repeated.Proportional(1), 150 * ms, repeated.State{}, 150 * ms, 300 * ms},
		{"proportional f=0.5", repeated.Proportional(0.5), 100 * ms, repeated.State{Consecutive: 9}, 100 * ms, 150 * ms},
		{"first-only first", repeated.FirstOnly(), time.Hour, repeated.State{First: true}, 30 * time.Minute, time.Hour},
		{"backoff s=0", repeated.Backoff(3, 0), 100 * ms, repeated.State{First: true}, 100 * ms, 200 * ms},
		{"backoff s=2", repeated.Backoff(3, 0), 100 * ms, repeated.State{Consecutive: 2}, 100 * ms, 500 * ms},
		{"backoff s clamped to maxShift", repeated.Backoff(3, 0), 100 * ms, repeated.State{Consecutive: 40}, 100 * ms, 900 * ms},
		{"backoff capped", repeated.Backoff(10, time.Second), 150 * ms, repeated.State{Consecutive: 4}, 150 * ms, time.Second},
		{"func", repeated.Func(func(b time.Duration, _ repeated.State, r *rand.Rand) time.Duration {
			return b + time.Duration(r.Int64N(int64(b)))
		}), 10 * ms, repeated.State{}, 10 * ms, 20 * ms},
	}
	const draws, buckets = 20000, 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := seeded(99)
			var hist [buckets]int
			width := float64(c.hi - c.lo)
			for range draws {
				d := c.j.Next(c.base, c.st, rng)
				if d < c.lo || d >= c.hi {
					t.Fatalf("draw %v outside [%v, %v)", d, c.lo, c.hi)
				}
				hist[int(float64(d-c.lo)/width*buckets)]++
			}
			want := float64(draws) / buckets
			chi := 0.0
			for _, n := range hist {
				chi += (float64(n) - want) * (float64(n) - want) / want
			}
			require.Less(t, chi, chiSquare19, "not uniform over [%v, %v): %v", c.lo, c.hi, hist)
			require.NotZero(t, hist[0], "low end not covered")
			require.NotZero(t, hist[buckets-1], "high end not covered")
		})
	}
}

// TestJitterEdgeCases: empty ranges, degenerate inputs and overflow give
// a sane value, never a panic.
func TestJitterEdgeCases(t *testing.T) {
	rng := seeded(1)
	cases := []struct {
		name string
		j    repeated.Jitter
		base time.Duration
		st   repeated.State
		want time.Duration // the exact result, unless atLeastBase
		// atLeastBase: the result is random; only check it is >= base.
		atLeastBase bool
	}{
		{"none", repeated.None(), 150 * ms, repeated.State{First: true}, 150 * ms, false},
		{"uniform-extra max=0", repeated.UniformExtra(0), 150 * ms, repeated.State{}, 150 * ms, false},
		{"uniform-extra max<0", repeated.UniformExtra(-ms), 150 * ms, repeated.State{}, 150 * ms, false},
		{"uniform-extra near overflow", repeated.UniformExtra(time.Hour), maxDuration - 5, repeated.State{}, 0, true},
		{"proportional f=0", repeated.Proportional(0), 150 * ms, repeated.State{}, 150 * ms, false},
		{"proportional f<0", repeated.Proportional(-1), 150 * ms, repeated.State{}, 150 * ms, false},
		{"proportional NaN", repeated.Proportional(math.NaN()), 150 * ms, repeated.State{}, 150 * ms, false},
		{"proportional +Inf", repeated.Proportional(math.Inf(1)), time.Second, repeated.State{}, 0, true},
		{"proportional tiny extra", repeated.Proportional(1e-12), time.Second, repeated.State{}, time.Second, false},
		{"proportional base<=0", repeated.Proportional(1), 0, repeated.State{}, 0, false},
		{"first-only later schedule", repeated.FirstOnly(), time.Hour, repeated.State{Consecutive: 1}, time.Hour, false},
		{"first-only base 1ns", repeated.FirstOnly(), 1, repeated.State{First: true}, 1, false},
		{"first-only base<=0", repeated.FirstOnly(), -ms, repeated.State{First: true}, -ms, false},
		{"backoff cap below base", repeated.Backoff(5, 10*ms), 100 * ms, repeated.State{Consecutive: 3}, 100 * ms, false},
		{"backoff negative shift", repeated.Backoff(-3, 0), 100 * ms, repeated.State{Consecutive: 3}, 0, true},
		{"backoff huge shift and base", repeated.Backoff(1000, 0), maxDuration / 3, repeated.State{Consecutive: 1000}, 0, true},
		{"backoff negative consecutive", repeated.Backoff(3, 0), 100 * ms, repeated.State{Consecutive: -5}, 0, true},
		{"backoff base<=0", repeated.Backoff(3, 0), 0, repeated.State{}, 0, false},
		{"func nil is none", repeated.Func(nil), 150 * ms, repeated.State{}, 150 * ms, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d time.Duration
			require.NotPanics(t, func() { d = c.j.Next(c.base, c.st, rng) })
			if c.atLeastBase {
				require.GreaterOrEqual(t, d, c.base)
				return
			}
			require.Equal(t, c.want, d)
		})
	}

	// Bounded variants of the clamped cases.
	require.Less(t, repeated.Backoff(-3, 0).Next(100*ms, repeated.State{Consecutive: 3}, rng), 200*ms)
	require.Less(t, repeated.Backoff(3, 0).Next(100*ms, repeated.State{Consecutive: -5}, rng), 200*ms)

	// A nil source means no jitter rather than a panic.
	for _, j := range []repeated.Jitter{repeated.UniformExtra(ms), repeated.Proportional(1), repeated.FirstOnly(), repeated.Backoff(2, 0)} {
		require.Equal(t, 100*ms, j.Next(100*ms, repeated.State{First: true, Consecutive: 2}, nil), "%v", j)
	}
}

func TestJitterStrings(t *testing.T) {
	for j, want := range map[repeated.Jitter]string{
		repeated.None():                  "none",
		repeated.UniformExtra(50 * ms):   "uniform-extra(50ms)",
		repeated.Proportional(1):         "proportional(1)",
		repeated.FirstOnly():             "first-only",
		repeated.Backoff(4, time.Second): "backoff(maxShift=4, cap=1s)",
		repeated.Backoff(99, 0):          "backoff(maxShift=99, cap=0s)",
	} {
		require.Equal(t, want, j.(interface{ String() string }).String())
	}
}

// TestBackoffGrowsWithTriggersAndRestartClearsIt drives a Backoff timer:
// each trigger widens the window, Reset keeps it, Restart resets it.
func TestBackoffGrowsWithTriggersAndRestartClearsIt(t *testing.T) {
	v := newVirtual(t)
	var gaps []time.Duration
	last := time.Duration(0)
	tm := mustNew(t, v.Wheel, "backoff", 100*ms, func() {
		gaps = append(gaps, v.Now()-last)
		last = v.Now()
	}, repeated.WithJitter(repeated.Func(func(b time.Duration, st repeated.State, _ *rand.Rand) time.Duration {
		// The deterministic upper edge of Backoff(3, 0)'s window.
		return b + b<<min(st.Consecutive, 3) - 1
	})))
	tm.Start()
	for range 5 {
		v.AdvanceToNext()
	}
	require.Equal(t, []time.Duration{200*ms - 1, 300*ms - 1, 500*ms - 1, 900*ms - 1, 900*ms - 1}, gaps)
	tm.Reset()
	d, _ := tm.Deadline()
	require.Equal(t, v.Now()+900*ms-1, d, "Reset keeps the backoff")
	tm.Restart()
	d, _ = tm.Deadline()
	require.Equal(t, v.Now()+200*ms-1, d, "Restart clears the backoff")
}
