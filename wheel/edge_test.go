package wheel_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/wheel"
)

const (
	ms = time.Millisecond
	// maxDeadline is the latest deadline a wheel represents (Timer keeps
	// deadline+1, so math.MaxInt64 itself is not a deadline).
	maxDeadline = time.Duration(math.MaxInt64 - 1)
	// waitLimit bounds every wait on a real-time wheel; reaching it is a failure.
	waitLimit = 5 * time.Second
)

// newVirtual returns a virtual wheel with DefaultConfig changed by mod.
func newVirtual(t *testing.T, mod func(*wheel.Config)) *wheel.Virtual {
	t.Helper()
	cfg := wheel.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	v, err := wheel.NewVirtual(cfg)
	require.NoError(t, err)
	return v
}

// newReal returns a real-time wheel. When the test ends the wheel is
// stopped, its driver's exit awaited, and goroutine leaks are checked.
func newReal(t *testing.T, mod func(*wheel.Config)) *wheel.Wheel {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	cfg := wheel.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.Stop()
		select {
		case <-w.Done():
		case <-time.After(waitLimit):
			t.Errorf("driver did not exit within %v of Stop", waitLimit)
		}
		goleak.VerifyNone(t, ignore)
	})
	return w
}

// recv waits for one value from ch, failing the test after waitLimit.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out after %v waiting for %s", waitLimit, what)
		panic("unreachable")
	}
}

// requireStatsAddUp checks Scheduled == Fired + Cancelled + Dropped +
// Pending, with Pending >= 0. Without MaxPending a wheel derives Pending
// from the rest (clamped at 0), so that the check is then that no timer
// was counted gone twice.
func requireStatsAddUp(t *testing.T, w *wheel.Wheel) wheel.Stats {
	t.Helper()
	s := w.Stats()
	require.GreaterOrEqual(t, s.Pending, int64(0), "stats: %+v", s)
	require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "stats do not add up: %+v", s)
	return s
}

// recorder collects (name, virtual time) pairs of fired callbacks.
type recorder struct {
	v     *wheel.Virtual
	fires []string
}

