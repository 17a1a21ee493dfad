package memnet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

func newVirtual(t *testing.T) *wheel.Virtual {
	t.Helper()
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	return v
}

// runUntil advances v deadline by deadline until done holds.
func runUntil(v *wheel.Virtual, done func() bool) bool {
	for !done() {
		next, ok := v.NextDeadline()
		if !ok {
			return false
		}
		v.AdvanceTo(next)
	}
	return true
}

// TestCourierDeliversInDeadlineOrder: messages arrive after their delays,
// in deadline order, and Run stops once done holds.
func TestCourierDeliversInDeadlineOrder(t *testing.T) {
	v := newVirtual(t)
	type arrival struct {
		msg string
		at  time.Duration
	}
	var got []arrival
	c := NewCourier(v.Wheel, func(m string) { got = append(got, arrival{m, v.Now()}) })
	require.NoError(t, c.Send("b", 30*time.Millisecond))
	require.NoError(t, c.Send("a", 10*time.Millisecond))
	require.NoError(t, c.Send("c", 50*time.Millisecond))
	ok := runUntil(v, func() bool { return len(got) == 2 })
	require.True(t, ok)
	require.Equal(t, []arrival{{"a", 10 * time.Millisecond}, {"b", 30 * time.Millisecond}}, got)
	require.Equal(t, 30*time.Millisecond, v.Now(), "the run stops at the instant done turned true")

	// The timers that fired are reused: sending again allocates no
	// new parcel.
	require.NotNil(t, c.free)
	require.NoError(t, c.Send("d", time.Millisecond))
	require.NoError(t, c.Send("e", time.Millisecond))
	require.Nil(t, c.free)
}

// TestSendOnStoppedWheel: a stopped wheel refuses new messages.
func TestSendOnStoppedWheel(t *testing.T) {
	v := newVirtual(t)
	c := NewCourier(v.Wheel, func(int) { t.Fatal("delivered on a stopped wheel") })
	v.Stop()
	require.Error(t, c.Send(1, time.Millisecond))
}
