package repeated_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/repeated"
)

// The ten semantics of the package documentation, one test each, on the
// virtual wheel: exact times, no sleeps. realtime_test.go repeats them on
// the real-time wheel with concurrent callers.

func TestSemantic01_JitterAppliedOnEveryScheduleWithInjectedRand(t *testing.T) {
	v := newVirtual(t)
	rng := seeded(7)
	var states []repeated.State
	var drawn []time.Duration
	j := repeated.Func(func(base time.Duration, st repeated.State, r *rand.Rand) time.Duration {
		require.Same(t, rng, r, "the policy must get the injected source")
		states = append(states, st)
		d := base + time.Duration(r.Int64N(int64(base)))
		drawn = append(drawn, d)
		return d
	})
	var fires []time.Duration
	tm := mustNew(t, v.Wheel, "s1", 100*ms, func() { fires = append(fires, v.Now()) },
		repeated.WithJitter(j), repeated.WithRand(rng))

	tm.Start()               // 1: first schedule
	v.AdvanceToNext()        // fire 1, 2: re-arm after the trigger
	v.AdvanceToNext()        // fire 2, 3: re-arm after the trigger
	v.AdvanceBy(10 * ms)     //
	tm.Reset()               // 4
	tm.ResetTimeout(50 * ms) // 5 (new base)
	tm.Restart()             // 6: first again, consecutive cleared
	tm.Stop()                //    no schedule
	tm.Start()               // 7: first again
	tm.Start()               //    no-op: no schedule
	now := v.Now()
	deadline, ok := tm.Deadline()
	require.True(t, ok)

	require.Equal(t, []repeated.State{
		{First: true}, {Consecutive: 1}, {Consecutive: 2}, {Consecutive: 2},
		{Consecutive: 2}, {First: true}, {First: true},
	}, states)
	require.EqualValues(t, 7, tm.Stats().Schedules)
	require.Equal(t, []time.Duration{drawn[0], drawn[0] + drawn[1]}, fires)
	require.Equal(t, now+drawn[6], deadline)

	// The draws came from the injected source and nothing else: a source
	// with the same seed reproduces them.
	replay := seeded(7)
	bases := []time.Duration{100 * ms, 100 * ms, 100 * ms, 100 * ms, 50 * ms, 50 * ms, 50 * ms}
	for i, b := range bases {
		require.Equal(t, b+time.Duration(replay.Int64N(int64(b))), drawn[i], "draw %d", i)
	}

	// Empty ranges mean no jitter, on every schedule.
	for _, j := range []repeated.Jitter{repeated.UniformExtra(0), repeated.Proportional(0), repeated.Backoff(3, 100*ms)} {
		var at []time.Duration
		tm := mustNew(t, v.Wheel, "empty", 100*ms, func() { at = append(at, v.Now()) }, repeated.WithJitter(j))
		start := v.Now()
		tm.Start()
		v.AdvanceTo(start + 300*ms)
		tm.Destroy()
		require.Equal(t, []time.Duration{start + 100*ms, start + 200*ms, start + 300*ms}, at, "%v", j)
	}
}

func TestSemantic02_StartIsIdempotentRestartAlwaysRearms(t *testing.T) {
	v := newVirtual(t)
	var fires []time.Duration
	tm := mustNew(t, v.Wheel, "s2", 150*ms, func() { fires = append(fires, v.Now()) },
		repeated.WithJitter(repeated.UniformExtra(150*ms)), repeated.WithRand(seeded(2)))

	tm.Start()
	d1, ok := tm.Deadline()
	require.True(t, ok)
	require.GreaterOrEqual(t, d1, 150*ms)

	// SOFAJRaft issue #407: stepDown called start on a running election
	// timer, which kept the old, nearly expired deadline. Start is a no-op...
	v.AdvanceTo(d1 - ms)
	tm.Start()
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.Equal(t, d1, d, "Start on a running timer must not move the deadline")
	require.EqualValues(t, 1, tm.Stats().Schedules, "Start on a running timer must not draw")

	// ...Restart re-arms with a fresh, full, jittered timeout.
	now := v.Now()
	tm.Restart()
	d2, ok := tm.Deadline()
	require.True(t, ok)
	require.GreaterOrEqual(t, d2, now+150*ms)
	require.Less(t, d2, now+300*ms)
	require.EqualValues(t, 2, tm.Stats().Schedules)
	v.AdvanceTo(d1)
	require.Empty(t, fires, "the old deadline must be gone")
	v.AdvanceTo(d2)
	require.Equal(t, []time.Duration{d2}, fires)

	// Restart on a stopped timer starts it; Start on a stopped timer arms.
	tm.Stop()
	require.True(t, tm.IsStopped())
	tm.Restart()
	require.True(t, tm.IsRunning())
	_, ok = tm.Deadline()
	require.True(t, ok)
	tm.Stop()
	tm.Start()
	_, ok = tm.Deadline()
	require.True(t, ok)
	require.EqualValues(t, 5, tm.Stats().Schedules) // Start, Restart, fire re-arm, Restart, Start
}

