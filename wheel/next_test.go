package wheel_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

// nextCalls records the calls of a NextFunc: the virtual time of each fire
// (err nil) and each error it was told.
type nextCalls struct {
	v     *wheel.Virtual
	fires []time.Duration
	errs  []error
}

func (c *nextCalls) fn(next func(n int) time.Duration) wheel.NextFunc {
	return func(_ *wheel.Timer, err error) time.Duration {
		if err != nil {
			c.errs = append(c.errs, err)
			return time.Hour // ignored
		}
		c.fires = append(c.fires, c.v.Now())
		return next(len(c.fires))
	}
}

// TestInitNextRearmsByTheReturnedDelay: a NextFunc's delay re-arms the
// timer from when it returns, exactly on a virtual wheel; <= 0 leaves it
// idle.
func TestInitNextRearmsByTheReturnedDelay(t *testing.T) {
	v := newVirtual(t, nil)
	c := &nextCalls{v: v}
	var tm wheel.Timer
	require.NoError(t, tm.InitNext(v.Wheel, c.fn(func(n int) time.Duration {
		if n == 4 {
			return 0
		}
		return time.Duration(n) * 3 * ms
	})))
	tm.Reset(2 * ms)
	v.AdvanceTo(time.Second)
	require.Equal(t, []time.Duration{2 * ms, 5 * ms, 11 * ms, 20 * ms}, c.fires)
	require.Empty(t, c.errs)
	require.False(t, tm.Pending())
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, int64(4), s.Fired)
	require.Equal(t, int64(4), s.Scheduled)
}

// TestInitNextResetDuringFireStands: a Reset of the timer from its own
// NextFunc (or anyone's, before it returns) wins over the returned delay.
func TestInitNextResetDuringFireStands(t *testing.T) {
	v := newVirtual(t, nil)
	c := &nextCalls{v: v}
	var tm wheel.Timer
	require.NoError(t, tm.InitNext(v.Wheel, func(self *wheel.Timer, err error) time.Duration {
		require.NoError(t, err)
		c.fires = append(c.fires, v.Now())
		if len(c.fires) == 1 {
			self.Reset(7 * ms)
		}
		return 2 * ms
	}))
	tm.Reset(ms)
	v.AdvanceTo(9 * ms)
	require.Equal(t, []time.Duration{ms, 8 * ms}, c.fires)
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.Equal(t, 10*ms, d)
}

// TestInitNextIsToldOfRefusals: when the wheel cannot re-arm the timer for
// the delay its NextFunc returned, it calls the NextFunc again with why.
func TestInitNextIsToldOfRefusals(t *testing.T) {
	t.Run("too many pending", func(t *testing.T) {
		v := newVirtual(t, func(c *wheel.Config) { c.MaxPending = 1 })
		c := &nextCalls{v: v}
		var tm, other wheel.Timer
		require.NoError(t, other.Init(v.Wheel, func() {}))
		require.NoError(t, tm.InitNext(v.Wheel, func(self *wheel.Timer, err error) time.Duration {
			if err != nil {
				c.errs = append(c.errs, err)
				return ms
			}
			c.fires = append(c.fires, v.Now())
			other.Reset(time.Hour) // takes the only pending place
			return ms
		}))
		tm.Reset(ms)
		v.AdvanceTo(10 * ms)
		require.Equal(t, []time.Duration{ms}, c.fires)
		require.Len(t, c.errs, 1)
		require.ErrorIs(t, c.errs[0], wheel.ErrTooManyPending)
		require.False(t, tm.Pending())
		requireStatsAddUp(t, v.Wheel)
	})
	t.Run("stopped", func(t *testing.T) {
		v := newVirtual(t, nil)
		c := &nextCalls{v: v}
		var tm wheel.Timer
		require.NoError(t, tm.InitNext(v.Wheel, c.fn(func(int) time.Duration {
			v.Stop()
			return ms
		})))
		tm.Reset(ms)
		v.AdvanceTo(10 * ms)
		require.Len(t, c.fires, 1)
		require.Len(t, c.errs, 1)
		require.ErrorIs(t, c.errs[0], wheel.ErrStopped)
		require.False(t, tm.Pending())
	})
}

