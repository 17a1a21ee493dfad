package wheel_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

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
