package wheel

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRealtimeSlowCallbackDoesNotDelayLaterTimers: lateness on a real-time
// wheel is bounded by about a tick plus scheduler delay (DESIGN.md). One
// slow callback delays the timers due while it runs, but must not make
// timers scheduled afterwards fire late. In a bubble the scheduler adds
// no delay, so the bound is exact.
func TestRealtimeSlowCallbackDoesNotDelayLaterTimers(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const slow = 300 * time.Millisecond
		w := newBubbleWheel(t, time.Millisecond)
		var heartbeat Timer
		require.NoError(t, heartbeat.Init(w, func() {}))
		started := make(chan struct{})
		finished := make(chan struct{})
		_, err := w.AfterFunc(10*time.Millisecond, func() {
			close(started)
			time.Sleep(slow) // the slow callback under test
			close(finished)
		})
		require.NoError(t, err)
		// Heartbeats keep Reset busy until the slow callback starts, as in
		// a Raft process where followers reset their election timers all
		// the time.
		heartbeats(t, &heartbeat, started)
		heartbeat.Reset(time.Second)
		<-finished

		// Timers scheduled after the slow callback returned.
		worst := worstLateness(t, w, 20, 5*time.Millisecond)
		require.LessOrEqual(t, worst, rtLatenessBound(w),
			"timers scheduled after a %v callback fire %v late (stats %+v)", slow, worst, w.Stats())
	})
}

// rtLatenessBound is the lateness a real-time wheel promises in a bubble,
// where the scheduler adds none: a tick, a second one for a timer Reset
// while the driver sleeps, and the epoch a Reset's coarse deadline comes
// from (maxEpoch, or a tick at coarse ticks: epochSpan).
func rtLatenessBound(w *Wheel) time.Duration {
	return time.Duration(2*w.tick + w.epochSpan + republishAfter)
}

// heartbeats resets tm a second ahead every 50µs of the bubble's time
// until stop is closed.
func heartbeats(t *testing.T, tm *Timer, stop <-chan struct{}) {
	t.Helper()
	for {
		tm.Reset(time.Second)
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Microsecond):
		}
	}
}

// worstLateness schedules n timers d from now and returns how late the
// latest of them fired, measured on the test's clock from each schedule.
func worstLateness(t *testing.T, w *Wheel, n int, d time.Duration) time.Duration {
	t.Helper()
	fired := make(chan time.Duration, n)
	for range n {
		start := time.Now()
		_, err := w.AfterFunc(d, func() { fired <- time.Since(start) - d })
		require.NoError(t, err)
	}
	var worst time.Duration
	for range n {
		select {
		case late := <-fired:
			require.GreaterOrEqual(t, late, time.Duration(0), "a timer fired early")
			worst = max(worst, late)
		case <-time.After(rtWaitLimit):
			t.Fatal("timer lost")
		}
	}
	return worst
}

// TestRealtimeLatenessCountsSlowCallbacks: Stats.MaxLateness is the largest
// delay between a deadline and the driver starting the callback, so a timer
// that waited behind a slow callback must show that wait. The slow callback
// schedules the other timer before it sleeps: the driver runs one callback
// at a time, so that timer, due at once, starts at least the sleep late
// whatever order the driver finds due timers in (real time defines none).
func TestRealtimeLatenessCountsSlowCallbacks(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const slow = 50 * time.Millisecond
		w := newBubbleWheel(t, time.Millisecond)
		done := make(chan struct{})
		var a, b Timer
		require.NoError(t, b.Init(w, func() { close(done) }))
		require.NoError(t, a.Init(w, func() { // the slow callback under test
			b.Reset(0)
			time.Sleep(slow)
		}))
		a.Reset(0)
		<-done
		s := w.Stats()
		require.GreaterOrEqual(t, s.MaxLateness, slow, "b started %v or more after its deadline: %+v", slow, s)
		require.GreaterOrEqual(t, s.LateFires, int64(1), "%+v", s)
	})
}