func TestSemantic03_StopDuringTriggerPreventsRearmAndDoesNotBlock(t *testing.T) {
	v := newVirtual(t)
	var tm *repeated.Timer
	n := 0
	tm = mustNew(t, v.Wheel, "s3", 100*ms, func() {
		n++
		tm.Stop() // must return (no self-deadlock), and cancel the re-arm
		require.True(t, tm.IsInvoking())
		require.True(t, tm.IsStopped())
	})
	tm.Start()
	require.Equal(t, 1, v.RunUntilIdle())
	require.Equal(t, 1, n)
	require.False(t, tm.IsRunning())
	_, ok := tm.Deadline()
	require.False(t, ok)
	_, pending := v.NextDeadline()
	require.False(t, pending, "nothing may be left on the wheel")
	require.EqualValues(t, 1, tm.Stats().Schedules)

	// Stop then Reset inside the trigger: Reset of a stopped timer is a no-op.
	var tm2 *repeated.Timer
	tm2 = mustNew(t, v.Wheel, "s3b", 100*ms, func() { tm2.Stop(); tm2.Reset() })
	tm2.Start()
	require.Equal(t, 1, v.RunUntilIdle())
	require.False(t, tm2.IsRunning())
}

func TestSemantic04_RearmInsideTriggerLeavesOneSchedule(t *testing.T) {
	// In SOFAJRaft a 100ms timer that re-arms once inside its callback keeps
	// two schedules alive and fires about 19 times a second instead of 10.
	rearms := map[string]func(tm *repeated.Timer){
		"Reset":           func(tm *repeated.Timer) { tm.Reset() },
		"Restart":         func(tm *repeated.Timer) { tm.Restart() },
		"Stop+Start":      func(tm *repeated.Timer) { tm.Stop(); tm.Start() },
		"ResetTimeout":    func(tm *repeated.Timer) { tm.ResetTimeout(100 * ms) },
		"Start":           func(tm *repeated.Timer) { tm.Start() },
		"RunOnceNow":      func(tm *repeated.Timer) { tm.RunOnceNow() },
		"Reset+Restart*2": func(tm *repeated.Timer) { tm.Reset(); tm.Restart(); tm.Restart() },
		"Stop+Restart+Stop+Start": func(tm *repeated.Timer) {
			tm.Stop()
			tm.Restart()
			tm.Stop()
			tm.Start()
		},
	}
	for name, rearm := range rearms {
		for _, every := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/every=%t", name, every), func(t *testing.T) {
				v := newVirtual(t)
				var fires []time.Duration
				var tm *repeated.Timer
				tm = mustNew(t, v.Wheel, "s4", 100*ms, func() {
					fires = append(fires, v.Now())
					if every || len(fires) == 1 {
						rearm(tm)
					}
				})
				tm.Start()
				v.AdvanceTo(time.Second)
				want := []time.Duration{}
				for at := 100 * ms; at <= time.Second; at += 100 * ms {
					want = append(want, at)
				}
				require.Equal(t, want, fires, "exactly 10 fires in 1s, 100ms apart")
				require.EqualValues(t, 1, v.Stats().Pending, "exactly one schedule on the wheel")
				next, ok := v.NextDeadline()
				require.True(t, ok)
				require.Equal(t, 1100*ms, next)
				d, ok := tm.Deadline()
				require.True(t, ok)
				require.Equal(t, next, d)
			})
		}
	}
}

