package wheel

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"
)

// The real-time driver fires timers from three walks: a level-0 slot taken
// whole (walkTransit), the batch collected from the ready heap at a tick
// above maxBatchTick (walkBatch), and a lane's due front (walkLane).
// TestFireWalkers drives all three through the same cases, in bubbles:
// n NextFunc timers due at the same instants, re-armed every period, and
// on their k-th fire (by then the SetPeriodic ones are in their lane) the
// case's action. Whatever the walk, the outcome must be the same.

// walker is how a case's timers reach one of the driver's walks.
type walker struct {
	name     string
	tick     time.Duration
	periodic bool // SetPeriodic: the timers join their lane
}

var walkers = []walker{
	{"transit", time.Millisecond, false},
	{"batch", 2 * maxBatchTick, false},
	{"lane", time.Millisecond, true},
}

// walkCase is what timer 0's k-th fire does, and what must follow.
type walkCase struct {
	name string
	// act runs in timer 0's NextFunc on its k-th fire and returns the
	// delay it re-arms with (it may panic).
	act   func(h *walkHarness) time.Duration
	check func(t *testing.T, h *walkHarness)
}

const (
	walkTimers = 8
	walkK      = 3 // the fire the case acts on
)

type walkHarness struct {
	w      *Wheel
	period time.Duration
	timers [walkTimers]Timer
	act    func(h *walkHarness) time.Duration

	mu     sync.Mutex
	fires  [walkTimers][]time.Duration
	told   [walkTimers][]error
	stops  [walkTimers]bool // Stop returned true, from the case's action
	left   []*Timer         // the wheel's Stop, from the case's action
	lanes0 int              // timers queued in a lane just before the k-th fire
}

func (h *walkHarness) next(i int) NextFunc {
	return func(_ *Timer, err error) time.Duration {
		h.mu.Lock()
		if err != nil {
			h.told[i] = append(h.told[i], err)
			h.mu.Unlock()
			return 0
		}
		h.fires[i] = append(h.fires[i], h.w.Now())
		n := len(h.fires[i])
		h.mu.Unlock()
		if i == 0 && n == walkK {
			return h.act(h)
		}
		return h.period
	}
}

func (h *walkHarness) count(i int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.fires[i])
}

var walkCases = []walkCase{
	{
		name: "panic",
		act:  func(*walkHarness) time.Duration { panic("walk boom") },
		check: func(t *testing.T, h *walkHarness) {
			require.Len(t, h.told[0], 1, "the NextFunc hears of its panic once")
			var pe *PanicError
			require.True(t, errors.As(h.told[0][0], &pe))
			require.Equal(t, "walk boom", pe.Value)
			require.Len(t, h.fires[0], walkK, "a panicked fire does not re-arm")
			require.False(t, h.timers[0].Pending())
			for i := 1; i < walkTimers; i++ {
				require.Greater(t, len(h.fires[i]), walkK+1, "timer %d stopped firing after another's panic", i)
			}
			require.Zero(t, h.w.Stats().Panics, "a NextFunc's panic is its own")
		},
	},
	{
		name: "stop the others",
		act: func(h *walkHarness) time.Duration {
			for i := 1; i < walkTimers; i++ {
				stopped := h.timers[i].Stop()
				h.mu.Lock()
				h.stops[i] = stopped
				h.mu.Unlock()
			}
			return h.period
		},
		check: func(t *testing.T, h *walkHarness) {
			require.Greater(t, len(h.fires[0]), walkK+1)
			for i := 1; i < walkTimers; i++ {
				n := len(h.fires[i])
				// Fired this round before the Stop (and re-armed, so the
				// Stop found it pending) or stopped before it fired.
				require.True(t, h.stops[i], "timer %d: Stop found it idle", i)
				require.Contains(t, []int{walkK - 1, walkK}, n, "timer %d fired %d times", i, n)
				require.False(t, h.timers[i].Pending())
			}
		},
	},
	{
		name: "stop the wheel",
		act: func(h *walkHarness) time.Duration {
			left := h.w.Stop()
			h.mu.Lock()
			h.left = left
			h.mu.Unlock()
			return h.period
		},
		check: func(t *testing.T, h *walkHarness) {
			left := map[*Timer]bool{}
			for _, tm := range h.left {
				left[tm] = true
			}
			for i := range walkTimers {
				n := len(h.fires[i])
				require.False(t, h.timers[i].Pending(), "timer %d pending after the wheel stopped", i)
				if i == 0 {
					require.Equal(t, walkK, n)
					require.Len(t, h.told[0], 1, "the re-arm is refused, and the NextFunc told")
					require.ErrorIs(t, h.told[0][0], ErrStopped)
					continue
				}
				// Either it fired this round, before the Stop, and its
				// re-arm was pending at the Stop, or the Stop took its
				// fire: it is returned either way, and fires no more.
				require.Contains(t, []int{walkK - 1, walkK}, n, "timer %d fired %d times", i, n)
				require.True(t, left[&h.timers[i]], "timer %d not returned by Stop", i)
			}
		},
	},
	{
		name: "re-arm sooner",
		act:  func(h *walkHarness) time.Duration { return h.period / 4 },
		check: func(t *testing.T, h *walkHarness) {
			f := h.fires[0]
			require.Greater(t, len(f), walkK+1)
			gap := f[walkK] - f[walkK-1]
			require.GreaterOrEqual(t, gap, h.period/4, "fired before the delay it asked for")
			require.Less(t, gap, h.period, "the sooner re-arm was not kept")
		},
	},
}

