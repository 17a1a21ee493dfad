package wheel

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Real-time tests run the driver goroutine against the monotonic clock. They
// never sleep for synchronization: they wait on channels, with a generous
// limit that only a lost timer reaches. Randomized ones take -seed (shared
// with TestModel) and print how to reproduce a failure.

const rtWaitLimit = 5 * time.Second

// rtSeed returns the seed for a randomized real-time test: the -seed flag
// or a fresh one, logged with the command that reproduces the test (run it
// with -race, as CI does, to reproduce a race).
func rtSeed(t *testing.T) uint64 {
	t.Helper()
	return testseed.Seed(t, "-race", "-v")
}

// measureStalls measures, from now until the returned function is
// called, how long the process goes without running a goroutine that
// sleeps a millisecond at a time: the function stops the measure and
// returns the longest oversleep. A real-time test adds it to a bound on
// lateness, so that a machine too loaded to run the process does not read
// as a wheel firing late.
func measureStalls() (longest func() time.Duration) {
	stop := make(chan struct{})
	done := make(chan time.Duration)
	go func() {
		var worst time.Duration
		last := time.Now()
		sleep := time.NewTimer(time.Millisecond)
		defer sleep.Stop()
		for {
			select {
			case <-stop:
				done <- max(worst, time.Since(last)-time.Millisecond)
				return
			case <-sleep.C:
			}
			now := time.Now()
			worst = max(worst, now.Sub(last)-time.Millisecond)
			last = now
			sleep.Reset(time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(stop)
		return <-done
	}
}

// newRealtime returns a real-time wheel with the given tick; the wheel is
// stopped, its driver's exit awaited and goroutine leaks checked when the
// test ends.
func newRealtime(t *testing.T, tick time.Duration) *Wheel {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	cfg := DefaultConfig()
	cfg.Tick = tick
	w, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.Stop()
		select {
		case <-w.Done():
		case <-time.After(rtWaitLimit):
			t.Errorf("driver did not exit within %v of Stop", rtWaitLimit)
		}
		goleak.VerifyNone(t, ignore)
	})
	return w
}

// inBubble runs f as a test in a testing/synctest bubble: the time that
// f, the wheels it makes with newBubbleWheel and their drivers see is the
// bubble's, which moves only when every goroutine of the bubble is
// blocked, so a sleep or a stall is exact and a machine's load changes
// nothing but how long the test takes.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, f)
}

// newBubbleWheel is newRealtime inside a bubble (inBubble): its driver
// never sleeps on its timerfd, whose expiry is the kernel's time, not the
// bubble's (a goroutine reading a file is not durably blocked, so the
// bubble's clock would stand still while the driver naps).
func newBubbleWheel(t *testing.T, tick time.Duration) *Wheel {
	t.Helper()
	w := newRealtime(t, tick)
	w.napMin = -1
	return w
}

// waitN receives n values from ch, failing if that takes longer than limit.
func waitN[T any](t *testing.T, ch <-chan T, n int, what string) {
	t.Helper()
	deadline := time.After(rtWaitLimit)
	for i := range n {
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out after %v: %d of %d %s", rtWaitLimit, i, n, what)
		}
	}
}

// quiesce returns once every pending timer of w has fired and its callback
// has returned. Callers must have stopped scheduling (callbacks must not
// re-arm). It schedules probe timers of its own, which it reports in probes.
func quiesce(t *testing.T, w *Wheel) (probes int64) {
	t.Helper()
	done := make(chan struct{}, 1)
	var probe Timer
	require.NoError(t, probe.Init(w, func() { done <- struct{}{} }))
	limit := time.After(rtWaitLimit)
	for {
		// The probe fires after every earlier deadline; callbacks run one
		// batch after another, so once the probe has run and nothing else
		// is pending, one more probe flushes the callbacks of its batch.
		probe.Reset(5 * time.Millisecond)
		probes++
		select {
		case <-done:
		case <-limit:
			t.Fatalf("timers still pending after %v: %+v", rtWaitLimit, w.Stats())
		}
		if w.Stats().Pending == 0 {
			probe.Reset(0)
			probes++
			select {
			case <-done:
			case <-limit:
				t.Fatalf("flush probe did not fire within %v", rtWaitLimit)
			}
			return probes
		}
	}
}