func TestSemantic05_ResetTimeoutWhileStoppedIsUsedByNextStart(t *testing.T) {
	v := newVirtual(t)
	var fires []time.Duration
	tm := mustNew(t, v.Wheel, "s5", 100*ms, func() { fires = append(fires, v.Now()) })

	tm.ResetTimeout(300 * ms)
	require.Equal(t, 300*ms, tm.Timeout())
	_, ok := tm.Deadline()
	require.False(t, ok, "ResetTimeout must not start a stopped timer")
	require.EqualValues(t, 0, tm.Stats().Schedules)
	v.AdvanceTo(time.Second)
	require.Empty(t, fires)

	tm.Start() // at 1s
	v.AdvanceTo(1300 * ms)
	require.Equal(t, []time.Duration{1300 * ms}, fires)

	// Running: ResetTimeout re-arms at once with the new base.
	v.AdvanceTo(1350 * ms)
	tm.ResetTimeout(200 * ms)
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.Equal(t, 1550*ms, d)

	// Stopped again, then changed, then started: the last value wins.
	tm.Stop()
	tm.ResetTimeout(40 * ms)
	tm.ResetTimeout(60 * ms)
	tm.Start()
	d, _ = tm.Deadline()
	require.Equal(t, 1410*ms, d)

	// Invalid durations are rejected, reported and counted, not applied.
	for _, bad := range []time.Duration{0, -ms} {
		err := tm.TryResetTimeout(bad)
		require.ErrorIs(t, err, repeated.ErrInvalidTimeout)
		tm.ResetTimeout(bad)
	}
	require.Equal(t, 60*ms, tm.Timeout())
	require.EqualValues(t, 4, tm.Stats().Rejected)
}

func TestSemantic06_DestroyIsFinalIdempotentAndHookRunsOnceAfterTrigger(t *testing.T) {
	type tc struct {
		name string
		// inside runs inside the first trigger (nil: no trigger involvement)
		inside func(tm *repeated.Timer)
		// before runs before time advances
		before func(tm *repeated.Timer)
	}
	cases := []tc{
		{name: "never started", before: func(tm *repeated.Timer) { tm.Destroy() }},
		{name: "running", before: func(tm *repeated.Timer) { tm.Start(); tm.Destroy() }},
		{name: "stopped", before: func(tm *repeated.Timer) { tm.Start(); tm.Stop(); tm.Destroy() }},
		{name: "twice", before: func(tm *repeated.Timer) { tm.Start(); tm.Destroy(); tm.Destroy() }},
		{name: "inside trigger", before: start, inside: func(tm *repeated.Timer) { tm.Destroy() }},
		// SOFAJRaft runs the hook twice here: once from destroy (not
		// running) and once from the callback's epilogue.
		{name: "stop then destroy inside trigger", before: start, inside: func(tm *repeated.Timer) { tm.Stop(); tm.Destroy() }},
		{name: "destroy twice inside trigger", before: start, inside: func(tm *repeated.Timer) { tm.Destroy(); tm.Destroy() }},
		{name: "destroy then restart inside trigger", before: start, inside: func(tm *repeated.Timer) { tm.Destroy(); tm.Restart(); tm.Start() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newVirtual(t)
			var log []string
			var tm *repeated.Timer
			tm = mustNew(t, v.Wheel, "s6", 100*ms, func() {
				log = append(log, "trigger-start")
				if c.inside != nil {
					c.inside(tm)
					require.True(t, tm.IsDestroyed())
				}
				log = append(log, "trigger-end")
			}, repeated.WithOnDestroy(func() {
				require.False(t, tm.IsInvoking(), "hook must run after the trigger returned")
				log = append(log, "hook")
			}))
			c.before(tm)
			v.AdvanceTo(time.Second)
			if c.inside != nil {
				require.Equal(t, []string{"trigger-start", "trigger-end", "hook"}, log)
			} else {
				require.Equal(t, []string{"hook"}, log)
			}
			require.True(t, tm.IsDestroyed())
			require.True(t, tm.IsStopped())

			// Final: nothing revives it.
			tm.Start()
			tm.Restart()
			tm.Reset()
			tm.ResetTimeout(10 * ms)
			tm.RunOnceNow()
			tm.Destroy()
			require.ErrorIs(t, tm.TryResetTimeout(10*ms), repeated.ErrDestroyed)
			v.AdvanceTo(2 * time.Second)
			_, ok := tm.Deadline()
			require.False(t, ok)
			require.False(t, tm.IsRunning())
			_, pending := v.NextDeadline()
			require.False(t, pending)
			require.Equal(t, "hook", log[len(log)-1])
			require.Equal(t, 1, count(log, "hook"))
		})
	}
}

func start(tm *repeated.Timer) { tm.Start() }

