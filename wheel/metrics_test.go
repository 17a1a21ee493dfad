package wheel_test

import (
	"runtime"
	"slices"
	"testing"
	"time"
	"weak"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/internal/msink"
	"github.com/raftick/raftick/wheel"
)

// sinkNames returns the gauge and counter names an InmemSink holds.
func sinkNames(s *metrics.InmemSink) (gauges, counters []string) {
	for _, iv := range s.Data() {
		iv.RLock()
		for k := range iv.Gauges {
			gauges = append(gauges, k)
		}
		for k := range iv.Counters {
			counters = append(counters, k)
		}
		iv.RUnlock()
	}
	slices.Sort(gauges)
	slices.Sort(counters)
	return slices.Compact(gauges), slices.Compact(counters)
}

// TestMetricNames: a real-time wheel reports its Stats to its sink under
// the raftick.wheel.* names the package documentation lists; a virtual
// wheel and a wheel with a BlackholeSink report nothing.
func TestMetricNames(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	cfg := wheel.DefaultConfig()
	cfg.Metrics, cfg.MetricsInterval = sink, time.Millisecond
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	defer w.Stop()

	quiet := metrics.NewInmemSink(time.Hour, time.Hour)
	vcfg := wheel.DefaultConfig()
	vcfg.Metrics, vcfg.MetricsInterval = quiet, time.Millisecond
	v, err := wheel.NewVirtual(vcfg)
	require.NoError(t, err)
	defer v.Stop()
	_, err = v.AfterFunc(time.Millisecond, func() {})
	require.NoError(t, err)
	v.RunUntilIdle()

	fired := make(chan struct{})
	_, err = w.AfterFunc(time.Millisecond, func() { close(fired) })
	require.NoError(t, err)
	<-fired
	_, err = w.AfterFunc(time.Hour, func() {}) // one pending
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		gauges, counters := sinkNames(sink)
		return slices.Contains(counters, "raftick.wheel.fired") && slices.Contains(counters, "raftick.wheel.scheduled") &&
			slices.Contains(gauges, "raftick.wheel.pending")
	}, 30*time.Second, time.Millisecond)
	gauges, counters := sinkNames(sink)
	require.Equal(t, []string{"raftick.wheel.max_lateness", "raftick.wheel.pending"}, gauges)
	for _, name := range append(gauges, counters...) {
		require.NoError(t, msink.CheckName(name, "wheel"))
	}
	for _, c := range counters {
		require.Contains(t, []string{"raftick.wheel.scheduled", "raftick.wheel.fired", "raftick.wheel.cancelled",
			"raftick.wheel.rejected", "raftick.wheel.panics", "raftick.wheel.late_fires", "raftick.wheel.wakeups"}, c)
	}
	g, c := sinkNames(quiet)
	require.Empty(t, append(g, c...), "a virtual wheel reports nothing")

	cfg.MetricsInterval = -1
	_, err = wheel.New(cfg)
	require.ErrorIs(t, err, wheel.ErrInvalidConfig)
	require.ErrorContains(t, err, "MetricsInterval -1ns: must be >= 0")
}

// TestSharedWheelGoleakName pins the goroutine name the package
// documentation gives goleak users: the shared wheel's driver runs forever,
// and this is the one ignore it needs.
func TestSharedWheelGoleakName(t *testing.T) {
	fired := make(chan struct{})
	_, err := wheel.Shared().AfterFunc(time.Millisecond, func() { close(fired) })
	require.NoError(t, err)
	<-fired
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/raftick/raftick/wheel.(*Wheel).drive"))
}

// stoppedWheel makes a real-time wheel that reports metrics every hour,
// runs a timer on it if started, stops it and returns a weak pointer to
// it (made in a function of its own, so that no variable of the caller
// keeps the wheel).
func stoppedWheel(t *testing.T, started bool) weak.Pointer[wheel.Wheel] {
	cfg := wheel.DefaultConfig()
	cfg.Metrics = metrics.NewInmemSink(time.Hour, time.Hour)
	cfg.MetricsInterval = time.Hour
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	if started {
		fired := make(chan struct{})
		_, err := w.AfterFunc(0, func() { close(fired) })
		require.NoError(t, err)
		<-fired
	}
	w.Stop()
	<-w.Done()
	return weak.Make(w)
}

// TestStoppedWheelIsGarbage: a stopped wheel is collectable right after
// Stop. Its metrics timer used to hold it until the timer next fired (a
// second later by default; 10,000 wheels created and stopped held
// hundreds of MiB meanwhile).
//
// Done is closed just before the driver goroutine returns, so the
// goroutine's frame may still hold the wheel for a moment on a loaded
// machine: the test collects until the wheel is gone, up to a deadline
// far beyond any scheduling delay (a timer that keeps it would hold it
// for the hour of its metrics interval).
func TestStoppedWheelIsGarbage(t *testing.T) {
	for _, started := range []bool{false, true} {
		p := stoppedWheel(t, started)
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			if p.Value() == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("started %v: the stopped wheel is still reachable 10s after Stop", started)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
