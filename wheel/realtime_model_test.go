package wheel

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rtModelTimer is the reference model of one timer in TestRealtimeModel. Its
// owner goroutine is the only one that schedules or stops it, so the model
// is sequential; the driver fires concurrently.
type rtModelTimer struct {
	// Written by the owner only.
	schedules int64 // Reset calls that found the timer idle (a new schedule)
	stops     int64 // Stop calls that returned true
	// earliest is, in ns since the test's start, a lower bound on when
	// any schedule that may still fire is allowed to fire: the bound of
	// the latest Reset once it is the only schedule outstanding, else the
	// smallest bound of those that may be.
	earliest atomic.Int64
	// Written by the callback.
	fires atomic.Int64
	early atomic.Int64 // fires before earliest
	worst atomic.Int64 // most negative margin seen, ns
}

// fire is the timer's callback: it records the fire, and whether (and by
// how much) it came before earliest. now is the time since the test's
// start.
func (m *rtModelTimer) fire(now int64) {
	if margin := now - m.earliest.Load(); margin < 0 {
		m.early.Add(1)
		for {
			old := m.worst.Load()
			if margin >= old || m.worst.CompareAndSwap(old, margin) {
				break
			}
		}
	}
	m.fires.Add(1)
}

// reset is the owner's Reset of tm by d at now (the time since the test's
// start), with the model's bookkeeping. It uses TryReset: once the wheel
// stops, a Reset fails (and schedules nothing) rather than finding the
// timer idle.
func (m *rtModelTimer) reset(tm *Timer, d time.Duration, now int64) {
	bound := now + int64(d)
	m.earliest.Store(min(m.earliest.Load(), bound))
	if pending, err := tm.TryReset(d); err == nil && !pending {
		m.schedules++
	}
	// Raise the bound only once no older schedule's callback can still be
	// on its way (claimed by the driver before this Reset found the timer
	// idle).
	if m.schedules-m.stops-m.fires.Load() == 1 {
		m.earliest.Store(bound)
	}
}

// TestRealtimeModel checks the real-time wheel against a reference model
// under concurrency: goroutines each own some timers and apply random
// schedules, resets earlier and later (the locked and the lock-free paths),
// and stops, while the driver fires. Every fire must come after the start
// of the Reset that set its deadline plus the delay; Reset and Stop must
// report the truth (each timer fires exactly once per schedule that was not
// stopped); and stopping the wheel at the end must return every timer still
// pending, so that schedules = fires + stops + dropped, timer by timer.
func TestRealtimeModel(t *testing.T) {
	for _, c := range []struct {
		tick   time.Duration
		napMin int // the driver's napMin: 0 sleeps on a timerfd, -1 with the runtime's timers
	}{{100 * time.Microsecond, 0}, {time.Millisecond, 0}, {time.Millisecond, -1}, {time.Millisecond, napMinBatch},
		{4 * time.Millisecond, 0}, {100 * time.Microsecond, -1}, {4 * time.Millisecond, -1}, {20 * time.Millisecond, -1}} {
		tick := c.tick
		t.Run(fmt.Sprintf("tick=%v/napMin=%d", tick, c.napMin), func(t *testing.T) {
			inBubbleUnlessNap(t, c.napMin, func(t *testing.T) { testRealtimeModel(t, tick, c.napMin) })
		})
	}
}

// pauser returns how a randomized race test paces its goroutines: a
// sleep, on the bubble's clock in a bubble (napMin < 0), else on the
// real clock. The real-time variants are those whose driver naps on its
// timerfd, which no bubble can hold; for them the pause only paces the
// race, and no assertion depends on how long it lasts.
func pauser(napMin int) func(d time.Duration) {
	return time.Sleep
}

// inBubbleUnlessNap runs f in a bubble (inBubble) unless the driver is to
// nap on its timerfd (napMin >= 0), whose expiry is the kernel's time:
// those configurations run in real time, where their sleeps only pace the
// goroutines (no assertion depends on how long anything takes).
func inBubbleUnlessNap(t *testing.T, napMin int, f func(t *testing.T)) {
	t.Helper()
	if napMin < 0 {
		inBubble(t, f)
		return
	}
	f(t)
}

