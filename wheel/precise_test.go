package wheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSetPrecise: the hint is kept once per timer until withdrawn, and
// counts while its timer is pending with a deadline within a tick of the
// driver's next wake-up.
func TestSetPrecise(t *testing.T) {
	var zero Timer
	require.ErrorIs(t, zero.SetPrecise(true), ErrNotInitialized)

	w := newRealtime(t, time.Millisecond)
	var a, b Timer
	a.Init(w, func() {})
	b.Init(w, func() {})
	require.NoError(t, a.SetPrecise(true))
	require.NoError(t, a.SetPrecise(true))
	require.NoError(t, b.SetPrecise(true))
	require.NoError(t, b.SetPrecise(false))
	require.NoError(t, b.SetPrecise(false))
	w.mu.Lock()
	require.Equal(t, []*Timer{&a}, w.precise)
	w.mu.Unlock()

	at := w.Now() + time.Hour
	a.ResetAt(at)
	w.mu.Lock()
	require.True(t, w.preciseBy(int64(at)))
	require.True(t, w.preciseBy(int64(at-w.Tick()/2)), "within a tick")
	require.False(t, w.preciseBy(int64(at-3*w.Tick())))
	w.mu.Unlock()
	a.Stop()
	w.mu.Lock()
	require.False(t, w.preciseBy(int64(at)), "stopped")
	w.mu.Unlock()
}

// TestPreciseTimerNaps: a real-time driver that runs small batches sleeps
// on the runtime's timers, but while a timer hinted with SetPrecise is its
// next it sleeps on its timerfd.
func TestPreciseTimerNaps(t *testing.T) {
	if n := newNapper(); n == nil {
		t.Skip("no timerfd here")
	} else {
		n.close()
	}
	w := newRealtime(t, time.Millisecond)
	var tm Timer
	tm.Init(w, func() {})
	require.NoError(t, tm.SetPrecise(true))
	tm.ResetAt(w.Now() + 50*time.Millisecond)
	deadline := time.Now().Add(rtWaitLimit)
	for !w.napping.Load() {
		require.True(t, time.Now().Before(deadline), "the driver never napped for a precise timer")
		time.Sleep(time.Millisecond)
	}
	tm.Stop()
}
