package wheel_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

// Deadlines far beyond any level saturate at the largest representable time
// and still fire when the clock gets there.
func TestDeadlineBeyondTopLevel(t *testing.T) {
	const year = 365 * 24 * time.Hour
	for _, tick := range []time.Duration{1, ms, time.Hour} {
		for _, tc := range []struct {
			name  string
			start time.Duration // clock before scheduling
			d     time.Duration
		}{
			{"200 years", 0, 200 * year},
			{"200 years from 100 years", 100 * year, 200 * year},
			{"MaxInt64", 0, math.MaxInt64},
			{"MaxInt64 from 1h", time.Hour, math.MaxInt64},
			{"MaxInt64-1", 0, math.MaxInt64 - 1},
			{"100 years", 0, 100 * year},
			{"MaxInt64/2 from 1ns", 1, math.MaxInt64 / 2},
		} {
			t.Run(tick.String()+"/"+tc.name, func(t *testing.T) {
				v := newVirtual(t, func(c *wheel.Config) { c.Tick = tick })
				v.AdvanceTo(tc.start)
				r := &recorder{v: v}
				var tm, near wheel.Timer
				require.NoError(t, tm.Init(v.Wheel, r.fn("far")))
				require.NoError(t, near.Init(v.Wheel, r.fn("near")))
				require.False(t, tm.Reset(tc.d))
				require.False(t, near.Reset(time.Second))
				want := maxDeadline
				if tc.d <= maxDeadline-tc.start {
					want = tc.start + tc.d
				}
				dl, ok := tm.Deadline()
				require.True(t, ok)
				require.Equal(t, want, dl)

				require.Equal(t, 1, v.AdvanceTo(tc.start+time.Second))
				next, ok := v.NextDeadline()
				require.True(t, ok)
				require.Equal(t, want, next)
				require.Equal(t, 0, v.AdvanceTo(want-1))
				require.Equal(t, 1, v.AdvanceTo(want))
				require.Equal(t, want, v.Now())
				require.Equal(t, []string{
					"near@" + (tc.start + time.Second).String(),
					"far@" + want.String(),
				}, r.fires)
				requireStatsAddUp(t, v.Wheel)
			})
		}
	}
	t.Run("AdvanceTo MaxInt64", func(t *testing.T) {
		for _, tick := range []time.Duration{1, ms, time.Hour} {
			v := newVirtual(t, func(c *wheel.Config) { c.Tick = tick })
			n := 0
			_, err := v.AfterFunc(math.MaxInt64, func() { n++ })
			require.NoError(t, err)
			_, err = v.AfterFunc(200*year, func() { n++ })
			require.NoError(t, err)
			require.Equal(t, 2, v.AdvanceTo(math.MaxInt64), "tick %v", tick)
			require.Equal(t, 2, n)
		}
	})
	t.Run("real-time", func(t *testing.T) {
		for _, tick := range []time.Duration{1, ms, time.Hour} {
			w := newReal(t, func(c *wheel.Config) { c.Tick = tick })
			a, err := w.AfterFunc(math.MaxInt64, func() { t.Error("fired") })
			require.NoError(t, err)
			b, err := w.AfterFunc(200*year, func() { t.Error("fired") })
			require.NoError(t, err)
			dl, ok := a.Deadline()
			require.True(t, ok)
			require.Equal(t, maxDeadline, dl)
			require.Equal(t, []*wheel.Timer{b, a}, w.Stop())
			recv(t, w.Done(), "driver exit")
		}
	})
}

// Once the virtual clock is at the end of time, timers still fire, and
// nothing loops forever.
func TestClockAtEndOfTime(t *testing.T) {
	for _, tick := range []time.Duration{1, 3, ms, time.Hour} {
		t.Run(tick.String(), func(t *testing.T) {
			v := newVirtual(t, func(c *wheel.Config) { c.Tick = tick })
			v.AdvanceTo(math.MaxInt64)
			require.GreaterOrEqual(t, v.Now(), maxDeadline)
			fired := make(chan int, 1)
			go func() {
				n := 0
				for _, d := range []time.Duration{0, -1, time.Hour, math.MaxInt64} {
					if _, err := v.AfterFunc(d, func() {}); err != nil {
						t.Error(err)
					}
				}
				n += v.AdvanceBy(0)
				n += v.RunUntilIdle()
				fired <- n
			}()
			select {
			case n := <-fired:
				require.Equal(t, 4, n)
			case <-time.After(2 * time.Second):
				t.Fatal("scheduling at the end of time hangs the wheel (tick " + tick.String() + ")")
			}
		})
	}
}
