package wheel_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

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
