package repeated_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// The semantics again, on the real-time wheel, with triggers on the driver
// goroutine or on goroutines of wheel.GoExecutor, and callers on other
// goroutines. Run under -race. Assertions never depend on how fast the
// machine is: they check orderings and invariants (never early, never two
// triggers at once, hook once and last), not durations.

// guard bounds every wait so a bug fails the test instead of hanging it.
const guard = 10 * time.Second

func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// within runs f on another goroutine and fails if it does not return in
// time: for calls that must not block on a running trigger.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	recv(t, done, what+" to return")
}

// until spins (yielding) until cond holds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestRealtime_Semantic02_ConcurrentStartsKeepTheDeadline(t *testing.T) {
	w := newRealtime(t, nil)
	tm := mustNew(t, w, "rt2", time.Hour, func() {},
		repeated.WithJitter(repeated.UniformExtra(time.Hour)), repeated.WithRand(seeded(2)))
	tm.Start()
	d1, ok := tm.Deadline()
	require.True(t, ok)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				tm.Start()
			}
		})
	}
	wg.Wait()
	d, _ := tm.Deadline()
	require.Equal(t, d1, d)
	require.EqualValues(t, 1, tm.Stats().Schedules)

	for range 8 {
		wg.Go(func() {
			for range 100 {
				tm.Restart()
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 801, tm.Stats().Schedules, "every Restart re-arms")
	require.EqualValues(t, 1, w.Stats().Pending)
	tm.Destroy()
	require.EqualValues(t, 0, w.Stats().Pending)
}

func TestRealtime_Semantic03_StopFromAnotherGoroutineDuringTrigger(t *testing.T) {
	w := newRealtime(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var triggers atomic.Int32
	tm := mustNew(t, w, "rt3", ms, func() {
		if triggers.Add(1) == 1 {
			close(entered)
			<-release
		}
	})
	tm.Start()
	recv(t, entered, "the trigger")
	within(t, "Stop during the trigger", tm.Stop) // must not wait for the trigger
	require.True(t, tm.IsInvoking())
	require.True(t, tm.IsStopped())
	close(release)
	until(t, "the trigger to finish", func() bool { return !tm.IsInvoking() })
	_, ok := tm.Deadline()
	require.False(t, ok, "no re-arm after a stopped trigger")
	require.EqualValues(t, 0, w.Stats().Pending)
	require.EqualValues(t, 1, triggers.Load())
	tm.Destroy()
}

func TestRealtime_Semantic04_RearmInsideTriggerNeverFiresEarly(t *testing.T) {
	for _, exec := range []struct {
		name string
		e    wheel.Executor
	}{{"driver", nil}, {"go-executor", wheel.GoExecutor}} {
		t.Run(exec.name, func(t *testing.T) {
			w := newRealtime(t, exec.e)
			const period = 2 * ms
			const n = 25
			var mu sync.Mutex
			var starts, ends []time.Duration
			var maxPending int64
			done := make(chan struct{})
			beat := make(chan struct{}, 1)
			var tm *repeated.Timer
			tm = mustNew(t, w, "rt4", period, func() {
				now := w.Now()
				mu.Lock()
				starts = append(starts, now)
				k := len(starts)
				maxPending = max(maxPending, w.Stats().Pending)
				mu.Unlock()
				switch k % 3 { // re-arm inside the trigger, three ways
				case 0:
					tm.Reset()
				case 1:
					tm.Restart()
				case 2:
					tm.Stop()
					tm.Start()
				}
				if k == n {
					tm.Stop()
					close(done)
				}
				select {
				case beat <- struct{}{}:
				default:
				}
				mu.Lock()
				ends = append(ends, w.Now())
				mu.Unlock()
			})
			// Concurrent heartbeats, one burst per trigger (unpaced ones
			// would keep the timer from ever firing): they race with the
			// trigger's own re-arm and can only push deadlines later.
			stop := make(chan struct{})
			var wg sync.WaitGroup
			defer func() { close(stop); wg.Wait() }()
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-beat:
						for range 3 {
							tm.Reset()
							runtime.Gosched()
						}
					}
				}
			})
			tm.Start()
			recv(t, done, fmt.Sprintf("%d triggers", n))
			until(t, "the last trigger to finish", func() bool { return !tm.IsInvoking() })
			tm.Destroy()

			mu.Lock()
			defer mu.Unlock()
			require.Len(t, starts, n)
			for i := 1; i < n; i++ {
				// A second live schedule would fire sooner than one period
				// after the previous trigger returned.
				require.GreaterOrEqual(t, starts[i]-ends[i-1], period, "trigger %d fired early", i)
			}
			require.LessOrEqual(t, maxPending, int64(0), "nothing is armed while a trigger runs")
		})
	}
}

