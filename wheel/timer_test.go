package wheel_test

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

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

// ResetAt schedules at an absolute time on the wheel's clock, exactly on
// a virtual wheel; a time already passed is due at once; it moves a
// pending timer either way and reports that it was pending; a stopped
// wheel refuses it.
func TestTimerResetAt(t *testing.T) {
	v := newVirtual(t, nil)
	r := &recorder{v: v}
	var tm wheel.Timer
	require.NoError(t, tm.Init(v.Wheel, r.fn("t")))
	require.False(t, tm.ResetAt(7*ms+300))
	dl, ok := tm.Deadline()
	require.True(t, ok)
	require.Equal(t, 7*ms+300, dl)
	require.True(t, tm.ResetAt(3*ms)) // earlier
	require.True(t, tm.ResetAt(9*ms)) // later
	v.AdvanceTo(10 * ms)
	require.Equal(t, []string{"t@9ms"}, r.fires)

	require.False(t, tm.ResetAt(2*ms)) // passed: due at once
	dl, ok = tm.Deadline()
	require.True(t, ok)
	require.Equal(t, 10*ms, dl)
	require.Equal(t, 1, v.AdvanceBy(0))
	require.Equal(t, []string{"t@9ms", "t@10ms"}, r.fires)

	v.Stop()
	wasPending, err := tm.TryResetAt(20 * ms)
	require.ErrorIs(t, err, wheel.ErrStopped)
	require.False(t, wasPending)
}

func TestUninitializedTimer(t *testing.T) {
	var tm wheel.Timer
	require.NotPanics(t, func() {
		wasPending, err := tm.TryReset(ms)
		require.ErrorIs(t, err, wheel.ErrNotInitialized)
		require.False(t, wasPending)
		require.False(t, tm.Reset(ms))
		wasPending, err = tm.TryResetAt(ms)
		require.ErrorIs(t, err, wheel.ErrNotInitialized)
		require.False(t, wasPending)
		require.False(t, tm.ResetAt(ms))
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
