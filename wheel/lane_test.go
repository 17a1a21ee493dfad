package wheel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// laneMembers counts, lane by lane, the timers queued in w's lanes (their
// entries that are not stale). mu held.
func laneMembers(w *Wheel) map[time.Duration]int {
	out := map[time.Duration]int{}
	for li, l := range w.lanes {
		mask := uint64(len(l.ring) - 1)
		for k := l.head; k < l.tail; k++ {
			e := l.ring[k&mask]
			if t := e.t; t != nil && t.loc == locLane && int(t.slot) == li && t.slotStart.Load() == w.laneSentinel(li) && t.due.Load() == e.r+1 {
				out[time.Duration(l.period)]++
			}
		}
	}
	return out
}

// TestLaneHoldsPeriodicTimers: timers bound with InitNext and marked
// SetPeriodic go to their period's lane after their first fire and stay
// there, firing once a period, never before their deadlines; a timer that
// is stopped, pushed later, or whose NextFunc returns another delay
// leaves the lane and behaves as it would in a slot; timers not marked
// stay out of the lanes. At the default tick and at the coarsest tick
// at which the driver takes slots whole (maxBatchTick).
//
// In a bubble (inBubble), so that each step moves the wheel's clock by a
// tick: on the machine's clock a stall between two steps moves it by
// more than two periods, and the timers that fire then rightly go to
// slots (lane.fits) until they fire again, which the membership counts
// would take for a fault.
func TestLaneHoldsPeriodicTimers(t *testing.T) {
	for _, tick := range []time.Duration{time.Millisecond, maxBatchTick} {
		t.Run("tick="+tick.String(), func(t *testing.T) {
			inBubble(t, func(t *testing.T) { testLaneHoldsPeriodicTimers(t, tick) })
		})
	}
}

func testLaneHoldsPeriodicTimers(t *testing.T, tick time.Duration) {
	cfg := DefaultConfig()
	cfg.Tick = tick
	w, err := New(cfg)
	require.NoError(t, err)
	step, stop := DriveByHand(w)
	defer stop()
	const (
		n      = 2000
		period = 75 * time.Millisecond
	)
	ts := make([]Timer, n)
	fires := make([]int, n)
	periods := make([]time.Duration, n)
	early := 0
	for i := range ts {
		periods[i] = period
		require.NoError(t, ts[i].InitNext(w, func(tm *Timer, err error) time.Duration {
			if err != nil {
				return 0
			}
			fires[i]++
			return periods[i]
		}))
		if i%10 != 0 { // every tenth stays a plain NextFunc timer
			require.NoError(t, ts[i].SetPeriodic(true))
		}
	}
	// Deadlines seen by the test, to check that no fire comes early.
	deadline := make([]time.Duration, n)
	per := n / 75
	for i := range ts {
		ts[i].Reset(period)
		deadline[i], _ = ts[i].Deadline()
		if i%per == per-1 {
			step()
		}
	}
	for range 300 {
		before := append([]int(nil), fires...)
		step()
		now := w.Now()
		for i := range ts {
			if fires[i] != before[i] {
				if now < deadline[i] {
					early++
				}
				deadline[i], _ = ts[i].Deadline()
			}
		}
	}
	require.Zero(t, early, "fires before their deadlines")
	w.mu.Lock()
	members := laneMembers(w)
	w.mu.Unlock()
	require.Equal(t, map[time.Duration]int{period: n - n/10}, members, "the marked timers are all queued in their lane")
	for i := range ts {
		require.GreaterOrEqual(t, fires[i], 3, "timer %d fired %d times in 300 ticks", i, fires[i])
	}

	// Stop some, push some later (lock-free: a lane timer's deadline may
	// move later), give some another period.
	stopped, pushed, moved := &ts[1], &ts[2], 3
	require.True(t, stopped.Stop())
	pushedTo := 150 * time.Millisecond
	require.True(t, pushed.Reset(pushedTo))
	pushedDeadline, _ := pushed.Deadline()
	periods[moved] = 2 * period
	stoppedFires, pushedFires := fires[1], fires[2]
	for range 300 {
		before := fires[2]
		step()
		if fires[2] != before && w.Now() < pushedDeadline && before == pushedFires {
			t.Fatalf("the timer pushed later fired at %v, before its deadline %v", w.Now(), pushedDeadline)
		}
	}
	require.Equal(t, stoppedFires, fires[1], "a stopped lane timer fired")
	require.Greater(t, fires[2], pushedFires, "the timer pushed later never fired again")
	w.mu.Lock()
	members = laneMembers(w)
	w.mu.Unlock()
	require.Equal(t, map[time.Duration]int{period: n - n/10 - 2, 2 * period: 1}, members,
		"the stopped timer left its lane, the pushed one came back to it, the one with a new period moved to that period's lane")
}