func TestRealtime_Semantic05_ResetTimeoutWhileStopped(t *testing.T) {
	w := newRealtime(t, nil)
	fired := make(chan time.Duration, 1)
	tm := mustNew(t, w, "rt5", time.Hour, func() { fired <- w.Now() })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { tm.ResetTimeout(time.Duration(i+1) * time.Hour) })
	}
	wg.Wait()
	tm.ResetTimeout(3 * ms)
	require.True(t, tm.IsStopped())
	startedAt := w.Now()
	tm.Start()
	select {
	case at := <-fired:
		require.GreaterOrEqual(t, at-startedAt, 3*ms)
	case <-time.After(guard):
		t.Fatal("the timer did not fire with the recorded timeout")
	}
	tm.Destroy()
}

func TestRealtime_Semantic06_StopThenDestroyDuringTriggerRunsHookOnce(t *testing.T) {
	w := newRealtime(t, wheel.GoExecutor)
	entered, release, hooked := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var triggers, hooks atomic.Int32
	var returned atomic.Bool
	tm := mustNew(t, w, "rt6", ms, func() {
		if triggers.Add(1) == 1 {
			close(entered)
			<-release
		}
		returned.Store(true)
	}, repeated.WithOnDestroy(func() {
		if !returned.Load() {
			t.Error("hook ran before the trigger returned")
		}
		if hooks.Add(1) == 1 {
			close(hooked)
		}
	}))
	tm.Start()
	recv(t, entered, "the trigger")
	within(t, "Stop and concurrent Destroys during the trigger", func() {
		tm.Stop()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(tm.Destroy)
		}
		wg.Wait()
	})
	require.Zero(t, hooks.Load(), "the hook waits for the running trigger")
	close(release)
	recv(t, hooked, "the hook")
	until(t, "the trigger to finish", func() bool { return !tm.IsInvoking() })
	tm.Destroy()
	tm.Start()
	tm.RunOnceNow()
	require.EqualValues(t, 1, hooks.Load())
	require.EqualValues(t, 1, triggers.Load())
	require.EqualValues(t, 0, w.Stats().Pending)
}

// TestRealtime_Semantic07_AtMostOneTriggerInFlightUnderConcurrentCallers
// hammers one timer from several goroutines with every operation while the
// wheel runs fires late on fresh goroutines, then destroys it.
func TestRealtime_Semantic07_AtMostOneTriggerInFlightUnderConcurrentCallers(t *testing.T) {
	// A slow pool: each due callback starts on its own goroutine after a
	// delay, so callbacks overtaken by re-arms (stale) are common.
	w := newRealtime(t, func(task wheel.Task) {
		go func() {
			for range 100 {
				runtime.Gosched()
			}
			task.Run()
		}()
	})
	var inFlight, maxInFlight, triggers atomic.Int32
	var hooked atomic.Bool
	hookDone := make(chan struct{})
	var tm *repeated.Timer
	tm = mustNew(t, w, "rt7", ms, func() {
		n := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		if hooked.Load() {
			t.Error("trigger ran after the on-destroy hook")
		}
		triggers.Add(1)
		tm.Reset() // the trigger uses the timer too (semantic 8)
		_ = tm.Timeout()
		runtime.Gosched()
		inFlight.Add(-1)
	}, repeated.WithJitter(repeated.UniformExtra(ms)), repeated.WithRand(seeded(7)),
		repeated.WithOnDestroy(func() {
			if inFlight.Load() != 0 {
				t.Error("hook ran while a trigger was in flight")
			}
			hooked.Store(true)
			close(hookDone)
		}))
	tm.Start()
	// Hammer until the stale-callback path has been taken a few times (a
	// wheel fire overtaken by a re-arm), or for at most a second.
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := seeded(uint64(100 + g))
			for !stop.Load() {
				switch r.IntN(7) {
				case 0:
					tm.Start()
				case 1:
					tm.Stop()
				case 2, 3:
					tm.Reset()
				case 4:
					tm.Restart()
				case 5:
					tm.RunOnceNow()
				case 6:
					tm.ResetTimeout(time.Duration(1+r.IntN(200)) * time.Microsecond)
				}
				// Leave gaps in which deadlines pass and the wheel fires.
				time.Sleep(time.Duration(r.IntN(400)) * time.Microsecond)
			}
		})
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end) && tm.Stats().Stale < 3; {
		time.Sleep(ms) // real time is the point of this test
	}
	stop.Store(true)
	wg.Wait()
	tm.Restart()
	until(t, "a few wheel fires", func() bool { return triggers.Load() >= 3 })
	tm.Destroy()
	recv(t, hookDone, "the hook")
	require.EqualValues(t, 1, maxInFlight.Load(), "two triggers ran at once")
	st := tm.Stats()
	require.EqualValues(t, triggers.Load(), st.Triggers)
	t.Logf("triggers=%d schedules=%d stale=%d", st.Triggers, st.Schedules, st.Stale)
}

