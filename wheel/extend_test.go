package wheel

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTryExtend: TryExtend moves a pending timer's deadline without the
// lock where that is allowed, and otherwise changes nothing and says so:
// it never schedules an idle or stopped timer, never works on a virtual
// wheel (where Reset is exact and cheap), and never moves a deadline
// before the start of the slot the timer waits in.
func TestTryExtend(t *testing.T) {
	w := newRealtime(t, time.Millisecond)
	var tm Timer
	require.NoError(t, tm.Init(w, func() {}))

	require.False(t, tm.TryExtend(time.Hour), "an idle timer")
	require.False(t, tm.Pending())

	require.False(t, tm.Reset(time.Hour), "Reset reports whether it was pending")
	before, _ := tm.Deadline()
	require.True(t, tm.TryExtend(2*time.Hour), "a later deadline of a pending timer")
	after, ok := tm.Deadline()
	require.True(t, ok)
	require.Greater(t, after, before+59*time.Minute)
	require.EqualValues(t, 1, w.Stats().Pending)

	// The timer waits in a slot that starts about an hour ahead (or in a
	// higher level's, which starts later still): a deadline a second
	// ahead is before it.
	require.False(t, tm.TryExtend(time.Second), "a deadline before the timer's slot")
	d, _ := tm.Deadline()
	require.Equal(t, after, d, "a refused TryExtend changes nothing")

	require.True(t, tm.Stop())
	require.False(t, tm.TryExtend(time.Hour), "a stopped timer")
	require.False(t, tm.Pending())
	require.EqualValues(t, 0, w.Stats().Pending)

	var zero Timer
	require.False(t, zero.TryExtend(time.Hour), "a timer without a wheel")

	v, err := NewVirtual(DefaultConfig())
	require.NoError(t, err)
	var vt Timer
	require.NoError(t, vt.Init(v.Wheel, func() {}))
	vt.Reset(time.Hour)
	require.False(t, vt.TryExtend(2*time.Hour), "a virtual wheel's timer")
	vd, _ := vt.Deadline()
	require.Equal(t, time.Hour, vd)
}

// TestTryExtendEarlierAtCoarseTicks: on a real-time wheel a timer far
// enough ahead waits in a slot before its deadline's (halfway), so that a
// Reset drawing a shorter timeout, as a heartbeat's does, stays lock-free.
// "Far enough" is a time (alignLeadTime), not a count of ticks: at a 10ms
// tick a 1s timer is 100 ticks ahead, fewer than alignLead, and still
// waits halfway.
func TestTryExtendEarlierAtCoarseTicks(t *testing.T) {
	for _, tick := range []time.Duration{time.Millisecond, 5 * time.Millisecond, maxBatchTick} {
		t.Run("tick="+tick.String(), func(t *testing.T) {
			w := newRealtime(t, tick)
			var tm Timer
			require.NoError(t, tm.Init(w, func() {}))
			tm.Reset(time.Second)
			require.True(t, tm.TryExtend(800*time.Millisecond), "a deadline earlier than the first but after the slot halfway to it")
			d, ok := tm.Deadline()
			require.True(t, ok)
			require.Less(t, d, w.Now()+900*time.Millisecond)
			require.False(t, tm.TryExtend(100*time.Millisecond), "a deadline before the timer's slot")
			require.True(t, tm.Stop())
		})
	}
}

// TestExtendRacesRebucket: a lock-free Reset or TryExtend checks the
// timer's slot start, then swaps in the new deadline; if the driver
// re-buckets the timer in between, under the old deadline, the timer may
// land in a slot that starts after the new deadline, and the call must
// repair that (Wheel.fixup) or the timer fires late by up to that slot.
// extendHook opens the window: it lets the bubble's clock run until the
// driver has re-bucketed the timer. The timer waits at its slot halfway
// to its deadline (about 500ms of a 1s timer); the driver moves it on
// to about 750ms; the new deadline is about 650ms.
func TestExtendRacesRebucket(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extend func(*Timer, time.Duration) bool
	}{
		{"TryExtend", (*Timer).TryExtend},
		{"Reset", (*Timer).Reset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) { testExtendRacesRebucket(t, tc.extend) })
		})
	}
}