func (r *recorder) fn(name string) func() {
	return func() { r.fires = append(r.fires, name+"@"+r.v.Now().String()) }
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(*wheel.Config)
		field string // "" means valid
	}{
		{"default", func(*wheel.Config) {}, ""},
		{"tick 1ns", func(c *wheel.Config) { c.Tick = 1 }, ""},
		{"tick MaxTick", func(c *wheel.Config) { c.Tick = wheel.MaxTick }, ""},
		{"MaxPending 1", func(c *wheel.Config) { c.MaxPending = 1 }, ""},
		{"with executor and logger", func(c *wheel.Config) {
			c.Executor = wheel.GoExecutor
			c.Logger = hclog.NewNullLogger()
		}, ""},
		{"tick zero", func(c *wheel.Config) { c.Tick = 0 }, "Tick"},
		{"tick negative", func(c *wheel.Config) { c.Tick = -ms }, "Tick"},
		{"tick min int", func(c *wheel.Config) { c.Tick = math.MinInt64 }, "Tick"},
		{"tick above MaxTick", func(c *wheel.Config) { c.Tick = wheel.MaxTick + 1 }, "Tick"},
		{"tick max int", func(c *wheel.Config) { c.Tick = math.MaxInt64 }, "Tick"},
		{"MaxPending negative", func(c *wheel.Config) { c.MaxPending = -1 }, "MaxPending"},
		{"zero Config", func(c *wheel.Config) { *c = wheel.Config{} }, "Tick"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := wheel.DefaultConfig()
			tc.mod(&cfg)
			require.NotPanics(t, func() {
				err := cfg.Validate()
				w, errNew := wheel.New(cfg)
				v, errVirtual := wheel.NewVirtual(cfg)
				if tc.field == "" {
					require.NoError(t, err)
					require.NoError(t, errNew)
					require.NoError(t, errVirtual)
					require.NotNil(t, w)
					require.NotNil(t, v)
					require.Equal(t, cfg.Tick, w.Tick())
					require.False(t, w.IsVirtual())
					require.True(t, v.IsVirtual())
					w.Stop()
					v.Stop()
					return
				}
				require.ErrorIs(t, err, wheel.ErrInvalidConfig)
				var fe *wheel.FieldError
				require.ErrorAs(t, err, &fe)
				require.Equal(t, tc.field, fe.Field)
				require.True(t, strings.HasPrefix(err.Error(), "wheel: invalid config: "+tc.field+" "), "error %q lacks the package prefix", err)
				require.EqualError(t, errNew, err.Error())
				require.EqualError(t, errVirtual, err.Error())
				require.Nil(t, w)
				require.Nil(t, v)
			})
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := wheel.DefaultConfig()
	require.Equal(t, time.Millisecond, cfg.Tick)
	require.Zero(t, cfg.MaxPending)
	require.Nil(t, cfg.Executor)
	require.NoError(t, cfg.Validate())
}

// Zero and negative durations make a timer due at once: at Now, firing on
// the next advance, even an advance by zero.
func TestZeroAndNegativeDurations(t *testing.T) {
	for _, d := range []time.Duration{0, -1, -ms, -time.Hour, math.MinInt64} {
		t.Run(d.String(), func(t *testing.T) {
			v := newVirtual(t, nil)
			v.AdvanceTo(5*ms + 300) // off the tick grid
			now := v.Now()
			r := &recorder{v: v}
			var tm wheel.Timer
			require.NoError(t, tm.Init(v.Wheel, r.fn("timer")))
			require.False(t, tm.Reset(d))
			dl, ok := tm.Deadline()
			require.True(t, ok)
			require.Equal(t, now, dl)
			af, err := v.AfterFunc(d, r.fn("afterfunc"))
			require.NoError(t, err)
			dl, ok = af.Deadline()
			require.True(t, ok)
			require.Equal(t, now, dl)
			next, ok := v.NextDeadline()
			require.True(t, ok)
			require.Equal(t, now, next)

			require.Equal(t, 2, v.AdvanceBy(0))
			require.Equal(t, now, v.Now())
			require.Equal(t, []string{"timer@" + now.String(), "afterfunc@" + now.String()}, r.fires)
			require.False(t, tm.Pending())
			require.False(t, af.Pending())
		})
	}
	t.Run("real-time", func(t *testing.T) {
		w := newReal(t, nil)
		fired := make(chan int, 2)
		for i, d := range []time.Duration{0, -time.Hour} {
			_, err := w.AfterFunc(d, func() { fired <- i })
			require.NoError(t, err)
		}
		require.Equal(t, 0, recv(t, fired, "timer 0"))
		require.Equal(t, 1, recv(t, fired, "timer 1"))
		w.Stop()
	})
}

func TestTimerReset(t *testing.T) {
	for _, tc := range []struct {
		name        string
		setup       func(v *wheel.Virtual, tm *wheel.Timer) // before the Reset under test, at clock 0..
		d           time.Duration                           // the Reset under test
		wantPending bool                                    // Reset's result
		wantFires   []string                                // after running until idle
	}{
		{
			name:      "never scheduled",
			setup:     func(*wheel.Virtual, *wheel.Timer) {},
			d:         5 * ms,
			wantFires: []string{"t@5ms"},
		},
		{
			name: "fired timer",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(ms)
				v.AdvanceTo(2 * ms)
			},
			d:         5 * ms,
			wantFires: []string{"t@1ms", "t@7ms"},
		},
		{
			name: "stopped timer",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(ms)
				tm.Stop()
				v.AdvanceTo(2 * ms)
			},
			d:         5 * ms,
			wantFires: []string{"t@7ms"},
		},
		{
			name: "pending, earlier",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(10 * ms)
			},
			d:           3 * ms,
			wantPending: true,
			wantFires:   []string{"t@3ms"},
		},
		{
			name: "pending, earlier across levels",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(10 * time.Hour)
			},
			d:           1500 * time.Microsecond,
			wantPending: true,
			wantFires:   []string{"t@1.5ms"},
		},
		{
			name: "pending, later",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(3 * ms)
			},
			d:           10 * ms,
			wantPending: true,
			wantFires:   []string{"t@10ms"},
		},
		{
			name: "pending, later across levels",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(3 * ms)
			},
			d:           10*time.Hour + 1,
			wantPending: true,
			wantFires:   []string{"t@10h0m0.000000001s"},
		},
		{
			name: "pending, same deadline",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(3 * ms)
			},
			d:           3 * ms,
			wantPending: true,
			wantFires:   []string{"t@3ms"},
		},
		{
			name: "pending and already due, later",
			setup: func(v *wheel.Virtual, tm *wheel.Timer) {
				tm.Reset(0)
				v.NextDeadline() // the timer now waits in the ready heap
			},
			d:           4 * ms,
			wantPending: true,
			wantFires:   []string{"t@4ms"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVirtual(t, nil)
			r := &recorder{v: v}
			var tm wheel.Timer
			require.NoError(t, tm.Init(v.Wheel, r.fn("t")))
			tc.setup(v, &tm)
			now := v.Now()
			require.Equal(t, tc.wantPending, tm.Reset(tc.d))
			dl, ok := tm.Deadline()
			require.True(t, ok)
			require.Equal(t, now+tc.d, dl)
			require.True(t, tm.Pending())
			v.RunUntilIdle()
			require.Equal(t, tc.wantFires, r.fires)
			require.False(t, tm.Pending())
			requireStatsAddUp(t, v.Wheel)
		})
	}
}

func TestTimerStop(t *testing.T) {
	v := newVirtual(t, nil)
	r := &recorder{v: v}
	var a, b, never wheel.Timer
	require.NoError(t, a.Init(v.Wheel, r.fn("a")))
	require.NoError(t, b.Init(v.Wheel, r.fn("b")))
	require.NoError(t, never.Init(v.Wheel, r.fn("never")))

	require.False(t, never.Stop(), "Stop of a never-scheduled timer")

	a.Reset(5 * ms)
	require.True(t, a.Stop(), "first Stop prevents the callback")
	require.False(t, a.Stop(), "second Stop finds nothing to prevent")
	require.False(t, a.Pending())
	_, ok := a.Deadline()
	require.False(t, ok)

	b.Reset(ms)
	require.Equal(t, 1, v.AdvanceTo(ms))
	require.False(t, b.Stop(), "Stop of a fired timer")

	require.Equal(t, 0, v.RunUntilIdle())
	require.Equal(t, []string{"b@1ms"}, r.fires)
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, int64(1), s.Cancelled)
	require.Equal(t, int64(1), s.Fired)
}