// TestLaneWheelStopReturnsQueued: Stop returns every timer queued in a
// lane, once, and leaves none pending. In a bubble, as
// TestLaneHoldsPeriodicTimers is, so that a stall between two steps does
// not send the timers to slots.
func TestLaneWheelStopReturnsQueued(t *testing.T) {
	inBubble(t, testLaneWheelStopReturnsQueued)
}

func testLaneWheelStopReturnsQueued(t *testing.T) {
	w, err := New(DefaultConfig())
	require.NoError(t, err)
	step, _ := DriveByHand(w)
	const n = 500
	ts := make([]Timer, n)
	for i := range ts {
		require.NoError(t, ts[i].InitNext(w, func(*Timer, error) time.Duration { return 20 * time.Millisecond }))
		require.NoError(t, ts[i].SetPeriodic(true))
		ts[i].Reset(time.Duration(i%20) * time.Millisecond)
	}
	for range 100 {
		step()
	}
	w.mu.Lock()
	require.Equal(t, n, laneMembers(w)[20*time.Millisecond])
	w.mu.Unlock()
	w.mu.Lock()
	w.started = false // no driver goroutine to wait for
	w.mu.Unlock()
	left := w.Stop()
	require.Len(t, left, n)
	seen := map[*Timer]bool{}
	for _, tm := range left {
		require.False(t, seen[tm], "returned twice")
		seen[tm] = true
		require.False(t, tm.Pending())
	}
	s := w.Stats()
	require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "%+v", s)
}

// TestSetPeriodicNotInitialized: the hint needs a bound timer.
func TestSetPeriodicNotInitialized(t *testing.T) {
	var tm Timer
	require.ErrorIs(t, tm.SetPeriodic(true), ErrNotInitialized)
}

// laneModel is one periodic timer of TestRealtimeLaneRaces.
type laneModel struct {
	mu sync.Mutex
	// A fire may not come before the earlier of a period after the last
	// fire's start (lastFire+lastPeriod: its NextFunc re-armed it after
	// that) and the bound of a Reset that may still be outstanding
	// (resets: now+d of each Reset, kept until a fire comes well after it,
	// since a fire claimed before a Reset may start its callback after
	// it on a loaded machine, and the Reset's schedule then comes next).
	lastFire, lastPeriod int64
	resets               []int64
	fires                int64
	early                int64
	worst                int64
	what                 string
	// What the NextFunc returns: the period, or 0 (end the cycle).
	period atomic.Int64
	panics atomic.Bool // panic once
}

// laneResetGrace is how long after its bound a Reset's bound is kept
// (see laneModel).
const laneResetGrace = int64(50 * time.Millisecond)

func (m *laneModel) fire(now int64) time.Duration {
	p := m.period.Load()
	m.mu.Lock()
	defer m.mu.Unlock()
	bound := int64(math.MaxInt64)
	if m.lastFire > 0 && m.lastPeriod > 0 {
		bound = m.lastFire + m.lastPeriod
	}
	for _, b := range m.resets {
		bound = min(bound, b)
	}
	if bound != math.MaxInt64 && now < bound {
		m.early++
		m.worst = min(m.worst, now-bound)
		m.what = fmt.Sprintf("fire at %v: last fire %v + period %v, reset bounds %v", time.Duration(now), time.Duration(m.lastFire), time.Duration(m.lastPeriod), m.resets)
	}
	m.fires++
	m.lastFire, m.lastPeriod = now, p
	m.resets = slices.DeleteFunc(m.resets, func(b int64) bool { return b+laneResetGrace < now })
	return time.Duration(p)
}

func (m *laneModel) reset(tm *Timer, d time.Duration, now int64) {
	m.mu.Lock()
	m.resets = append(m.resets, now+int64(d))
	m.mu.Unlock()
	tm.Reset(d)
}

// TestRealtimeLaneRaces races the lanes of a real-time wheel: periodic
// timers (InitNext, SetPeriodic) fire every few ticks while their owners
// stop them, push them later (the lock-free path, which a lane allows
// for later deadlines only), reset them earlier (the locked path, which
// takes them out of their lane), switch them between two periods (two
// lanes), rebind idle ones to another wheel and back, and drop and give
// back the hint; a callback now and then panics. No fire may come before
// its bound, every timer that runs at the end must keep firing (none lost
// in a lane), and the wheel's Stop, made while the timers fire, must
// return each pending timer once and leave none pending.
func TestRealtimeLaneRaces(t *testing.T) {
	for _, c := range []struct {
		tick   time.Duration
		napMin int
	}{{time.Millisecond, 0}, {time.Millisecond, -1}, {maxBatchTick, 0}, {maxBatchTick, -1}} {
		tick, napMin := c.tick, c.napMin
		t.Run(fmt.Sprintf("tick=%v/napMin=%d", tick, napMin), func(t *testing.T) {
			inBubbleUnlessNap(t, napMin, func(t *testing.T) { testRealtimeLaneRaces(t, tick, napMin) })
		})
	}
}