func TestRealtime_Semantic08_RunOnceNowConcurrentWithFires(t *testing.T) {
	w := newRealtime(t, wheel.GoExecutor)
	var inFlight, overlaps, triggers atomic.Int32
	var tm *repeated.Timer
	tm = mustNew(t, w, "rt8", 200*time.Microsecond, func() {
		if inFlight.Add(1) > 1 {
			overlaps.Add(1)
		}
		triggers.Add(1)
		tm.RunOnceNow() // no-op: a trigger is running
		tm.ResetTimeout(tm.Timeout())
		_ = tm.String()
		inFlight.Add(-1)
	})
	tm.Start()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2000 {
				tm.RunOnceNow()
			}
		})
	}
	wg.Wait()
	until(t, "the timer to keep firing", func() bool { return triggers.Load() >= 8000/4 })
	tm.Destroy()
	until(t, "quiescence", func() bool { return !tm.IsInvoking() })
	require.Zero(t, overlaps.Load())
}

func TestRealtime_Semantic10_ResetAllocatesNothing(t *testing.T) {
	w := newRealtime(t, nil)
	tm := mustNew(t, w, "rt10", time.Minute, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(10)))
	tm.Start()
	require.Zero(t, testing.AllocsPerRun(10000, func() { _ = tm.Reset() }))
	tm.Destroy()
}

// TestRealtime_NoGoroutinesLeftAfterDestroy: the package starts no
// goroutines of its own; once timers are destroyed and their wheel stopped,
// nothing is left.
func TestRealtime_NoGoroutinesLeftAfterDestroy(t *testing.T) {
	cfg := wheel.DefaultConfig()
	cfg.Executor = wheel.GoExecutor
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	var fired atomic.Int32
	timers := make([]*repeated.Timer, 50)
	for i := range timers {
		timers[i] = mustNew(t, w, fmt.Sprintf("leak-%d", i), time.Duration(1+i%3)*ms, func() { fired.Add(1) },
			repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(rand.New(rand.NewPCG(uint64(i), 1))))
		timers[i].Start()
	}
	until(t, "some fires", func() bool { return fired.Load() >= 100 })
	for _, tm := range timers {
		tm.Destroy()
	}
	w.Stop()
	<-w.Done()
	goleak.VerifyNone(t)
}

// TestRealtimeLockFreeResetCountsSchedules: Resets of an armed timer on a
// real-time wheel, the lock-free path from several goroutines at once,
// each count one schedule and leave exactly one schedule pending.
func TestRealtimeLockFreeResetCountsSchedules(t *testing.T) {
	w := newRealtime(t, nil)
	tm := mustNew(t, w, "hb", time.Hour, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(1, 2))
	require.NoError(t, tm.Start())
	resetFromFour(t, tm)
	require.EqualValues(t, 4001, tm.Stats().Schedules)
	require.EqualValues(t, 1, w.Stats().Pending)
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.GreaterOrEqual(t, d-w.Now(), 59*time.Minute)
	tm.Destroy()
	require.EqualValues(t, 0, w.Stats().Pending)
}

// TestRealtimeResetRacesResetTimeout: a Reset that read the old timeout
// without the lock must not leave its deadline in place once a concurrent
// ResetTimeout has re-armed with the new one. Each round a goroutine
// resets the timer in a loop while ResetTimeout moves the timeout from 1h
// to 2h; once the loop has stopped, the pending deadline must be 2h away.
// (With the lock-free Reset's re-check removed, this fails within a few
// hundred rounds.)
func TestRealtimeResetRacesResetTimeout(t *testing.T) {
	t.Run("draw", func(t *testing.T) { resetRacesResetTimeout(t) })
	t.Run("keep", func(t *testing.T) { resetRacesResetTimeout(t, repeated.WithResetKeepsDelay()) })
}

