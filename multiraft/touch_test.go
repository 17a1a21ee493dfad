package multiraft

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
	"github.com/raftick/raftick/wheel/wheeltest"
)

// TestTouchNeverWaits holds the host's lock, as a long Step does, while
// another goroutine touches a hibernating group: Touch returns without
// the lock, and the holder wakes the group when it lets go.
func TestTouchNeverWaits(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	cfg := DefaultConfig()
	cfg.ID = 1
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	var sent []Batch
	h, err := NewHost(cfg, v.Wheel, TransportFunc(func(b Batch) { sent = append(sent, b) }))
	require.NoError(t, err)
	defer h.Stop()
	for g := range GroupID(3) {
		require.NoError(t, h.AddGroup(GroupConfig{ID: g, Voters: []election.ID{1, 2, 3}, Storage: election.NewMemoryStorage(), Leader: 2}))
	}
	require.EqualValues(t, 3, h.Stats().Hibernating)

	h.mu.Lock() // a Step in progress
	done := make(chan error, 2)
	go func() { done <- h.Touch(1) }()
	go func() { done <- h.Touch(1) }() // queued once
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	require.Nil(t, h.groups.get(1).node, "not woken while the lock is held")
	require.Len(t, h.pend, 1)
	h.unlock()

	st, err := h.Status(1)
	require.NoError(t, err)
	require.False(t, st.Hibernating, "woken by the lock's holder")
	require.Equal(t, election.ID(2), st.Status.Leader)
	require.Empty(t, h.pend)
	require.Len(t, sent, 1, "the woken follower asks its leader to wake")
	require.Equal(t, Control{Kind: Wake, Group: 1, Term: 1}, sent[0].Controls[0])
	s := h.Stats()
	require.EqualValues(t, 2, s.Hibernating)
	require.Equal(t, int64(1), s.Wakes)
	require.Zero(t, s.WakeFailures)

	// After Stop a queued touch wakes nothing, and Touch says so.
	h.mu.Lock()
	go func() { done <- h.Touch(2) }()
	require.NoError(t, <-done)
	h.stopped = true
	h.halted.Store(true)
	h.unlock()
	require.Nil(t, h.groups.get(2).node)
	require.ErrorIs(t, h.Touch(2), ErrStopped)
	v.AdvanceBy(time.Second)
}

// TestTouchWakesOnTheWaker checks that on a real-time wheel a Touch of a
// hibernating group only queues it: the host's waker goroutine wakes it,
// here as soon as the lock a Step held is let go without the holder
// waking the queue (the caller never builds the node, nor runs what
// waits for the lock).
func TestTouchWakesOnTheWaker(t *testing.T) {
	w, err := wheel.New(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	h := quietHost(t, w) // no timer of the host takes its lock within the test's wait
	defer h.Stop()

	h.mu.Lock() // a Step in progress
	require.NoError(t, h.Touch(1))
	h.pendMu.Lock()
	require.Len(t, h.pend, 1, "queued, not woken")
	h.pendMu.Unlock()
	h.mu.Unlock() // the holder lets go without waking the queue
	require.Eventually(t, awakeCheck(h, 1), 5*time.Second, time.Millisecond, "woken by the waker")
}

// quietHost returns host 1 on w with group 1 (voters 1, 2 and 3, led by
// 2) asleep, HibernateAfter 1s, and no other timer of the host due
// within a test.
func quietHost(t *testing.T, w *wheel.Wheel) *Host { return quietHostWith(t, w, nil) }

// quietHostWith is quietHost with its Config changed by set, if not nil.
func quietHostWith(t *testing.T, w *wheel.Wheel, set func(*Config)) *Host {
	cfg := DefaultConfig()
	cfg.ID = 1
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.ElectionTimeout = time.Hour
	cfg.Election.HeartbeatInterval = 10 * time.Minute
	cfg.LivenessInterval = 10 * time.Minute
	cfg.LivenessTimeout = time.Hour
	cfg.HibernateAfter = time.Second
	if set != nil {
		set(&cfg)
	}
	h, err := NewHost(cfg, w, TransportFunc(func(Batch) {}))
	require.NoError(t, err)
	require.NoError(t, h.AddGroup(GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}, Leader: 2}))
	require.EqualValues(t, 1, h.Stats().Hibernating)
	return h
}