func testExtendRacesRebucket(t *testing.T, extend func(*Timer, time.Duration) bool) {
	w := newBubbleWheel(t, time.Millisecond)
	fired := make(chan time.Duration, 1)
	var tm Timer
	require.NoError(t, tm.Init(w, func() { fired <- w.Now() }))
	tm.Reset(time.Second)
	first := tm.slotStart.Load()
	require.Greater(t, first, int64(400*time.Millisecond), "a 1s timer waits halfway to its deadline")
	time.Sleep(time.Duration(first) - w.Now() - 20*time.Millisecond)
	require.Equal(t, first, tm.slotStart.Load(), "the driver re-bucketed the timer before the test's Reset")

	var moved int64 = -1
	extendHook = func(tm *Timer) {
		extendHook = nil
		for tm.slotStart.Load() == first {
			time.Sleep(time.Millisecond) // the driver reaches the slot
		}
		moved = tm.slotStart.Load()
	}
	t.Cleanup(func() { extendHook = nil })
	d := time.Duration(first) + 150*time.Millisecond - w.Now()
	require.True(t, extend(&tm, d), "a pending timer, a deadline after its slot's start")
	deadline, ok := tm.Deadline()
	require.True(t, ok)
	require.Greater(t, moved, int64(deadline),
		"the driver re-bucketed the timer to a slot at %v, not after the new deadline %v: the test misses the race",
		time.Duration(moved), deadline)

	checkStructure(t, w)
	at := <-fired
	require.LessOrEqual(t, at, deadline+rtLatenessBound(w),
		"the timer fired at %v, due at %v (its stale slot starts at %v)", at, deadline, time.Duration(moved))
	checkStructure(t, w)
}

// TestResetInPlaceRacesIdleUnlink: a stopped timer stays linked in its
// slot (Stop unlinks lazily), and a Reset to a deadline not before that
// slot's start schedules it in place without the lock. When the driver
// reaches the slot it unlinks the idle timer (locate), and the two race:
// if the Reset lands after the driver read the timer idle but before it
// published the unlink, one of them must place the timer, or it stays
// pending in no slot and never fires. locateIdleHook runs the Reset in
// that window.
func TestResetInPlaceRacesIdleUnlink(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		// The hook is set before the wheel's driver starts (the first
		// Reset starts it) and cleared after it exits (cleanups run last
		// first), so the driver's reads of it are ordered after and before.
		type result struct {
			deadline time.Duration
			err      error
		}
		var tm Timer
		hooked := make(chan result, 1)
		ran := false // the driver's alone
		locateIdleHook = func(x *Timer) {
			if x != &tm || ran {
				return
			}
			ran = true
			pending, err := tm.TryReset(5 * time.Millisecond)
			if err == nil && pending {
				err = errors.New("Reset found the stopped timer pending")
			}
			deadline, _ := tm.Deadline()
			hooked <- result{deadline, err}
		}
		t.Cleanup(func() { locateIdleHook = nil })
		w := newBubbleWheel(t, time.Millisecond)
		fired := make(chan time.Duration, 1)
		require.NoError(t, tm.Init(w, func() { fired <- w.Now() }))
		tm.Reset(10 * time.Millisecond)
		require.True(t, tm.Stop())
		require.GreaterOrEqual(t, tm.slotStart.Load(), int64(0), "a stopped timer stays linked in its slot")

		var r result
		select {
		case r = <-hooked:
		case <-time.After(time.Second):
			t.Fatal("the driver did not unlink the stopped timer: the test misses the race")
		}
		require.NoError(t, r.err)
		select {
		case at := <-fired:
			require.GreaterOrEqual(t, at, r.deadline)
		case <-time.After(time.Second):
			t.Fatalf("the timer Reset while the driver unlinked it never fired (pending %v)", tm.Pending())
		}
		checkStructure(t, w)
	})
}