func testRealtimeLaneRaces(t *testing.T, tick time.Duration, napMin int) {
	{
		{
			seed := rtSeed(t)
			pause := pauser(napMin)
			w := newRealtime(t, tick)
			w.napMin = napMin
			other := newRealtime(t, tick)
			const (
				owners   = 4
				perOwner = 256
				minOps   = 2048
			)
			period := 3 * tick
			start := time.Now()
			since := func() int64 { return int64(time.Since(start)) }
			models := make([]laneModel, owners*perOwner)
			timers := make([]Timer, len(models))
			fns := make([]NextFunc, len(models))
			for i := range timers {
				m := &models[i]
				m.period.Store(int64(period))
				fns[i] = func(_ *Timer, err error) time.Duration {
					if err != nil {
						return 0
					}
					d := m.fire(since())
					if m.panics.CompareAndSwap(true, false) {
						panic("lane test")
					}
					return d
				}
				require.NoError(t, timers[i].InitNext(w, fns[i]))
				require.NoError(t, timers[i].SetPeriodic(true))
				m.reset(&timers[i], time.Duration(i%int(period/time.Microsecond))*time.Microsecond, since())
			}
			var wg sync.WaitGroup
			var rebinds atomic.Int64
			raceUntil := time.Now().Add(400 * time.Millisecond)
			for g := range owners {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(seed, uint64(g)))
					// At least minOps operations: on a loaded machine the
					// race window alone may hold too few to rebind a timer.
					for ops := 0; ops < minOps || time.Now().Before(raceUntil); ops++ {
						i := g*perOwner + rng.IntN(perOwner)
						m, tm := &models[i], &timers[i]
						switch rng.IntN(16) {
						case 0:
							tm.Stop()
						case 1, 2: // later: lock-free in a lane
							m.reset(tm, period+time.Duration(rng.Int64N(int64(3*period))), since())
						case 3: // soon: the locked path
							m.reset(tm, time.Duration(rng.Int64N(int64(period/2))), since())
						case 4: // the other lane, or back
							if m.period.Load() == int64(period) {
								m.period.Store(int64(2 * period))
							} else {
								m.period.Store(int64(period))
							}
						case 5:
							tm.Stop()
							if !tm.Pending() && tm.Init(other, func() {}) == nil {
								require.NoError(t, tm.InitNext(w, fns[i]))
								require.NoError(t, tm.SetPeriodic(rng.IntN(4) != 0))
								rebinds.Add(1)
								m.reset(tm, time.Duration(rng.Int64N(int64(period))), since())
							}
						case 6:
							require.NoError(t, tm.SetPeriodic(rng.IntN(2) == 0))
						case 7:
							if rng.IntN(16) == 0 {
								m.panics.Store(true)
							}
						default:
							if !tm.Pending() && rng.IntN(4) == 0 {
								m.reset(tm, time.Duration(rng.Int64N(int64(period))), since())
							}
							pause(50 * time.Microsecond)
						}
					}
				})
			}
			wg.Wait()
			// Quiet: every timer runs with the first period and the hint.
			for i := range timers {
				m := &models[i]
				m.panics.Store(false)
				m.period.Store(int64(period))
				require.NoError(t, timers[i].SetPeriodic(true))
				m.reset(&timers[i], period, since())
			}
			pause(10 * period)
			before := make([]int64, len(models))
			for i := range models {
				models[i].mu.Lock()
				before[i] = models[i].fires
				models[i].mu.Unlock()
			}
			// Every timer fires again: in a bubble within 30 periods
			// exactly; in real time (a napping driver) the wait ends once
			// all have fired, or at rtWaitLimit, a bound only a lost timer
			// reaches.
			limit := time.Now().Add(rtWaitLimit)
			if napMin < 0 {
				limit = time.Now().Add(30 * period)
			}
			idle := func(i int) bool {
				m := &models[i]
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.fires == before[i]
			}
			for waiting := 0; waiting < len(models); {
				if idle(waiting) {
					if time.Now().After(limit) {
						break
					}
					pause(period)
					continue
				}
				waiting++
			}
			w.mu.Lock()
			members := laneMembers(w)[period]
			lanes := len(w.lanes)
			w.mu.Unlock()
			for i := range models {
				m := &models[i]
				if idle(i) {
					m.mu.Lock()
					w.mu.Lock()
					tm := &timers[i]
					entries := 0
					for _, l := range w.lanes {
						for k := l.head; k < l.tail; k++ {
							if l.ring[k&uint64(len(l.ring)-1)].t == tm {
								entries++
							}
						}
					}
					state := fmt.Sprintf("due %d (now %d), slotStart %d, loc %d, slot %d, lane entries %d, minReset %x, last fire %v, fires %d",
						tm.due.Load(), time.Since(w.epoch), tm.slotStart.Load(), tm.loc, tm.slot, entries, tm.minReset.Load(), time.Duration(m.lastFire), m.fires)
					w.mu.Unlock()
					m.mu.Unlock()
					t.Fatalf("timer %d never fired again: lost? %s", i, state)
				}
			}
			left := w.Stop()
			select {
			case <-w.Done():
			case <-time.After(rtWaitLimit):
				t.Fatal("driver did not exit after Stop")
			}
			seen := map[*Timer]bool{}
			for _, tm := range left {
				require.False(t, seen[tm], "Stop returned a timer twice")
				seen[tm] = true
			}
			for i := range timers {
				require.False(t, timers[i].Pending(), "timer %d pending after Stop", i)
				m := &models[i]
				require.Zero(t, m.early, "timer %d fired %d times early, worst by %v: %s", i, m.early, time.Duration(-m.worst), m.what)
			}
			s := w.Stats()
			require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "%+v", s)
			require.Positive(t, rebinds.Load(), "no timer was rebound: the test did not race Init")
			// The timers join their lane again, unless the machine is so
			// loaded that their re-arms come out of order by more than a
			// tick (then they stay in slots, see fits): the white-box
			// TestLaneHoldsPeriodicTimers checks the membership itself.
			require.Positive(t, lanes, "no lane was made: the test did not race the lanes")
			t.Logf("%d rebinds, %d queued in the lane at the end; wheel stats %+v", rebinds.Load(), members, s)
		}
	}
}

