package wheel

import (
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