// awakeCheck returns a check of group gid's awake bit, read as Touch reads
// it.
func awakeCheck(h *Host, gid GroupID) func() bool {
	return func() bool {
		h.gmu.RLock()
		defer h.gmu.RUnlock()
		return h.groups.find(gid).touch.awake()
	}
}

// TestHibernateSeesTouch checks both sides of the touch word's rule on a
// host, one step at a time: hibernate refuses a group touched within
// HibernateAfter (as when a Touch lands between the sweep's look and
// hibernate), and a Touch after a hibernation finds the group asleep and
// wakes it.
func TestHibernateSeesTouch(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	h := quietHost(t, v.Wheel)
	defer h.Stop()
	awake := awakeCheck(h, 1)
	require.False(t, awake())
	require.NoError(t, h.Touch(1)) // the host is idle: woken at once
	require.True(t, awake())
	g := h.groups.get(1)

	hibernate := func() bool { // the lock is not held when a check fails
		h.lock()
		defer h.unlock()
		return h.hibernate(g)
	}
	require.False(t, hibernate(), "touched just now")
	require.NotNil(t, g.node)
	require.True(t, awake(), "set again by the refusal")

	v.AdvanceBy(2 * time.Second)
	require.True(t, hibernate(), "untouched for HibernateAfter")
	require.False(t, awake())
	require.Nil(t, g.node)

	require.NoError(t, h.Touch(1))
	require.NotNil(t, g.node, "woken by the Touch")
	require.True(t, awake())
	require.EqualValues(t, 0, h.Stats().Hibernating)
}

// TestTouchRecordsTheStamp runs a host on a real-time wheel in a
// testing/synctest bubble, its sweep every 100ms: a Touch records the
// host's stamp rather than reading the clock, and the stamp is never
// later than the Touch nor more than a sweep period (plus the wheel's
// tick) earlier, so a group touched since the last sweep is never taken
// for idle.
func TestTouchRecordsTheStamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := bubbleWheel(t)
		const hb = 100 * time.Millisecond // the sweep's period
		h := quietHostWith(t, w, func(cfg *Config) {
			cfg.Election.HeartbeatInterval = hb
			cfg.LivenessTimeout = 2 * time.Hour
			cfg.HibernateAfter = 300 * time.Millisecond
		})
		defer h.Stop()
		require.NoError(t, h.Touch(1))
		synctest.Wait()
		require.True(t, awakeCheck(h, 1)(), "woken by the waker")
		g := h.groups.get(1)
		word := func() *touchWord {
			h.gmu.RLock()
			defer h.gmu.RUnlock()
			return &h.groups.find(1).touch
		}()
		for i := range 40 {
			time.Sleep(37 * time.Millisecond)
			before := w.Now()
			require.NoError(t, h.Touch(1))
			at, ok := word.last()
			require.True(t, ok)
			require.LessOrEqual(t, at, before, "touch %d recorded a time after it", i)
			require.Less(t, before-at, hb+2*w.Tick(), "touch %d recorded a stale stamp", i)
			h.lock()
			slept := h.hibernate(g)
			h.unlock()
			require.False(t, slept, "touch %d: hibernated just after a Touch", i)
		}
	})
}

// TestWakesGoInChunks: on a real-time wheel a holder of the host's lock
// wakes at most wakeChunk of the groups Touch queued, so the wheel's
// driver never waits behind a whole queue of wakes; the waker goroutine
// wakes the rest, a chunk per hold of the lock.
func TestWakesGoInChunks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := bubbleWheel(t)
		h := quietHost(t, w)
		defer h.Stop()
		const n = 3*wakeChunk + 5
		for id := GroupID(2); id <= n; id++ {
			require.NoError(t, h.AddGroup(GroupConfig{ID: id, Voters: []election.ID{1, 2, 3}, Leader: 2}))
		}
		h.lock()
		for id := GroupID(1); id <= n; id++ {
			require.NoError(t, h.Touch(id))
		}
		h.wakePending()
		asleep := h.stats.Hibernating
		h.unlock()
		require.EqualValues(t, n-wakeChunk, asleep, "one chunk woken per hold")
		synctest.Wait()
		require.Zero(t, h.Stats().Hibernating, "the waker woke the rest")
	})
}

// bubbleWheel returns a real-time wheel for a testing/synctest bubble
// (its driver sleeps on the bubble's clock), stopped when the test ends.
func bubbleWheel(t *testing.T) *wheel.Wheel {
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheeltest.NewInBubble(wcfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.Stop()
		<-w.Done()
	})
	return w
}