func count(log []string, s string) int {
	n := 0
	for _, l := range log {
		if l == s {
			n++
		}
	}
	return n
}

func TestSemantic07_AtMostOneTriggerInFlight(t *testing.T) {
	// A virtual wheel whose Executor holds callbacks lets the test deliver
	// them late and while a trigger runs, as a real executor pool may.
	t.Run("fire while trigger runs is ignored", func(t *testing.T) {
		v, q := newVirtualQueued(t)
		inFlight, maxInFlight, triggers := 0, 0, 0
		var tm *repeated.Timer
		var nested func()
		tm = mustNew(t, v.Wheel, "s7", 10*ms, func() {
			inFlight++
			triggers++
			maxInFlight = max(maxInFlight, inFlight)
			if nested != nil {
				f := nested
				nested = nil
				f()
			}
			inFlight--
		})
		tm.Start()
		v.AdvanceTo(10 * ms) // callback A queued (schedule at 10ms claimed)
		tm.Reset()           // the callback is in flight: re-arm at 20ms
		v.AdvanceTo(20 * ms) // callback B queued
		require.Len(t, q.tasks, 2)
		a, b := q.pop(t), q.pop(t)
		// A arrives when the live schedule has come due: it runs the
		// trigger; B arrives during that trigger and must not run another.
		nested = b.Run
		a.Run()
		require.Equal(t, 1, triggers)
		require.Equal(t, 1, maxInFlight)
		require.EqualValues(t, 1, tm.Stats().Stale)
		d, ok := tm.Deadline()
		require.True(t, ok)
		require.Equal(t, 30*ms, d, "re-armed once, from the end of the trigger")
		v.AdvanceTo(30 * ms)
		q.pop(t).Run()
		require.Equal(t, 2, triggers)
	})

	t.Run("stale callback after re-arm is ignored", func(t *testing.T) {
		v, q := newVirtualQueued(t)
		triggers := 0
		tm := mustNew(t, v.Wheel, "s7b", 10*ms, func() { triggers++ })
		tm.Start()
		v.AdvanceTo(10 * ms) // callback queued
		tm.Reset()           // re-armed to 20ms before the callback ran
		q.pop(t).Run()       // stale: belongs to the replaced schedule
		require.Equal(t, 0, triggers)
		v.AdvanceTo(20 * ms)
		q.pop(t).Run()
		require.Equal(t, 1, triggers)
		require.EqualValues(t, 1, tm.Stats().Stale)

		// Stop then Start while a callback is in flight: the old callback
		// must not fire the new schedule early.
		v.AdvanceTo(30 * ms)
		tm.Stop()
		tm.Start() // due at 40ms
		q.pop(t).Run()
		require.Equal(t, 1, triggers)
		v.AdvanceTo(40 * ms)
		q.pop(t).Run()
		require.Equal(t, 2, triggers)
	})

	t.Run("RunOnceNow inside own trigger does not nest", func(t *testing.T) {
		v := newVirtual(t)
		inFlight, maxInFlight, triggers := 0, 0, 0
		var tm *repeated.Timer
		tm = mustNew(t, v.Wheel, "s7c", 10*ms, func() {
			inFlight++
			triggers++
			maxInFlight = max(maxInFlight, inFlight)
			tm.RunOnceNow()
			inFlight--
		})
		tm.Start()
		v.AdvanceTo(50 * ms)
		require.Equal(t, 5, triggers)
		require.Equal(t, 1, maxInFlight)
	})

	t.Run("RunOnceNow while a fire is in flight runs one trigger", func(t *testing.T) {
		v, q := newVirtualQueued(t)
		triggers := 0
		tm := mustNew(t, v.Wheel, "s7d", 10*ms, func() { triggers++ })
		tm.Start()
		v.AdvanceTo(10 * ms) // fire queued, not yet run
		tm.RunOnceNow()      // runs the trigger here and re-arms
		q.pop(t).Run()       // the queued fire is stale now
		require.Equal(t, 1, triggers)
		d, _ := tm.Deadline()
		require.Equal(t, 20*ms, d)
	})
}