// A callback stopping another timer due at the same instant prevents it, on
// both drivers: callbacks run one at a time, so a timer whose callback has
// not started can still be stopped.
func TestCallbackStopsTimerDueAtSameInstant(t *testing.T) {
	forEachDriver(t, func(t *testing.T, w *wheel.Wheel, run func()) {
		var a, b, sentinel wheel.Timer
		stopped := make(chan bool, 1)
		var bRan atomic.Bool
		done := make(chan struct{})
		require.NoError(t, a.Init(w, func() { stopped <- b.Stop() }))
		require.NoError(t, b.Init(w, func() { bRan.Store(true) }))
		require.NoError(t, sentinel.Init(w, func() { close(done) }))
		_, err := w.AfterFunc(0, func() {
			a.Reset(0)
			b.Reset(0)
			sentinel.Reset(0)
		})
		require.NoError(t, err)
		run()
		recv(t, done, "sentinel")
		require.True(t, recv(t, stopped, "a's callback"), "b.Stop() from a's callback: b had not started")
		require.False(t, bRan.Load(), "b ran although a stopped it first")
	})
}

// forEachDriver runs f on a virtual and on a real-time wheel; run fires what
// is due (a no-op on the real-time wheel, whose driver does it).
func forEachDriver(t *testing.T, f func(t *testing.T, w *wheel.Wheel, run func())) {
	t.Run("virtual", func(t *testing.T) {
		v := newVirtual(t, nil)
		f(t, v.Wheel, func() { v.RunUntilIdle() })
	})
	t.Run("real-time", func(t *testing.T) {
		f(t, newReal(t, nil), func() {})
	})
}

func TestScheduleAfterWheelStop(t *testing.T) {
	forEachDriver(t, func(t *testing.T, w *wheel.Wheel, run func()) {
		var idle, pending wheel.Timer
		require.NoError(t, idle.Init(w, func() { t.Error("idle timer fired") }))
		require.NoError(t, pending.Init(w, func() { t.Error("pending timer fired") }))
		require.False(t, pending.Reset(time.Hour))
		left := w.Stop()
		require.Equal(t, []*wheel.Timer{&pending}, left)
		require.False(t, pending.Pending(), "a timer returned by Stop is idle")
		require.False(t, pending.Stop(), "Stop of a dropped timer")

		wasPending, err := idle.TryReset(ms)
		require.ErrorIs(t, err, wheel.ErrStopped)
		require.False(t, wasPending)
		wasPending, err = pending.TryReset(ms)
		require.ErrorIs(t, err, wheel.ErrStopped)
		require.False(t, wasPending)
		require.False(t, idle.Reset(0))
		tm, err := w.AfterFunc(ms, func() {})
		require.ErrorIs(t, err, wheel.ErrStopped)
		require.Nil(t, tm)
		require.False(t, idle.Pending())
		require.EqualError(t, wheel.ErrStopped, "wheel: stopped")

		// Init still works (it only binds); scheduling does not.
		require.NoError(t, idle.Init(w, func() {}))
		_, err = idle.TryReset(0)
		require.ErrorIs(t, err, wheel.ErrStopped)

		run()
		s := requireStatsAddUp(t, w)
		require.Equal(t, int64(5), s.Rejected)
		require.Equal(t, int64(1), s.Dropped)
		require.Equal(t, int64(0), s.Pending)
		require.Equal(t, int64(0), s.Fired)
	})
}

func TestVirtualAfterStop(t *testing.T) {
	v := newVirtual(t, nil)
	_, err := v.AfterFunc(ms, func() { t.Error("fired after Stop") })
	require.NoError(t, err)
	require.Len(t, v.Stop(), 1)
	require.Equal(t, 0, v.AdvanceTo(time.Hour))
	require.Equal(t, 0, v.AdvanceToNext())
	require.Equal(t, 0, v.RunUntilIdle())
	_, ok := v.NextDeadline()
	require.False(t, ok)
}

func TestMaxPending(t *testing.T) {
	v := newVirtual(t, func(c *wheel.Config) { c.MaxPending = 2 })
	r := &recorder{v: v}
	var a, b, c wheel.Timer
	require.NoError(t, a.Init(v.Wheel, r.fn("a")))
	require.NoError(t, b.Init(v.Wheel, r.fn("b")))
	require.NoError(t, c.Init(v.Wheel, r.fn("c")))
	_, err := a.TryReset(10 * ms)
	require.NoError(t, err)
	_, err = b.TryReset(20 * ms)
	require.NoError(t, err)

	// At the limit: new timers are refused...
	wasPending, err := c.TryReset(ms)
	require.ErrorIs(t, err, wheel.ErrTooManyPending)
	require.False(t, wasPending)
	require.False(t, c.Pending())
	require.False(t, c.Reset(ms))
	af, err := v.AfterFunc(ms, r.fn("af"))
	require.ErrorIs(t, err, wheel.ErrTooManyPending)
	require.Nil(t, af)
	require.Equal(t, int64(3), v.Stats().Rejected)

	// ...but pending ones can still move, later and earlier.
	wasPending, err = a.TryReset(30 * ms)
	require.NoError(t, err)
	require.True(t, wasPending)
	wasPending, err = b.TryReset(5 * ms)
	require.NoError(t, err)
	require.True(t, wasPending)
	require.Equal(t, int64(2), v.Stats().Pending)

	// A Stop frees a place.
	require.True(t, a.Stop())
	_, err = c.TryReset(ms)
	require.NoError(t, err)
	_, err = a.TryReset(ms)
	require.ErrorIs(t, err, wheel.ErrTooManyPending)

	// So does a fire.
	require.Equal(t, 1, v.AdvanceTo(ms))
	_, err = a.TryReset(ms)
	require.NoError(t, err)

	v.RunUntilIdle()
	require.Equal(t, []string{"c@1ms", "a@2ms", "b@5ms"}, r.fires)
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, int64(4), s.Rejected)
	require.Equal(t, int64(4), s.Scheduled)
}

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