func testRealtimeModel(t *testing.T, tick time.Duration, napMin int) {
	{
		{
			seed := rtSeed(t)
			w := newRealtime(t, tick)
			w.napMin = napMin
			pause := pauser(napMin)
			const (
				owners   = 4
				perOwner = 64
				ops      = 3000
			)
			start := time.Now()
			since := func() int64 { return int64(time.Since(start)) }
			models := make([]rtModelTimer, owners*perOwner)
			timers := make([]Timer, len(models))
			for i := range timers {
				m := &models[i]
				require.NoError(t, timers[i].Init(w, func() { m.fire(since()) }))
			}
			var wg sync.WaitGroup
			for g := range owners {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(seed, uint64(g)))
					for k := range ops {
						i := g*perOwner + rng.IntN(perOwner)
						m, tm := &models[i], &timers[i]
						if rng.IntN(4) == 0 {
							if tm.Stop() {
								m.stops++
							}
							continue
						}
						var d time.Duration
						switch rng.IntN(3) {
						case 0: // soon: often earlier than the pending deadline
							d = time.Duration(rng.Int64N(int64(2 * tick)))
						case 1: // later: the lock-free path when pending
							d = time.Duration(rng.Int64N(int64(20 * tick)))
						default: // far: still pending when the wheel stops
							d = time.Duration(rng.Int64N(int64(time.Second)))
						}
						m.reset(tm, d, since())
						if k%32 == 0 {
							// Let the driver fire; no synchronization relies on it.
							pause(time.Duration(rng.Int64N(int64(tick))))
						}
					}
				})
			}
			wg.Wait()
			left := w.Stop()
			select {
			case <-w.Done():
			case <-time.After(rtWaitLimit):
				t.Fatal("driver did not exit after Stop")
			}
			schedules, fires, stops := checkModels(t, models, timers, left)
			s := w.Stats()
			require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "%+v", s)
			require.Equal(t, int64(len(left)), s.Dropped)
			require.Positive(t, fires, "nothing fired: the test did not race the driver")
			require.Positive(t, len(left), "nothing left at Stop")
			t.Logf("%d schedules: %d fired, %d stopped, %d dropped at Stop; max lateness %v", schedules, fires, stops, len(left), s.MaxLateness)
		}
	}
}

// TestRealtimeSlotInTransitRaces puts thousands of timers into one slot
// round after round, so that the driver runs the slot without the lock
// (runTransit), and races it: while the slot comes due, the timers' owners
// stop them, push them later (the lock-free path), reset them to now (the
// locked path, which unlinks them from the slot being run), and rebind
// stopped ones to another wheel and back (Init, which unlinks too); the
// last round stops the wheel while the slot runs. As in TestRealtimeModel,
// no fire may be early, each timer fires exactly once per schedule that was
// not stopped, and the wheel's Stop returns the rest.
func TestRealtimeSlotInTransitRaces(t *testing.T) {
	for _, napMin := range []int{0, -1} {
		t.Run(fmt.Sprintf("napMin=%d", napMin), func(t *testing.T) {
			inBubbleUnlessNap(t, napMin, func(t *testing.T) { testSlotInTransitRaces(t, napMin) })
		})
	}
}