// TestInitNextIsToldOfItsPanic: a panic in a NextFunc's fire is handed back
// to it as a *PanicError, once, and not logged or counted by the wheel; a
// panic in that second call is.
func TestInitNextIsToldOfItsPanic(t *testing.T) {
	v := newVirtual(t, nil)
	var told []error
	var tm wheel.Timer
	fires := 0
	require.NoError(t, tm.InitNext(v.Wheel, func(self *wheel.Timer, err error) time.Duration {
		if err != nil {
			told = append(told, err)
			if len(told) == 1 {
				self.Reset(ms) // goes on, as repeated does
				return 0
			}
			panic("and again")
		}
		fires++
		panic(fmt.Sprintf("boom %d", fires))
	}))
	tm.Reset(ms)
	v.AdvanceTo(10 * ms)
	require.Equal(t, 2, fires)
	require.Len(t, told, 2)
	var p *wheel.PanicError
	require.ErrorAs(t, told[0], &p)
	require.Equal(t, "boom 1", p.Value)
	require.NotEmpty(t, p.Stack)
	require.Contains(t, told[1].Error(), "boom 2")
	require.Equal(t, int64(1), v.Stats().Panics, "only the panic of the second call")
	requireStatsAddUp(t, v.Wheel)
}

// TestInitNextOnTheRealTimeDriver: the driver's slot pass runs NextFuncs,
// re-arms by their delays and hands a panic back, with other timers of the
// slot unaffected; with an Executor the same happens in the Task (run
// inline here, so that the test is deterministic).
func TestInitNextOnTheRealTimeDriver(t *testing.T) {
	for _, exec := range []bool{false, true} {
		t.Run(fmt.Sprintf("executor=%v", exec), func(t *testing.T) {
			cfg := wheel.DefaultConfig()
			if exec {
				cfg.Executor = func(k wheel.Task) { k.Run() } // on the driver, through Task.Run
			}
			w, err := wheel.New(cfg)
			require.NoError(t, err)
			step, stop := wheel.DriveByHand(w)
			defer stop()
			const n = 200
			var mu sync.Mutex
			fires := make([]int, n)
			panics := make([]int, n)
			ts := make([]wheel.Timer, n)
			for i := range ts {
				require.NoError(t, ts[i].InitNext(w, func(self *wheel.Timer, err error) time.Duration {
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						var p *wheel.PanicError
						require.ErrorAs(t, err, &p)
						panics[i]++
						return 0
					}
					fires[i]++
					if i%50 == 3 && fires[i] == 2 {
						panic(errors.New("boom"))
					}
					if fires[i] < 3 {
						return 2 * ms
					}
					return 0
				}))
				ts[i].Reset(ms)
			}
			done := func() bool {
				mu.Lock()
				defer mu.Unlock()
				for i := range ts {
					want := 3
					if i%50 == 3 {
						want = 2
					}
					if fires[i] < want {
						return false
					}
				}
				return true
			}
			for k := 0; !done(); k++ {
				require.Less(t, k, 1000, "timers did not fire")
				step()
			}
			for range 5 {
				step()
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range ts {
				if i%50 == 3 {
					require.Equal(t, 2, fires[i], "timer %d", i)
					require.Equal(t, 1, panics[i], "timer %d", i)
				} else {
					require.Equal(t, 3, fires[i], "timer %d", i)
					require.Zero(t, panics[i], "timer %d", i)
				}
				require.False(t, ts[i].Pending(), "timer %d", i)
			}
			s := w.Stats()
			require.Zero(t, s.Panics)
			require.Equal(t, int64(3*n-n/50), s.Fired)
		})
	}
}