func TestUninitializedTimer(t *testing.T) {
	var tm wheel.Timer
	require.NotPanics(t, func() {
		wasPending, err := tm.TryReset(ms)
		require.ErrorIs(t, err, wheel.ErrNotInitialized)
		require.False(t, wasPending)
		require.False(t, tm.Reset(ms))
		require.False(t, tm.Stop())
		require.False(t, tm.Pending())
		dl, ok := tm.Deadline()
		require.False(t, ok)
		require.Zero(t, dl)
		require.Nil(t, tm.Wheel())
	})
}

func TestTimerInit(t *testing.T) {
	v := newVirtual(t, nil)
	r := &recorder{v: v}
	var tm wheel.Timer

	require.ErrorIs(t, tm.Init(nil, func() {}), wheel.ErrNilWheel)
	require.ErrorIs(t, tm.Init(v.Wheel, nil), wheel.ErrNilCallback)
	require.Nil(t, tm.Wheel(), "failed Init must not bind")
	_, err := tm.TryReset(0)
	require.ErrorIs(t, err, wheel.ErrNotInitialized)

	require.NoError(t, tm.Init(v.Wheel, r.fn("first")))
	require.Same(t, v.Wheel, tm.Wheel())
	tm.Reset(ms)
	require.ErrorIs(t, tm.Init(v.Wheel, r.fn("second")), wheel.ErrTimerPending)
	require.ErrorIs(t, tm.Init(nil, r.fn("second")), wheel.ErrNilWheel)
	require.True(t, tm.Pending(), "failed Init leaves the timer pending")
	v.RunUntilIdle()

	// Idle again: Init rebinds the callback, also after Stop.
	require.NoError(t, tm.Init(v.Wheel, r.fn("second")))
	tm.Reset(ms)
	require.True(t, tm.Stop())
	require.NoError(t, tm.Init(v.Wheel, r.fn("third")))
	tm.Reset(ms)
	v.RunUntilIdle()
	require.Equal(t, []string{"first@1ms", "third@2ms"}, r.fires)

	af, err := v.AfterFunc(ms, nil)
	require.ErrorIs(t, err, wheel.ErrNilCallback)
	require.Nil(t, af)
	requireStatsAddUp(t, v.Wheel)
}

// A stopped timer rebound to another wheel belongs to that wheel only: the
// first wheel must neither fire it, nor count it, nor drop it when stopped.
func TestTimerInitRebindToAnotherWheel(t *testing.T) {
	// setup leaves tm stopped in a's ready heap, then rebinds it to b and
	// schedules it there (in b's ready heap too).
	setup := func(t *testing.T) (a, b *wheel.Virtual, tm *wheel.Timer, firedOn *[]string) {
		a = newVirtual(t, nil)
		b = newVirtual(t, nil)
		firedOn = new([]string)
		tm = new(wheel.Timer)
		require.NoError(t, tm.Init(a.Wheel, func() { *firedOn = append(*firedOn, "a") }))
		tm.Reset(0)
		a.NextDeadline() // the timer waits in a's ready heap
		require.True(t, tm.Stop())
		require.NoError(t, tm.Init(b.Wheel, func() { *firedOn = append(*firedOn, "b") }))
		require.Same(t, b.Wheel, tm.Wheel())
		tm.Reset(0)
		b.NextDeadline()
		return a, b, tm, firedOn
	}
	t.Run("old wheel advances", func(t *testing.T) {
		a, b, _, firedOn := setup(t)
		require.Equal(t, 0, a.AdvanceBy(time.Second), "wheel a fired a timer bound to wheel b")
		require.Equal(t, 1, b.AdvanceBy(time.Second))
		require.Equal(t, []string{"b"}, *firedOn)
		require.Zero(t, requireStatsAddUp(t, a.Wheel).Pending)
		require.Zero(t, requireStatsAddUp(t, b.Wheel).Pending)
	})
	t.Run("old wheel stops", func(t *testing.T) {
		a, b, tm, firedOn := setup(t)
		require.Empty(t, a.Stop(), "wheel a's Stop returned a timer bound to wheel b")
		require.True(t, tm.Pending(), "wheel a's Stop cancelled a timer bound to wheel b")
		require.Equal(t, 1, b.AdvanceBy(time.Second))
		require.Equal(t, []string{"b"}, *firedOn)
		sa := requireStatsAddUp(t, a.Wheel)
		require.Zero(t, sa.Dropped)
		require.Zero(t, requireStatsAddUp(t, b.Wheel).Pending)
	})
}

