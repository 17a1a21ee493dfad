package wheel

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a wheel's counters. Counters are read one by one, so
// a snapshot taken while timers change may be slightly inconsistent. Once the
// wheel is quiet, Scheduled == Fired + Cancelled + Dropped + Pending.
type Stats struct {
	// Scheduled counts timers that went from idle to pending. Resetting a
	// timer that is already pending moves it without counting.
	Scheduled int64
	// Fired counts callbacks started (or handed to the Executor).
	Fired int64
	// Cancelled counts Timer.Stop calls that prevented a callback.
	Cancelled int64
	// Dropped counts pending timers returned by Wheel.Stop.
	Dropped int64
	// Pending is the number of pending timers. A wheel with MaxPending
	// counts them; without, Pending is Scheduled less the rest, which
	// spares the driver an update per fire and per re-arm.
	Pending int64
	// Rejected counts schedules refused (ErrStopped, ErrTooManyPending).
	Rejected int64
	// Panics counts callbacks that panicked (recovered and logged).
	Panics int64
	// LateFires counts real-time fires later than one tick past the deadline.
	LateFires int64
	// MaxLateness is the largest delay between a real-time timer's deadline
	// and the driver starting it.
	MaxLateness time.Duration
	// Wakeups counts real-time driver wake-ups from sleep.
	Wakeups int64
}

// Stats returns a snapshot of w's counters.
func (w *Wheel) Stats() Stats {
	return Stats{
		Scheduled:   w.scheduled.Load(),
		Fired:       w.fired.Load(),
		Cancelled:   w.cancelled.Load(),
		Dropped:     w.dropped.Load(),
		Pending:     w.pendingNow(),
		Rejected:    w.rejected.Load(),
		Panics:      w.panics.Load(),
		LateFires:   w.lateFires.Load(),
		MaxLateness: time.Duration(w.maxLate.Load()),
		Wakeups:     w.wakeups.Load(),
	}
}

// warnRejected logs a rejected Reset (err says why) at the 1st, 2nd, 4th,
// 8th... rejection of the wheel's life.
func (w *Wheel) warnRejected(err error) {
	if n := w.rejected.Load(); n > 0 && n&(n-1) == 0 {
		w.log.Warn("timer could not be scheduled", "error", err, "rejected_so_far", n)
	}
}

// resetResult returns a Reset's result, logging its rejection if warn (see
// warnRejected).
func (w *Wheel) resetResult(warn, pending bool, err error) (bool, error) {
	if warn && err != nil {
		w.warnRejected(err)
	}
	return pending, err
}

// addPending counts d timers becoming pending (d < 0: no longer pending).
// Only a wheel with MaxPending keeps the count, which admission needs
// exact; without, Stats derives it from the other counters (pendingNow),
// so that a fire and the re-arm of its timer each make one atomic update
// on the driver's path, not two.
func (w *Wheel) addPending(d int64) {
	if w.maxPending > 0 {
		w.pending.Add(d)
	}
}

// pendingNow returns the number of pending timers: counted on a wheel with
// MaxPending, else what was scheduled less what fired, was cancelled or
// dropped, read in that order so that a snapshot taken while timers change
// errs high rather than negative (every timer is counted scheduled before
// anything else).
func (w *Wheel) pendingNow() int64 {
	if w.maxPending > 0 {
		return w.pending.Load()
	}
	gone := w.fired.Load() + w.cancelled.Load() + w.dropped.Load()
	return max(0, w.scheduled.Load()-gone)
}

// uninitializedResets counts the Resets of Timers never bound to a wheel
// (see Timer), in the whole process.
var uninitializedResets atomic.Int64

// warnUninitialized logs a Reset of a Timer never bound to a wheel: the
// 1st, 2nd, 4th, 8th... of the process, with the caller's stack.
func warnUninitialized() {
	if n := uninitializedResets.Add(1); n&(n-1) == 0 {
		DefaultLogger().Error("Reset of a wheel.Timer that was never initialized (call Init or InitNext first); nothing was scheduled",
			"resets", n, "stack", string(debug.Stack()))
	}
}
