package timerfd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimer: an armed timer ends a Wait no earlier than its arming; a
// re-arming replaces the previous one; Close ends a Wait.
func TestTimer(t *testing.T) {
	tm := New()
	if tm == nil {
		t.Skip("no timerfd on this system")
	}
	start := time.Now()
	tm.Arm(int64(time.Hour))
	tm.Arm(int64(2 * time.Millisecond)) // replaces the hour
	require.True(t, tm.Wait())
	require.GreaterOrEqual(t, time.Since(start), 2*time.Millisecond, "never early")
	tm.Arm(0)
	require.True(t, tm.Wait(), "at once")
	done := make(chan bool)
	tm.Arm(Never)
	go func() { done <- tm.Wait() }()
	tm.Close()
	require.False(t, <-done)
}