// TestLanesOffWhereTheDriverDoesNotRearm: lanes are the real-time driver's
// own re-arms; with an Executor (re-arms happen on the executor's
// goroutines) or MaxPending (re-arms count under the lock), and on a
// virtual wheel (exact order), SetPeriodic timers stay in slots and still
// fire every period.
func TestLanesOffWhereTheDriverDoesNotRearm(t *testing.T) {
	const (
		n      = 64
		period = 2 * time.Millisecond
	)
	run := func(t *testing.T, w *Wheel, wait func(fires *atomic.Int64)) {
		ts := make([]Timer, n)
		var fires atomic.Int64
		for i := range ts {
			require.NoError(t, ts[i].InitNext(w, func(*Timer, error) time.Duration {
				fires.Add(1)
				return period
			}))
			require.NoError(t, ts[i].SetPeriodic(true))
			_, err := ts[i].TryReset(period)
			require.NoError(t, err)
		}
		wait(&fires)
		w.mu.Lock()
		lanes := len(w.lanes)
		w.mu.Unlock()
		require.Zero(t, lanes, "a lane was made")
		for i := range ts {
			ts[i].Stop()
		}
	}
	// In a bubble (inBubble) ten periods pass exactly; every timer fires
	// in each, at most a tick late.
	realTime := func(fires *atomic.Int64) {
		time.Sleep(10 * period)
		require.GreaterOrEqual(t, fires.Load(), int64(5*n), "periodic timers stopped firing")
	}
	t.Run("executor", func(t *testing.T) {
		inBubble(t, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Executor = GoExecutor
			w, err := New(cfg)
			require.NoError(t, err)
			w.napMin = -1
			defer func() { w.Stop(); <-w.Done() }()
			run(t, w, realTime)
		})
	})
	t.Run("max-pending", func(t *testing.T) {
		inBubble(t, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxPending = 10 * n
			w, err := New(cfg)
			require.NoError(t, err)
			w.napMin = -1
			defer func() { w.Stop(); <-w.Done() }()
			run(t, w, realTime)
		})
	})
	t.Run("virtual", func(t *testing.T) {
		v, err := NewVirtual(DefaultConfig())
		require.NoError(t, err)
		run(t, v.Wheel, func(fires *atomic.Int64) {
			v.AdvanceBy(10 * period)
			require.Equal(t, int64(10*n), fires.Load(), "every timer fires once a period")
		})
	})
}