func TestPanickingCallback(t *testing.T) {
	t.Run("virtual", func(t *testing.T) {
		var buf bytes.Buffer
		v := newVirtual(t, func(c *wheel.Config) {
			c.Logger = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Error})
		})
		r := &recorder{v: v}
		_, err := v.AfterFunc(ms, r.fn("before"))
		require.NoError(t, err)
		_, err = v.AfterFunc(2*ms, func() { panic("boom") })
		require.NoError(t, err)
		_, err = v.AfterFunc(2*ms, r.fn("same instant"))
		require.NoError(t, err)
		_, err = v.AfterFunc(3*ms, func() { panic(errors.New("boom again")) })
		require.NoError(t, err)
		_, err = v.AfterFunc(4*ms, r.fn("after"))
		require.NoError(t, err)

		require.NotPanics(t, func() { require.Equal(t, 5, v.AdvanceTo(10*ms)) })
		require.Equal(t, []string{"before@1ms", "same instant@2ms", "after@4ms"}, r.fires)
		s := requireStatsAddUp(t, v.Wheel)
		require.Equal(t, int64(2), s.Panics)
		require.Equal(t, int64(5), s.Fired)
		require.Contains(t, buf.String(), "boom")
		require.Contains(t, buf.String(), "boom again")

		// The wheel keeps working.
		_, err = v.AfterFunc(ms, r.fn("later"))
		require.NoError(t, err)
		require.Equal(t, 1, v.RunUntilIdle())
	})
	t.Run("real-time", func(t *testing.T) {
		w := newReal(t, nil)
		done := make(chan string, 2)
		_, err := w.AfterFunc(0, func() { panic("boom") })
		require.NoError(t, err)
		_, err = w.AfterFunc(0, func() { done <- "same batch" })
		require.NoError(t, err)
		require.Equal(t, "same batch", recv(t, done, "the timer after the panic"))
		_, err = w.AfterFunc(ms, func() { panic("boom") })
		require.NoError(t, err)
		_, err = w.AfterFunc(2*ms, func() { done <- "later" })
		require.NoError(t, err)
		require.Equal(t, "later", recv(t, done, "a later timer"))
		s := w.Stats()
		require.Equal(t, int64(2), s.Panics)
		require.Equal(t, int64(4), s.Fired)
		w.Stop()
		recv(t, w.Done(), "driver exit")
		requireStatsAddUp(t, w)
	})
}

// TestPanickingCallbackInSlotPass: the real-time driver runs a slot's
// timers in one pass under one recover; a panicking callback ends only its
// own fire (a Reset it made before panicking stands) and the pass goes on
// with the rest of the slot. Driven by hand, so every fire is accounted
// for deterministically.
func TestPanickingCallbackInSlotPass(t *testing.T) {
	var buf bytes.Buffer
	cfg := wheel.DefaultConfig()
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Error})
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	step, stop := wheel.DriveByHand(w)
	defer stop()
	const n = 300
	ts := make([]wheel.Timer, n)
	fires := make([]int, n)
	for i := range ts {
		require.NoError(t, ts[i].Init(w, func() {
			fires[i]++
			switch i % 100 {
			case 7:
				panic(fmt.Sprintf("boom %d", i))
			case 8:
				if fires[i] == 1 {
					ts[i].Reset(5 * ms)
				}
				panic(errors.New("boom after a re-arm"))
			}
		}))
		ts[i].Reset(3 * ms)
	}
	// A step moves the clock a tick past real time, which keeps running
	// (slowly, under the race detector): step until every timer fired.
	want := func(i int) int { return 1 + b2i(i%100 == 8) }
	for range 100 {
		done := true
		for i, f := range fires {
			require.LessOrEqual(t, f, want(i), "timer %d", i)
			if f < want(i) {
				require.True(t, ts[i].Pending(), "timer %d fired %d times and is not pending", i, f)
				done = false
			}
		}
		if done {
			break
		}
		step()
	}
	for i, f := range fires {
		require.Equal(t, want(i), f, "timer %d", i)
	}
	s := requireStatsAddUp(t, w)
	require.Equal(t, int64(9), s.Panics)
	require.Equal(t, int64(n+3), s.Fired)
	require.Zero(t, s.Pending)
	// Panics 1, 2, 4 and 8 of the wheel are logged, the rest counted.
	require.Equal(t, 4, strings.Count(buf.String(), "timer callback panicked"), buf.String())
	require.Contains(t, buf.String(), "boom after a re-arm")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestWheelStopFromCallback(t *testing.T) {
	t.Run("virtual", func(t *testing.T) {
		v := newVirtual(t, nil)
		r := &recorder{v: v}
		var left, again []*wheel.Timer
		_, err := v.AfterFunc(ms, func() {
			left = v.Stop()
			again = v.Stop()
		})
		require.NoError(t, err)
		b, err := v.AfterFunc(5*ms, r.fn("b"))
		require.NoError(t, err)
		a, err := v.AfterFunc(2*ms, r.fn("a"))
		require.NoError(t, err)
		require.Equal(t, 1, v.AdvanceTo(10*ms))
		require.Equal(t, []*wheel.Timer{a, b}, left, "remaining timers, by deadline")
		require.Nil(t, again)
		require.Empty(t, r.fires)
		require.Equal(t, ms, v.Now(), "the clock stops with the wheel")
		s := requireStatsAddUp(t, v.Wheel)
		require.Equal(t, int64(2), s.Dropped)
	})
	t.Run("real-time", func(t *testing.T) {
		w := newReal(t, nil)
		got := make(chan []*wheel.Timer, 1)
		far, err := w.AfterFunc(time.Hour, func() { t.Error("far timer fired") })
		require.NoError(t, err)
		_, err = w.AfterFunc(0, func() { got <- w.Stop() })
		require.NoError(t, err)
		require.Equal(t, []*wheel.Timer{far}, recv(t, got, "Stop from the callback"))
		recv(t, w.Done(), "driver exit")
		require.Nil(t, w.Stop())
		s := requireStatsAddUp(t, w)
		require.Equal(t, int64(1), s.Dropped)
	})
}

