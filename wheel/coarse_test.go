package wheel

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSlackForTagWrap: a tag comes round again after tagMask epochs, which
// can be well within slackWindow when epochs are short. The slack remembered
// for the older epoch must survive while the tag is open again, or a timer
// of the older epoch could fire up to that epoch's length early.
func TestSlackForTagWrap(t *testing.T) {
	w, err := New(DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	const tag = 7
	// An old epoch with this tag lasted 3ms and ended at t=10ms.
	w.slack[tag] = slackEntry{len: int64(3 * time.Millisecond), end: int64(10 * time.Millisecond)}
	// 20µs later the tag is published again (a new, short epoch).
	w.openTag, w.openBase = tag, int64(10*time.Millisecond+20*time.Microsecond)
	now := int64(10*time.Millisecond + 30*time.Microsecond)
	require.Equal(t, int64(3*time.Millisecond), w.slackFor(tag, now), "the older epoch's slack was lost")
	// Once the new epoch is longer, it rules.
	later := w.openBase + int64(5*time.Millisecond)
	require.Equal(t, int64(5*time.Millisecond), w.slackFor(tag, later))
	// Past the window the old epoch is forgotten.
	far := int64(10*time.Millisecond) + slackWindow + 1
	w.openTag = 0
	require.Zero(t, w.slackFor(tag, far))
}

// TestCoarseDeadlineMatchesScheduleDeadline: the inline common case of a
// Reset's deadline (coarseDeadline) records what scheduleDeadline records
// for the same published epoch and delay, and declines what it must leave
// to scheduleDeadline: no epoch published, a delay past the coarse clock's
// reach, or no Reset yet told to the driver (demand).
func TestCoarseDeadlineMatchesScheduleDeadline(t *testing.T) {
	w, err := New(DefaultConfig()) // no timer: no driver goroutine
	require.NoError(t, err)
	defer w.Stop()
	delays := []time.Duration{math.MinInt64, -time.Second, -1, 0, 1, tagMask, tagMask + 1,
		time.Millisecond, 150 * time.Millisecond, coarseMaxDelay - 1, coarseMaxDelay}
	for _, base := range []int64{0, 1 << 12, 5 << 12, int64(time.Hour) &^ tagMask, int64(100*365*24*time.Hour) &^ tagMask} {
		for _, tag := range []int64{1, 2, tagMask} {
			w.coarse.Store(base | tag)
			for _, d := range delays {
				w.demand.Store(true)
				got, ok := w.coarseDeadline(d)
				require.True(t, ok, "base %d tag %d d %v", base, tag, d)
				require.Equal(t, w.scheduleDeadline(d), got, "base %d tag %d d %v", base, tag, d)
				w.demand.Store(false)
				_, ok = w.coarseDeadline(d)
				require.False(t, ok, "the driver must first be told of Resets (demand)")
				w.scheduleDeadline(d)
				require.True(t, w.demand.Load(), "scheduleDeadline tells the driver")
			}
			w.demand.Store(true)
			_, ok := w.coarseDeadline(coarseMaxDelay + 1)
			require.False(t, ok, "a delay past the coarse clock's reach reads the clock")
		}
	}
	w.coarse.Store(-1)
	_, ok := w.coarseDeadline(time.Millisecond)
	require.False(t, ok, "no epoch published")
}

// TestEpochSpanFollowsTheTick: while a stream of Resets reads the coarse
// clock, a driver with nothing due soon keeps it published and wakes
// every epochSpan to renew it: a millisecond, or on a wheel that takes its
// slots whole at a coarser tick, a tick (its timers may fire a tick late
// anyway; waking every millisecond at a 10ms tick made five times the
// wake-ups its slots need).
func TestEpochSpanFollowsTheTick(t *testing.T) {
	for _, c := range []struct{ tick, span time.Duration }{
		{100 * time.Microsecond, time.Millisecond},
		{time.Millisecond, time.Millisecond},
		{5 * time.Millisecond, 5 * time.Millisecond},
		{maxBatchTick, maxBatchTick},
		{maxBatchTick + time.Millisecond, time.Millisecond}, // slots not taken whole: fires stay near their deadlines
	} {
		t.Run("tick="+c.tick.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Tick = c.tick
			w, err := New(cfg) // no timer: no driver goroutine
			require.NoError(t, err)
			defer w.Stop()
			require.Equal(t, int64(c.span), w.epochSpan)
			// Resets read the clock fast enough to hold the lease.
			w.clockReads.Store(1 << 20)
			w.demand.Store(true)
			now := int64(time.Since(w.epoch))
			wake := w.planSleep(now, now+int64(time.Second))
			require.Equal(t, now+int64(c.span), wake, "the driver wakes to renew the clock")
			require.GreaterOrEqual(t, w.coarse.Load(), int64(0), "the clock stays published over the sleep")
		})
	}
}