func resetRacesResetTimeout(t *testing.T, opts ...repeated.Option) {
	w := newRealtime(t, nil)
	tm := mustNew(t, w, "e", time.Hour, func() {}, opts...)
	require.NoError(t, tm.Start())
	for round := range 2000 {
		tm.ResetTimeout(time.Hour)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := tm.Reset(); err != nil {
					t.Error(err)
					return
				}
			}
		})
		runtime.Gosched()
		tm.ResetTimeout(2 * time.Hour)
		close(stop)
		wg.Wait()
		d, ok := tm.Deadline()
		require.True(t, ok)
		if left := d - w.Now(); left < 119*time.Minute {
			t.Fatalf("round %d: after ResetTimeout(2h) the deadline is %v away: a Reset drawn from the old timeout stayed", round, left)
		}
	}
}

// TestRealtimeLockFreeResetRacesEverything: the lock-free Reset (WithSeed
// and a built-in policy) against every other method and the wheel's
// fires, from four goroutines with short timeouts so that fires and
// re-arms are frequent. At no time do two triggers run; once the callers
// are done and the timer is stopped, nothing is left scheduled and Reset
// does not revive it; Stats counts every trigger. Thread interleavings are the scheduler's, so the seed
// reproduces the operations, not the run.
func TestRealtimeLockFreeResetRacesEverything(t *testing.T) {
	seed := testseed.Seed(t, "-race", "-v")
	t.Run("draw", func(t *testing.T) { lockFreeResetRacesEverything(t, seed) })
	t.Run("keep", func(t *testing.T) { lockFreeResetRacesEverything(t, seed, repeated.WithResetKeepsDelay()) })
}

func lockFreeResetRacesEverything(t *testing.T, seed uint64, opts ...repeated.Option) {
	w := newRealtime(t, nil)
	var inFlight, triggers atomic.Int32
	var tm *repeated.Timer
	tm = mustNew(t, w, "hb", 200*time.Microsecond, func() {
		if inFlight.Add(1) != 1 {
			t.Error("two triggers ran at once")
		}
		triggers.Add(1)
		if triggers.Load()%3 == 0 {
			tm.Reset() // from inside the trigger: nothing is armed, so a no-op
		}
		inFlight.Add(-1)
	}, append([]repeated.Option{repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(seed, 1)}, opts...)...)
	require.NoError(t, tm.Start())
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := 0; !stop.Load(); i++ {
				ops.Add(1)
				switch r.IntN(10) {
				case 0:
					tm.Start()
				case 1:
					tm.Stop()
				case 2:
					tm.Restart()
				case 3:
					tm.RunOnceNow()
				case 4:
					tm.ResetTimeout(time.Duration(100+r.IntN(400)) * time.Microsecond)
				default:
					tm.Reset()
				}
				if i%64 == 0 {
					runtime.Gosched() // let the driver fire some
				}
			}
		})
	}
	until(t, "100k calls and a few hundred triggers", func() bool { return ops.Load() >= 100_000 && triggers.Load() >= 300 })
	stop.Store(true)
	wg.Wait()
	tm.Stop()
	require.ErrorIs(t, tm.Reset(), repeated.ErrNotRunning)
	_, pending := tm.Deadline()
	require.False(t, pending)
	until(t, "the last trigger to return", func() bool { return !tm.IsInvoking() })
	require.EqualValues(t, 0, w.Stats().Pending, "a schedule outlived Stop")
	require.EqualValues(t, triggers.Load(), tm.Stats().Triggers)
	tm.Destroy()
}

// TestRealtimeResetKeepsDelay: on a real-time wheel the lock-free Reset of
// a timer made WithResetKeepsDelay restarts the countdown it drew at
// Start, from several goroutines at once, and counts every schedule.
func TestRealtimeResetKeepsDelay(t *testing.T) {
	w := newRealtime(t, nil)
	tm := mustNew(t, w, "e", time.Hour, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(4, 5), repeated.WithResetKeepsDelay())
	require.NoError(t, tm.Start())
	d, ok := tm.Deadline()
	require.True(t, ok)
	first := d - w.Now()
	resetFromFour(t, tm)
	d, ok = tm.Deadline()
	require.True(t, ok)
	// The same delay from a later (coarse) now: the countdown restarted
	// where the clock is, give or take the coarse clock's lag.
	require.InDelta(t, float64(first), float64(d-w.Now()), float64(time.Second),
		"a Reset drew %v afresh instead of restarting %v", d-w.Now(), first)
	require.EqualValues(t, 4001, tm.Stats().Schedules)
}

// resetFromFour resets tm 1000 times from each of four goroutines at once.
func resetFromFour(t *testing.T, tm *repeated.Timer) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				if err := tm.Reset(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