func TestSemantic08_RunOnceNowRunsImmediatelyWithoutHoldingTheLock(t *testing.T) {
	v := newVirtual(t)
	var fires []time.Duration
	var tm *repeated.Timer
	tm = mustNew(t, v.Wheel, "s8", 100*ms, func() {
		fires = append(fires, v.Now())
		// All of these take the timer's lock: they would deadlock if
		// RunOnceNow held it during the trigger.
		require.True(t, tm.IsInvoking())
		require.True(t, tm.IsRunning())
		_ = tm.String()
		_ = tm.Stats()
		tm.Reset()
		tm.ResetTimeout(200 * ms)
		tm.RunOnceNow() // a trigger is running: no-op
	})
	tm.Start()
	v.AdvanceTo(30 * ms)
	tm.RunOnceNow()
	require.Equal(t, []time.Duration{30 * ms}, fires, "ran now, on this goroutine")
	require.False(t, tm.IsInvoking())
	d, ok := tm.Deadline()
	require.True(t, ok)
	require.Equal(t, 230*ms, d, "re-armed from the end of the trigger with the new timeout")
	v.AdvanceTo(229 * ms)
	require.Len(t, fires, 1, "the cancelled 100ms deadline must not fire")
	v.AdvanceTo(230 * ms)
	require.Len(t, fires, 2)

	// Stopped or destroyed: nothing runs.
	tm.Stop()
	tm.RunOnceNow()
	require.Len(t, fires, 2)
	tm.Start()
	tm.Destroy()
	tm.RunOnceNow()
	require.Len(t, fires, 2)
	require.EqualValues(t, 2, tm.Stats().Triggers)
}

func TestSemantic09_DeterministicUnderVirtualWheel(t *testing.T) {
	run := func(seed uint64) []string {
		v := newVirtual(t)
		var log []string
		mk := func(name string, base time.Duration, j repeated.Jitter, rng *rand.Rand) *repeated.Timer {
			var tm *repeated.Timer
			tm = mustNew(t, v.Wheel, name, base, func() {
				log = append(log, fmt.Sprintf("%v %s", v.Now(), name))
			}, repeated.WithJitter(j), repeated.WithRand(rng))
			return tm
		}
		parent := seeded(seed)
		child := func() *rand.Rand { return rand.New(rand.NewPCG(parent.Uint64(), parent.Uint64())) }
		timers := []*repeated.Timer{
			mk("election", 150*ms, repeated.Proportional(1), child()),
			mk("vote", 150*ms, repeated.UniformExtra(100*ms), child()),
			mk("stepdown", 75*ms, repeated.None(), child()),
			mk("snapshot", time.Second, repeated.FirstOnly(), child()),
			mk("backoff", 20*ms, repeated.Backoff(4, 500*ms), child()),
		}
		for _, tm := range timers {
			tm.Start()
		}
		ops := child()
		for range 200 {
			v.AdvanceBy(time.Duration(ops.Int64N(int64(40 * ms))))
			tm := timers[ops.IntN(len(timers))]
			switch ops.IntN(4) {
			case 0:
				tm.Reset()
			case 1:
				tm.Restart()
			case 2:
				tm.RunOnceNow()
			case 3:
				tm.ResetTimeout(time.Duration(1+ops.IntN(200)) * ms)
			}
		}
		for _, tm := range timers {
			tm.Destroy()
		}
		return log
	}
	a, b, c := run(42), run(42), run(43)
	require.NotEmpty(t, a)
	require.Equal(t, a, b, "same seed, same fire times")
	require.NotEqual(t, a, c, "different seed, different fire times")
}

func TestSemantic10_SteadyStateAllocatesNothing(t *testing.T) {
	v := newVirtual(t)
	tm := mustNew(t, v.Wheel, "s10", 150*ms, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(10)))
	tm.Start()
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = tm.Reset() }), "Reset")
	require.Zero(t, testing.AllocsPerRun(1000, func() { v.AdvanceToNext() }), "fire and re-arm cycle")
	require.Zero(t, testing.AllocsPerRun(1000, tm.RunOnceNow), "RunOnceNow")
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = tm.Restart() }), "Restart")
	require.Zero(t, testing.AllocsPerRun(1000, func() { tm.Stop(); tm.Start() }), "Stop+Start")

	// The same on the real-time wheel: Reset takes the wheel's lock-free
	// path when the deadline moves later.
	w := newRealtime(t, nil)
	rt := mustNew(t, w, "s10rt", time.Hour, func() {},
		repeated.WithJitter(repeated.UniformExtra(time.Minute)), repeated.WithRand(seeded(11)))
	rt.Start()
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = rt.Reset() }), "real-time Reset")
	rt.Destroy()
}