// Stopping the wheel from a callback also covers the timers due at the same
// instant whose callbacks have not started: they never run and are returned.
func TestWheelStopFromCallbackSameInstant(t *testing.T) {
	forEachDriver(t, func(t *testing.T, w *wheel.Wheel, run func()) {
		var a, b wheel.Timer
		got := make(chan []*wheel.Timer, 1)
		var bRan atomic.Bool
		require.NoError(t, a.Init(w, func() { got <- w.Stop() }))
		require.NoError(t, b.Init(w, func() { bRan.Store(true) }))
		_, err := w.AfterFunc(0, func() {
			a.Reset(0)
			b.Reset(0)
		})
		require.NoError(t, err)
		run()
		left := recv(t, got, "Stop from a's callback")
		recv(t, w.Done(), "driver exit")
		require.False(t, bRan.Load(), "b ran after the wheel was stopped")
		require.Equal(t, []*wheel.Timer{&b}, left)
	})
}

func TestWheelStopIdempotent(t *testing.T) {
	t.Run("virtual", func(t *testing.T) {
		v := newVirtual(t, nil)
		_, err := v.AfterFunc(ms, func() {})
		require.NoError(t, err)
		require.Len(t, v.Stop(), 1)
		require.Nil(t, v.Stop())
		require.Nil(t, v.Stop())
		recv(t, v.Done(), "Done")
	})
	t.Run("real-time never started", func(t *testing.T) {
		w := newReal(t, nil)
		require.Empty(t, w.Stop())
		require.Nil(t, w.Stop())
		recv(t, w.Done(), "Done")
	})
	t.Run("real-time started", func(t *testing.T) {
		w := newReal(t, nil)
		fired := make(chan struct{})
		_, err := w.AfterFunc(0, func() { close(fired) })
		require.NoError(t, err)
		recv(t, fired, "first timer")
		require.Empty(t, w.Stop())
		recv(t, w.Done(), "Done")
		require.Nil(t, w.Stop())
	})
	t.Run("real-time concurrent", func(t *testing.T) {
		w := newReal(t, nil)
		for range 10 {
			_, err := w.AfterFunc(time.Hour, func() {})
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		var total atomic.Int64
		for range 4 {
			wg.Go(func() { total.Add(int64(len(w.Stop()))) })
		}
		wg.Wait()
		require.Equal(t, int64(10), total.Load(), "exactly one Stop returns the timers")
		recv(t, w.Done(), "Done")
	})
}

func TestStatsInvariant(t *testing.T) {
	v := newVirtual(t, nil)
	timers := make([]wheel.Timer, 20)
	for i := range timers {
		require.NoError(t, timers[i].Init(v.Wheel, func() {}))
		timers[i].Reset(time.Duration(i+1) * ms)
	}
	requireStatsAddUp(t, v.Wheel)
	for i := 0; i < 20; i += 4 {
		timers[i].Stop() // 5 cancelled: 0, 4, 8, 12, 16
	}
	for i := 1; i < 20; i += 4 {
		timers[i].Reset(time.Hour) // pending: moved, not counted again
	}
	requireStatsAddUp(t, v.Wheel)
	// Due by 10ms: timers 0..9, less the stopped 0, 4, 8 and the moved 1, 5, 9.
	require.Equal(t, 4, v.AdvanceTo(10*ms))
	requireStatsAddUp(t, v.Wheel)
	timers[0].Reset(0) // rescheduled after Stop: counted again
	left := v.Stop()
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, wheel.Stats{
		Scheduled: 21,
		Fired:     4,
		Cancelled: 5,
		Dropped:   12,
		Pending:   0,
	}, s)
	require.Len(t, left, 12)
	require.Same(t, &timers[0], left[0], "the timer due now comes first")
}

func TestExecutor(t *testing.T) {
	t.Run("virtual", func(t *testing.T) {
		var tasks []wheel.Task
		v := newVirtual(t, func(c *wheel.Config) {
			c.Executor = func(k wheel.Task) { tasks = append(tasks, k) }
		})
		var ran []string
		_, err := v.AfterFunc(2*ms, func() { ran = append(ran, "b") })
		require.NoError(t, err)
		_, err = v.AfterFunc(ms, func() { ran = append(ran, "a") })
		require.NoError(t, err)
		_, err = v.AfterFunc(3*ms, func() { panic("boom") })
		require.NoError(t, err)
		require.Equal(t, 3, v.AdvanceTo(5*ms))
		require.Empty(t, ran, "callbacks wait for Task.Run")
		require.Len(t, tasks, 3)
		require.Equal(t, int64(3), v.Stats().Fired)
		for _, k := range tasks {
			require.NotPanics(t, k.Run)
		}
		require.Equal(t, []string{"a", "b"}, ran)
		require.Equal(t, int64(1), v.Stats().Panics)
		requireStatsAddUp(t, v.Wheel)
	})
	t.Run("zero Task", func(t *testing.T) {
		require.NotPanics(t, wheel.Task{}.Run)
	})
	t.Run("real-time", func(t *testing.T) {
		tasks := make(chan wheel.Task, 1)
		w := newReal(t, func(c *wheel.Config) {
			c.Executor = func(k wheel.Task) { tasks <- k }
		})
		var ran atomic.Bool
		_, err := w.AfterFunc(0, func() { ran.Store(true) })
		require.NoError(t, err)
		k := recv(t, tasks, "the task")
		require.False(t, ran.Load(), "the executor, not the driver, runs the callback")
		k.Run() // on this goroutine
		require.True(t, ran.Load())
		w.Stop()
		recv(t, w.Done(), "driver exit")
	})
	t.Run("GoExecutor", func(t *testing.T) {
		w := newReal(t, func(c *wheel.Config) { c.Executor = wheel.GoExecutor })
		done := make(chan struct{})
		_, err := w.AfterFunc(0, func() { panic("boom") })
		require.NoError(t, err)
		_, err = w.AfterFunc(ms, func() { close(done) })
		require.NoError(t, err)
		recv(t, done, "callback on its own goroutine")
		w.Stop()
		recv(t, w.Done(), "driver exit")
	})
}