// TestRealtimeDriverStallDoesNotDelayLaterTimers: the driver may be held up
// (CPU starvation, a GC pause, a long callback); timers due meanwhile fire
// late, and Resets made meanwhile take their deadlines from the epoch the
// driver published before the stall, but timers scheduled after the stall
// must again fire within about a tick (doc.go, DESIGN.md), not a whole
// stall late. The stall is a callback that sleeps while heartbeat Resets
// keep the coarse clock in use.
func TestRealtimeDriverStallDoesNotDelayLaterTimers(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const stall = 100 * time.Millisecond
		w := newBubbleWheel(t, time.Millisecond)
		var heartbeat, busy Timer
		require.NoError(t, heartbeat.Init(w, func() {}))
		// A timer due every 500µs keeps the driver waking often, so that it
		// keeps the coarse clock published (it stops publishing before long
		// sleeps).
		require.NoError(t, busy.Init(w, func() { busy.Reset(500 * time.Microsecond) }))
		busy.Reset(0)
		stop := make(chan struct{})
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			heartbeats(t, &heartbeat, stop) // followers hearing heartbeats
		}()
		stalled := make(chan struct{})
		_, err := w.AfterFunc(5*time.Millisecond, func() {
			time.Sleep(stall) // the stall under test
			close(stalled)
		})
		require.NoError(t, err)
		<-stalled
		close(stop)
		<-stopped

		worst := worstLateness(t, w, 20, 5*time.Millisecond)
		require.LessOrEqual(t, worst, rtLatenessBound(w),
			"timers scheduled after a %v driver stall fire %v late (stats %+v)", stall, worst, w.Stats())
		busy.Stop()
	})
}

// A driver asleep until a far deadline, or with nothing to do, is woken by
// a timer due sooner, whichever way it sleeps (on a timerfd where there is
// one, or with the runtime's timers), and Stop ends its sleep.
func TestRealtimeSoonerTimerWakesSleepingDriver(t *testing.T) {
	for _, napMin := range []int{0, -1} {
		t.Run(fmt.Sprintf("napMin=%d", napMin), func(t *testing.T) {
			w := newRealtime(t, time.Millisecond)
			w.napMin = napMin
			far, err := w.AfterFunc(time.Hour, func() {})
			require.NoError(t, err)
			fired := make(chan struct{}, 2)
			for round := range 2 {
				// Wait until the driver sleeps until the far deadline (in
				// the second round the far timer is stopped, lazily: it
				// still occupies its slot, which the driver sleeps until).
				for w.sleepUntil.Load() < int64(time.Minute) {
					runtime.Gosched()
				}
				_, err := w.AfterFunc(time.Millisecond, func() { fired <- struct{}{} })
				require.NoError(t, err)
				select {
				case <-fired:
				case <-time.After(rtWaitLimit):
					t.Fatalf("round %d: the sooner timer did not fire within %v", round, rtWaitLimit)
				}
				far.Stop()
			}
		})
	}
}

// A timer scheduled during a driver stall carries its epoch's slack, the
// length of the stall. Once due, it may wait out that slack in its slot,
// but the slot is still taken whole at its end (the timer moving on to
// wait in the next), so timers in later slots are not held up behind it
// (found by the multi-raft host's benchmark: every host's tick waited
// out one such timer).
func TestRealtimeSlackWaitDoesNotHoldUpLaterSlots(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const stall = 100 * time.Millisecond
		w := newBubbleWheel(t, time.Millisecond)
		var busy Timer
		require.NoError(t, busy.Init(w, func() { busy.Reset(500 * time.Microsecond) }))
		busy.Reset(0)
		// Stall the driver in a callback, while the coarse clock is
		// published (the driver publishes it before a batch of callbacks).
		// A is reset during the stall: its deadline comes from the stalled
		// epoch, whose slack will be the stall, and it is due a few ticks
		// after the stall ends.
		var a Timer
		aFired := make(chan time.Time, 1)
		require.NoError(t, a.Init(w, func() { aFired <- time.Now() }))
		aDelay := stall + 3*time.Millisecond
		var aStart time.Time
		inStall, stallEnd := make(chan struct{}), make(chan struct{})
		_, err := w.AfterFunc(5*time.Millisecond, func() {
			close(inStall)
			<-stallEnd // the stall under test
		})
		require.NoError(t, err)
		<-inStall
		require.GreaterOrEqual(t, w.coarse.Load(), int64(0), "the coarse clock is published during callbacks")
		time.Sleep(stall / 2)
		aStart = time.Now()
		a.Reset(aDelay)
		time.Sleep(stall / 2)
		close(stallEnd)

		bFired := make(chan time.Time, 1)
		bStart := time.Now()
		_, err = w.AfterFunc(5*time.Millisecond, func() { bFired <- time.Now() })
		require.NoError(t, err)
		bAt, aAt := <-bFired, <-aFired
		require.GreaterOrEqual(t, aAt.Sub(aStart), aDelay, "A fired early")
		late := bAt.Sub(bStart) - 5*time.Millisecond
		require.GreaterOrEqual(t, late, time.Duration(0), "B fired early")
		require.LessOrEqual(t, late, rtLatenessBound(w), "B, due after A's slot, waited out A's slack (stats %+v)", w.Stats())
		busy.Stop()
	})
}