func TestFireWalkers(t *testing.T) {
	for _, wk := range walkers {
		for _, c := range walkCases {
			t.Run(wk.name+"/"+c.name, func(t *testing.T) {
				inBubble(t, func(t *testing.T) { testFireWalker(t, wk, c) })
			})
		}
	}
}

func testFireWalker(t *testing.T, wk walker, c walkCase) {
	cfg := DefaultConfig()
	cfg.Tick = wk.tick
	cfg.Logger = hclog.NewNullLogger()
	cfg.Metrics = &metrics.BlackholeSink{}
	w, err := New(cfg)
	require.NoError(t, err)
	w.napMin = -1 // see newBubbleWheel
	defer func() { w.Stop(); <-w.Done() }()
	require.Equal(t, wk.tick <= maxBatchTick, w.batchSlots, "the walker's tick")
	h := &walkHarness{w: w, period: 4 * wk.tick, act: c.act}
	for i := range h.timers {
		require.NoError(t, h.timers[i].InitNext(w, h.next(i)))
		require.NoError(t, h.timers[i].SetPeriodic(wk.periodic))
	}
	start := time.Now()
	for i := range h.timers {
		_, err := h.timers[i].TryReset(h.period)
		require.NoError(t, err)
	}
	// Up to just before the k-th fire.
	time.Sleep(time.Until(start.Add(time.Duration(walkK)*h.period - h.period/2)))
	require.Equal(t, walkK-1, h.count(0), "fires before the k-th")
	w.mu.Lock()
	members := 0
	for _, n := range laneMembers(w) {
		members += n
	}
	w.mu.Unlock()
	if wk.periodic {
		require.Equal(t, walkTimers, members, "the timers are not in their lane")
	} else {
		require.Zero(t, members)
	}
	time.Sleep(time.Until(start.Add(time.Duration(walkK+4) * h.period)))
	for i := range h.timers {
		h.timers[i].Stop()
		// Every fire ended, panicked or not: the timer is idle, not left
		// in the state of a running callback (white box).
		require.Zero(t, h.timers[i].due.Load(), "timer %d is not idle", i)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Never early: the first fire a period after the start, each later
	// one at least the delay its NextFunc returned after the one before
	// (a period, or a quarter of one after timer 0's sooner re-arm).
	for i, fs := range h.fires {
		for n, at := range fs {
			least := h.period
			prev := time.Duration(0)
			if n > 0 {
				prev = fs[n-1]
				if i == 0 && n == walkK && c.name == "re-arm sooner" {
					least = h.period / 4
				}
			}
			require.GreaterOrEqual(t, at-prev, least, "timer %d fire %d at %v, %v after the one before", i, n, at, at-prev)
		}
	}
	c.check(t, h)
	t.Logf("fires: %v", h.fires)
}