func TestShared(t *testing.T) {
	s := wheel.Shared()
	require.NotNil(t, s)
	require.Same(t, s, wheel.Shared())
	require.False(t, s.IsVirtual())
	require.Equal(t, wheel.DefaultConfig().Tick, s.Tick())
	require.Nil(t, s.Stop(), "Stop of the shared wheel is refused")
	select {
	case <-s.Done():
		t.Fatal("the shared wheel reports done after a refused Stop")
	default:
	}
	done := make(chan struct{})
	_, err := s.AfterFunc(0, func() { close(done) })
	require.NoError(t, err, "the shared wheel keeps scheduling after Stop")
	recv(t, done, "a timer on the shared wheel")
}

func TestEmptyVirtual(t *testing.T) {
	v := newVirtual(t, nil)
	require.Zero(t, v.Now())
	_, ok := v.NextDeadline()
	require.False(t, ok)
	require.Equal(t, 0, v.AdvanceToNext())
	require.Zero(t, v.Now(), "AdvanceToNext on an idle wheel does not move the clock")
	require.Equal(t, 0, v.RunUntilIdle())
	require.Zero(t, v.Now())
	require.Equal(t, 0, v.AdvanceBy(-time.Second))
	require.Zero(t, v.Now())
	require.Equal(t, 0, v.AdvanceTo(5*ms))
	require.Equal(t, 5*ms, v.Now())
	require.Equal(t, 0, v.AdvanceBy(time.Hour))
	require.Equal(t, time.Hour+5*ms, v.Now())
	requireStatsAddUp(t, v.Wheel)
}

func TestAdvanceToPast(t *testing.T) {
	v := newVirtual(t, nil)
	r := &recorder{v: v}
	require.Equal(t, 0, v.AdvanceTo(10*ms))
	_, err := v.AfterFunc(2*ms, r.fn("later"))
	require.NoError(t, err)
	require.Equal(t, 0, v.AdvanceTo(5*ms))
	require.Equal(t, 10*ms, v.Now(), "the clock does not move back")
	_, err = v.AfterFunc(0, r.fn("now"))
	require.NoError(t, err)
	require.Equal(t, 1, v.AdvanceTo(0), "an advance into the past fires what is due now")
	require.Equal(t, 10*ms, v.Now())
	require.Equal(t, 0, v.AdvanceTo(math.MinInt64))
	require.Equal(t, []string{"now@10ms"}, r.fires)
	require.Equal(t, 10*ms, v.Now())
}

// Callbacks that schedule timers due at their own instant see them fire in
// the same advance, after the timers already due then, in schedule order.
func TestSameInstantCallbacks(t *testing.T) {
	for _, advance := range []struct {
		name string
		f    func(v *wheel.Virtual) int
	}{
		{"AdvanceTo", func(v *wheel.Virtual) int { return v.AdvanceTo(5 * ms) }},
		{"AdvanceBy", func(v *wheel.Virtual) int { return v.AdvanceBy(5 * ms) }},
		{"AdvanceToNext", func(v *wheel.Virtual) int { return v.AdvanceToNext() }},
	} {
		t.Run(advance.name, func(t *testing.T) {
			v := newVirtual(t, nil)
			r := &recorder{v: v}
			_, err := v.AfterFunc(5*ms, func() {
				r.fn("a")()
				for _, x := range []struct {
					name string
					d    time.Duration
				}{{"x", 0}, {"y", -1}, {"late", 1}, {"z", 0}} {
					_, err := v.AfterFunc(x.d, func() {
						r.fn(x.name)()
						if x.name == "z" {
							_, err := v.AfterFunc(0, r.fn("z2"))
							require.NoError(t, err)
						}
					})
					require.NoError(t, err)
				}
			})
			require.NoError(t, err)
			_, err = v.AfterFunc(5*ms, r.fn("b"))
			require.NoError(t, err)
			_, err = v.AfterFunc(5*ms+1, r.fn("next ns"))
			require.NoError(t, err)

			require.Equal(t, 6, advance.f(v))
			require.Equal(t, []string{"a@5ms", "b@5ms", "x@5ms", "y@5ms", "z@5ms", "z2@5ms"}, r.fires)
			require.Equal(t, 5*ms, v.Now())
			require.Equal(t, 2, v.RunUntilIdle())
			require.Equal(t, []string{"next ns@5.000001ms", "late@5.000001ms"}, r.fires[6:])
		})
	}
}