func testSlotInTransitRaces(t *testing.T, napMin int) {
	seed := rtSeed(t)
	w := newRealtime(t, time.Millisecond)
	w.napMin = napMin
	other := newRealtime(t, time.Millisecond)
	// yield lets the other goroutines run: in real time by yielding the
	// processor, in a bubble (napMin < 0) by sleeping, since the bubble's
	// clock moves only when every goroutine is blocked.
	pause := pauser(napMin)
	yield := runtime.Gosched
	waitUntil := func(at time.Time) {
		for time.Now().Before(at) {
			runtime.Gosched()
		}
	}
	if napMin < 0 {
		yield = func() { pause(time.Microsecond) }
		waitUntil = func(at time.Time) { pause(time.Until(at)) }
	}
	const (
		owners   = 4
		perOwner = 1024
		rounds   = 12
		minOps   = 256
	)
	start := time.Now()
	since := func() int64 { return int64(time.Since(start)) }
	models := make([]rtModelTimer, owners*perOwner)
	timers := make([]Timer, len(models))
	callbacks := make([]func(), len(models))
	for i := range timers {
		m := &models[i]
		callbacks[i] = func() { m.fire(since()) }
		require.NoError(t, timers[i].Init(w, callbacks[i]))
	}
	reset := func(i int, d time.Duration) { models[i].reset(&timers[i], d, since()) }
	var rebinds atomic.Int64
	for round := range rounds {
		// Every timer due at the same instant: one slot.
		due := time.Now().Add(8 * time.Millisecond)
		var wg sync.WaitGroup
		for g := range owners {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(seed, uint64(round*owners+g)))
				for i := g * perOwner; i < (g+1)*perOwner; i++ {
					reset(i, time.Until(due))
				}
				// Race the driver from a little before the slot is due to
				// a little after, and at least minOps times: on a loaded
				// machine the resets above may end after that window.
				waitUntil(due.Add(-300 * time.Microsecond))
				for ops := 0; ops < minOps || time.Now().Before(due.Add(3*time.Millisecond)); ops++ {
					i := g*perOwner + rng.IntN(perOwner)
					m, tm := &models[i], &timers[i]
					switch rng.IntN(4) {
					case 0:
						if tm.Stop() {
							m.stops++
						}
						if !tm.Pending() && rng.IntN(2) == 0 {
							// Idle (or its callback running): rebind it
							// to the other wheel and back.
							if tm.Init(other, callbacks[i]) == nil {
								require.NoError(t, tm.Init(w, callbacks[i]))
								rebinds.Add(1)
							}
						}
					case 1:
						reset(i, time.Duration(rng.Int64N(int64(4*time.Millisecond))))
					case 2:
						reset(i, 0)
					default:
						yield()
					}
				}
			})
		}
		if round < rounds-1 {
			wg.Wait()
			pause(6 * time.Millisecond) // let what the owners pushed later fire
			continue
		}
		// The last round: stop the wheel while the slot is being run.
		waitUntil(due.Add(500 * time.Microsecond))
		left := w.Stop()
		wg.Wait()
		select {
		case <-w.Done():
		case <-time.After(rtWaitLimit):
			t.Fatal("driver did not exit after Stop")
		}
		checkModels(t, models, timers, left)
	}
	require.Positive(t, rebinds.Load(), "no timer was rebound: the test did not race Init")
	s := w.Stats()
	require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "%+v", s)
	t.Logf("%d rebinds; wheel stats %+v", rebinds.Load(), s)
}

// checkModels checks the timers of a stopped wheel against their models:
// no early fire, and schedules = fires + stops + dropped by the wheel's
// Stop (left), timer by timer. It returns the totals.
func checkModels(t *testing.T, models []rtModelTimer, timers []Timer, left []*Timer) (schedules, fires, stops int64) {
	t.Helper()
	index := make(map[*Timer]int, len(timers))
	for i := range timers {
		index[&timers[i]] = i
	}
	dropped := make([]int64, len(timers))
	for _, tm := range left {
		i, ok := index[tm]
		require.True(t, ok, "Stop returned a timer that is not the test's")
		dropped[i]++
	}
	for i := range models {
		m := &models[i]
		require.Zero(t, m.early.Load(), "timer %d fired %d times early, worst by %v", i, m.early.Load(), time.Duration(-m.worst.Load()))
		require.Equal(t, m.schedules, m.fires.Load()+m.stops+dropped[i],
			"timer %d: schedules vs fires %d + stops %d + dropped %d", i, m.fires.Load(), m.stops, dropped[i])
		require.False(t, timers[i].Pending(), "timer %d pending after Stop", i)
		schedules += m.schedules
		fires += m.fires.Load()
		stops += m.stops
	}
	require.Positive(t, fires, "nothing fired")
	return schedules, fires, stops
}