// checkStructure verifies, under the wheel's lock, the invariants of the
// hierarchy that the lock-free Reset must preserve: occupancy bits match the
// slot lists, links and locations are consistent, no pending timer sits in a
// slot that starts after its deadline (it would fire late), and every
// pending timer is reachable from a slot, a live ready-heap entry or the
// driver's running batch or the slot it runs without the lock. Call it
// only while no goroutine schedules or stops timers.
func checkStructure(t *testing.T, w *Wheel) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	reachable := map[*Timer]bool{}
	for l := range w.levels {
		lv := &w.levels[l]
		for i := range lv.buckets {
			b := &lv.buckets[i]
			require.Equal(t, b.live > 0, lv.isSet(i), "level %d slot %d: occupancy bit", l, i)
			if b.live == 0 {
				require.Nil(t, b.head, "level %d slot %d: an empty bucket holds chunks", l, i)
			}
			var live, dead int32
			for c, k := b.head, b.pos; c != nil; c, k = c.next, 0 {
				n := int32(chunkLen)
				if c == b.tail {
					n = b.tn
				} else {
					require.NotNil(t, c.next, "level %d slot %d: chunk list ends before the tail", l, i)
				}
				for ; k < n; k++ {
					if c.t[k] == nil {
						dead++
					} else {
						live++
					}
				}
			}
			if b.prev != nil {
				require.Same(t, b.tail, b.prev.next, "level %d slot %d: the chunk before the tail", l, i)
			}
			require.Equal(t, b.live, live, "level %d slot %d: live count", l, i)
			require.Equal(t, b.dead, dead, "level %d slot %d: tombstone count", l, i)
			b.each(func(tm *Timer) {
				require.Equal(t, locSlot, tm.loc, "level %d slot %d: timer location", l, i)
				lvl, idx := tm.where()
				require.Equal(t, l, lvl)
				require.Equal(t, i, idx)
				require.Same(t, tm, tm.ch.t[tm.pos], "level %d slot %d: the timer's place in its bucket", l, i)
				due := tm.due.Load()
				if due == 0 {
					return // stopped; unlinked lazily
				}
				start := tm.slotStart.Load()
				require.GreaterOrEqual(t, start, int64(0), "slotted timer without a slot start")
				if l == 0 && (due-1)&tagMask != 0 && due-1 < start {
					// A timer whose epoch's slack had not passed when its
					// slot was taken waits in a later slot (batchSlot);
					// deadlines from the exact clock (tag 0) never wait.
					reachable[tm] = true
					return
				}
				require.GreaterOrEqual(t, due-1, start,
					"level %d slot %d: deadline %v before the slot's start %v: the timer would fire late",
					l, i, time.Duration(due-1), time.Duration(start))
				reachable[tm] = true
			})
		}
	}
	for _, e := range w.ready {
		tm := e.t
		if tm.loc == locReady && tm.w == w && tm.seq.Load() == e.seq && tm.due.Load() != 0 {
			require.Equal(t, int64(-1), tm.slotStart.Load(), "a timer in the ready heap has a slot start")
			require.False(t, reachable[tm] && tm.loc == locSlot, "timer both in a slot and in the heap")
			reachable[tm] = true
		}
	}
	// The driver may be running a batch: its collected timers not yet
	// claimed, and those re-armed from their callbacks and not yet placed,
	// are pending and reachable from the batch.
	for _, f := range w.batch {
		if tm := f.t; tm.loc == locNone && tm.due.Load() > 0 {
			require.False(t, reachable[tm], "timer both in the batch and in the structure")
			reachable[tm] = true
		}
	}
	// The slot the driver is running without the lock: its timers stay
	// linked in the slot's chunks until the driver unlinks them.
	w.tr.each(func(tm *Timer) {
		require.True(t, w.inTransit(tm.ch), "a timer of the slot in transit has its place outside it")
		require.Equal(t, locSlot, tm.loc, "a timer of the slot in transit has location %d", tm.loc)
		if tm.due.Load() > 0 {
			require.False(t, reachable[tm], "timer both in the slot in transit and elsewhere")
			reachable[tm] = true
		}
	})
	require.Equal(t, w.pendingNow(), int64(len(reachable)), "pending timers vs timers reachable in the structure")
}