// Now() inside a callback is the timer's exact deadline, not its tick.
func TestNowInCallbackIsExactDeadline(t *testing.T) {
	for _, tick := range []time.Duration{1, 7 * ms, time.Hour} {
		v := newVirtual(t, func(c *wheel.Config) { c.Tick = tick })
		var got []time.Duration
		for _, d := range []time.Duration{1500 * time.Microsecond, 3, 10*ms + 1} {
			_, err := v.AfterFunc(d, func() { got = append(got, v.Now()) })
			require.NoError(t, err)
		}
		require.Equal(t, 3, v.AdvanceTo(2*time.Hour))
		require.Equal(t, []time.Duration{3, 1500 * time.Microsecond, 10*ms + 1}, got, "tick %v", tick)
	}
}

// A callback re-arming its own timer makes a periodic timer.
func TestResetFromOwnCallback(t *testing.T) {
	forEachDriver(t, func(t *testing.T, w *wheel.Wheel, run func()) {
		var tm wheel.Timer
		n := 0
		done := make(chan struct{})
		require.NoError(t, tm.Init(w, func() {
			n++
			if n < 3 {
				if tm.Reset(ms) {
					t.Error("Reset from its own callback reported a pending timer")
				}
				return
			}
			close(done)
		}))
		tm.Reset(ms)
		run()
		recv(t, done, "third fire")
		require.Equal(t, 3, n)
		if w.IsVirtual() {
			require.Equal(t, 3*ms, w.Now())
		}
	})
}

// Timers of a virtual wheel may be used from any goroutine while another
// advances time; every schedule still ends in exactly one fire or Stop.
func TestVirtualConcurrentUse(t *testing.T) {
	v := newVirtual(t, nil)
	const n, goroutines, ops = 16, 4, 2000
	timers := make([]wheel.Timer, n)
	var starts, fires, stops [n]atomic.Int64
	for i := range timers {
		require.NoError(t, timers[i].Init(v.Wheel, func() { fires[i].Add(1) }))
	}
	stop := make(chan struct{})
	advanced := make(chan int)
	go func() {
		k := 0
		for {
			select {
			case <-stop:
				advanced <- k
				return
			default:
				v.AdvanceBy(100 * time.Microsecond)
				k++
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			for range ops {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				i := int(x % n)
				if x>>60 < 5 {
					if timers[i].Stop() {
						stops[i].Add(1)
					}
				} else if !timers[i].Reset(time.Duration(x>>40%2000) * time.Microsecond) {
					starts[i].Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	require.Positive(t, <-advanced)
	v.RunUntilIdle()
	var total int64
	for i := range timers {
		require.Equal(t, starts[i].Load(), fires[i].Load()+stops[i].Load(), "timer %d", i)
		total += starts[i].Load()
	}
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, total, s.Scheduled)
	require.Zero(t, s.Pending)
}

// A callback that advances its own virtual wheel would wait forever for the
// advance that runs it; it panics with ErrOverlappingAdvance instead, as
// does an advance from another goroutine while one is under way, and an
// advance from a callback that a synchronous Executor runs on another
// goroutine (which the re-entry check, a search of the calling goroutine's
// stack, used to miss: that advance hung).
func TestVirtualReentrantAdvancePanics(t *testing.T) {
	advances := map[string]func(v *wheel.Virtual){
		"AdvanceTo":     func(v *wheel.Virtual) { v.AdvanceTo(v.Now() + ms) },
		"AdvanceBy":     func(v *wheel.Virtual) { v.AdvanceBy(ms) },
		"AdvanceToNext": func(v *wheel.Virtual) { v.AdvanceToNext() },
		"RunUntilIdle":  func(v *wheel.Virtual) { v.RunUntilIdle() },
	}
	// offGoroutine is a synchronous Executor that runs each callback on a
	// goroutine of its own and waits for it.
	offGoroutine := func(task wheel.Task) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			task.Run()
		}()
		<-done
	}
	for name, advance := range advances {
		for _, exec := range []struct {
			name string
			e    wheel.Executor
		}{{"inline", nil}, {"executor on another goroutine", offGoroutine}} {
			t.Run(name+"/"+exec.name, func(t *testing.T) {
				cfg := wheel.DefaultConfig()
				cfg.Executor = exec.e
				cfg.Logger = hclog.NewNullLogger()
				v, err := wheel.NewVirtual(cfg)
				require.NoError(t, err)
				defer v.Stop()
				var got any
				_, err = v.AfterFunc(ms, func() {
					defer func() { got = recover() }()
					advance(v)
				})
				require.NoError(t, err)
				_, err = v.AfterFunc(5*ms, func() {})
				require.NoError(t, err)
				require.Equal(t, 1, v.AdvanceTo(2*ms))
				require.NotNil(t, got, "no panic")
				require.ErrorIs(t, got.(error), wheel.ErrOverlappingAdvance)
				require.Equal(t, 1, v.AdvanceTo(10*ms), "the wheel still works")
			})
		}
	}
	t.Run("other goroutine is refused", func(t *testing.T) {
		v := newVirtual(t, nil)
		entered, release := make(chan struct{}), make(chan struct{})
		_, err := v.AfterFunc(ms, func() { close(entered); <-release })
		require.NoError(t, err)
		_, err = v.AfterFunc(3*ms, func() {})
		require.NoError(t, err)
		first := make(chan int)
		go func() { first <- v.AdvanceTo(2 * ms) }()
		<-entered
		require.PanicsWithError(t, wheel.ErrOverlappingAdvance.Error(), func() { v.AdvanceTo(4 * ms) })
		close(release)
		require.Equal(t, 1, <-first)
		require.Equal(t, 1, v.AdvanceTo(4*ms), "advancing works again once the first returned")
	})
}
