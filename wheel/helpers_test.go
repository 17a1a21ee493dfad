package wheel_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/wheel"
)

const (
	ms = time.Millisecond
	// maxDeadline is the latest deadline a wheel represents (Timer keeps
	// deadline+1, so math.MaxInt64 itself is not a deadline).
	maxDeadline = time.Duration(math.MaxInt64 - 1)
	// waitLimit bounds every wait on a real-time wheel; reaching it is a failure.
	waitLimit = 5 * time.Second
)

// newVirtual returns a virtual wheel with DefaultConfig changed by mod.
func newVirtual(t *testing.T, mod func(*wheel.Config)) *wheel.Virtual {
	t.Helper()
	cfg := wheel.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	v, err := wheel.NewVirtual(cfg)
	require.NoError(t, err)
	return v
}

// newReal returns a real-time wheel. When the test ends the wheel is
// stopped, its driver's exit awaited, and goroutine leaks are checked.
func newReal(t *testing.T, mod func(*wheel.Config)) *wheel.Wheel {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	cfg := wheel.DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		w.Stop()
		select {
		case <-w.Done():
		case <-time.After(waitLimit):
			t.Errorf("driver did not exit within %v of Stop", waitLimit)
		}
		goleak.VerifyNone(t, ignore)
	})
	return w
}

// recv waits for one value from ch, failing the test after waitLimit.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out after %v waiting for %s", waitLimit, what)
		panic("unreachable")
	}
}

// requireStatsAddUp checks Scheduled == Fired + Cancelled + Dropped +
// Pending, with Pending >= 0. Without MaxPending a wheel derives Pending
// from the rest (clamped at 0), so that the check is then that no timer
// was counted gone twice.
func requireStatsAddUp(t *testing.T, w *wheel.Wheel) wheel.Stats {
	t.Helper()
	s := w.Stats()
	require.GreaterOrEqual(t, s.Pending, int64(0), "stats: %+v", s)
	require.Equal(t, s.Scheduled, s.Fired+s.Cancelled+s.Dropped+s.Pending, "stats do not add up: %+v", s)
	return s
}

// recorder collects (name, virtual time) pairs of fired callbacks.
type recorder struct {
	v     *wheel.Virtual
	fires []string
}

func (r *recorder) fn(name string) func() {
	return func() { r.fires = append(r.fires, name+"@"+r.v.Now().String()) }
}

// forEachDriver runs f on a virtual and on a real-time wheel; run fires what
// is due (a no-op on the real-time wheel, whose driver does it).
func forEachDriver(t *testing.T, f func(t *testing.T, w *wheel.Wheel, run func())) {
	t.Run("virtual", func(t *testing.T) {
		v := newVirtual(t, nil)
		f(t, v.Wheel, func() { v.RunUntilIdle() })
	})
	t.Run("real-time", func(t *testing.T) {
		f(t, newReal(t, nil), func() {})
	})
}
