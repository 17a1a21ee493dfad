package wheel

import (
	"sync"
	"time"

	"github.com/raftick/raftick/internal/msink"
)

// DefaultMetricsInterval is how often a real-time wheel reports its
// metrics when Config.MetricsInterval is 0.
const DefaultMetricsInterval = time.Second

// Metric keys; the package documentation lists them.
var (
	keyPending     = []string{"raftick", "wheel", "pending"}
	keyScheduled   = []string{"raftick", "wheel", "scheduled"}
	keyFired       = []string{"raftick", "wheel", "fired"}
	keyCancelled   = []string{"raftick", "wheel", "cancelled"}
	keyRejected    = []string{"raftick", "wheel", "rejected"}
	keyPanics      = []string{"raftick", "wheel", "panics"}
	keyLateFires   = []string{"raftick", "wheel", "late_fires"}
	keyMaxLateness = []string{"raftick", "wheel", "max_lateness"}
	keyWakeups     = []string{"raftick", "wheel", "wakeups"}
)

// reporter reports a real-time wheel's Stats every interval from a runtime
// timer: gauges for the current values, counters for what happened since
// the last report.
type reporter struct {
	w     *Wheel
	sink  msink.Sink
	every time.Duration

	// mu guards the fields below: a report runs under it, and Stop
	// (stopMetrics) stops the runtime timer under it, so that no report
	// re-arms the timer after Stop.
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
	last    Stats
}

// startMetrics starts reporting for a real-time wheel whose configuration
// does not turn metrics off.
func (w *Wheel) startMetrics(cfg Config) {
	if w.virtual {
		return
	}
	s := msink.Resolve(cfg.Metrics)
	if s == nil {
		return
	}
	r := &reporter{w: w, sink: s, every: cfg.MetricsInterval}
	if r.every == 0 {
		r.every = DefaultMetricsInterval
	}
	r.mu.Lock()
	r.t = time.AfterFunc(r.every, r.tick)
	r.mu.Unlock()
	w.reporter = r
}

// stopMetrics stops the wheel's reporting, at once: the runtime timer,
// which holds the reporter and so the wheel, is stopped, so that a
// stopped wheel is garbage as soon as its users drop it, not when the
// timer next fires. Called by Stop.
func (w *Wheel) stopMetrics() {
	r := w.reporter
	if r == nil {
		return
	}
	r.mu.Lock()
	r.stopped = true
	r.t.Stop()
	r.mu.Unlock()
}

// tick reports once and re-arms, until the wheel is stopped.
func (r *reporter) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.report()
	r.t.Reset(r.every)
}

func (r *reporter) report() {
	st := r.w.Stats()
	r.sink.SetGaugeWithLabels(keyPending, float32(st.Pending), nil)
	r.sink.SetGaugeWithLabels(keyMaxLateness, float32(st.MaxLateness)/float32(time.Millisecond), nil)
	for _, c := range [...]struct {
		key       []string
		now, last int64
	}{
		{keyScheduled, st.Scheduled, r.last.Scheduled},
		{keyFired, st.Fired, r.last.Fired},
		{keyCancelled, st.Cancelled, r.last.Cancelled},
		{keyRejected, st.Rejected, r.last.Rejected},
		{keyPanics, st.Panics, r.last.Panics},
		{keyLateFires, st.LateFires, r.last.LateFires},
		{keyWakeups, st.Wakeups, r.last.Wakeups},
	} {
		if d := c.now - c.last; d > 0 {
			r.sink.IncrCounterWithLabels(c.key, float32(d), nil)
		}
	}
	r.last = st
}