// TestRealtimeSubTickPeriodDoesNotSpin: a timer that re-arms itself far
// below the tick (1ns, or at once), as a multi-raft host with a 2ns
// heartbeat would ask, must not make the driver spin or hang: the driver
// still sleeps between rounds (in a bubble a driver that never blocks
// would stop the bubble's clock, and the test's sleep would never end),
// other timers on the wheel fire within the lateness bound, and Stop
// returns. (A virtual wheel fires such a timer at every deadline it
// asks for, exactly: a timer re-armed every nanosecond fires a billion
// times per second of virtual time, and one re-armed at once from its
// own callback keeps its advance at that instant for ever.)
func TestRealtimeSubTickPeriodDoesNotSpin(t *testing.T) {
	forms := map[string]func(w *Wheel, tm *Timer, fires *atomic.Int64){
		"Reset(0) from the callback": func(w *Wheel, tm *Timer, fires *atomic.Int64) {
			require.NoError(t, tm.Init(w, func() { fires.Add(1); tm.Reset(0) }))
		},
		"Reset(1ns) from the callback": func(w *Wheel, tm *Timer, fires *atomic.Int64) {
			require.NoError(t, tm.Init(w, func() { fires.Add(1); tm.Reset(1) }))
		},
		"NextFunc 1ns": func(w *Wheel, tm *Timer, fires *atomic.Int64) {
			require.NoError(t, tm.InitNext(w, func(*Timer, error) time.Duration { fires.Add(1); return 1 }))
		},
		"NextFunc 1ns, SetPeriodic": func(w *Wheel, tm *Timer, fires *atomic.Int64) {
			require.NoError(t, tm.InitNext(w, func(*Timer, error) time.Duration { fires.Add(1); return 1 }))
			require.NoError(t, tm.SetPeriodic(true))
		},
	}
	for _, tick := range []time.Duration{time.Millisecond, 2 * maxBatchTick} {
		for name, form := range forms {
			t.Run(fmt.Sprintf("tick=%v/%s", tick, name), func(t *testing.T) {
				inBubble(t, func(t *testing.T) {
					w := newBubbleWheel(t, tick)
					var tm Timer
					var fires atomic.Int64
					form(w, &tm, &fires)
					start := time.Now()
					tm.Reset(1)
					const span = 20 * time.Millisecond
					late := worstLateness(t, w, 4, 5*time.Millisecond)
					time.Sleep(span)
					elapsed := time.Since(start)
					tm.Stop()
					require.LessOrEqual(t, late, rtLatenessBound(w), "other timers fire late")
					require.Positive(t, fires.Load())
					w.Stop()
					t.Logf("%d fires in %v, %d wake-ups", fires.Load(), elapsed, w.Stats().Wakeups)
				})
			})
		}
	}
}

// TestRealtimeResetAtIsNotLateByItsCallback: a periodic callback that
// re-arms its own timer with ResetAt as it begins and then runs long (a
// host's heartbeat tick) must fire its next round on time, not late by
// its own length, as a Reset there may (its coarse clock's epoch lasts as
// long as the callback).
func TestRealtimeResetAtIsNotLateByItsCallback(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const (
			period = 45 * time.Millisecond
			work   = 5 * time.Millisecond
			rounds = 10
		)
		w := newBubbleWheel(t, time.Millisecond)
		var tick Timer
		var lates []time.Duration
		done := make(chan struct{})
		due := w.Now() + period
		require.NoError(t, tick.Init(w, func() {
			now := w.Now()
			lates = append(lates, now-due)
			due += period
			if len(lates) == rounds {
				close(done)
				return
			}
			tick.ResetAt(due)
			time.Sleep(work) // the callback's work, after the re-arm
		}))
		tick.ResetAt(due)
		<-done
		for i, late := range lates {
			require.GreaterOrEqual(t, late, time.Duration(0), "round %d fired early", i)
			require.LessOrEqual(t, late, rtLatenessBound(w),
				"round %d fired %v late after a callback of %v (all: %v)", i, late, work, lates)
		}
	})
}
