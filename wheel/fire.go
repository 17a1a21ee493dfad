package wheel

import (
	"runtime/debug"
	"time"
)

// firingNow is the fire a driver's walk is in, for its recover: the timer
// whose callback runs (nil: none) and, if the callback is a NextFunc, the
// callback.
type firingNow struct {
	t    *Timer
	next NextFunc
}

// fireClaimed runs the callback f of timer t, which the driver just
// claimed, late by late: on the Executor if there is one, else here,
// without a recover of its own (the driver's walk recovers a panic, see
// transitPass), recording the fire in fs meanwhile. A NextFunc's delay
// re-arms t (rearmNext). The fire is counted before the callback starts:
// Stats.Fired counts callbacks started, and a callback that reads Stats
// does not find its own timer pending.
//
// If a NextFunc re-armed t and t is marked SetPeriodic, fireClaimed returns
// the delay (period, ns) and the deadline it re-armed t with, for the
// driver to queue t in the lane of that period; else 0 and -1.
func (w *Wheel) fireClaimed(fs *firingNow, t *Timer, f func(), late int64) (period, when int64) {
	w.addPending(-1)
	w.fired.Add(1)
	w.noteLateness(late)
	if w.exec != nil {
		w.invoke(t, f)
		return 0, -1
	}
	fs.t = t
	when = -1
	if kind := t.minReset.Load(); kind&kindNext != 0 {
		next := asNext(f)
		fs.next = next
		if d := next(t, nil); d > 0 {
			if when = w.rearmNext(next, t, d); when >= 0 && kind&kindPeriodic != 0 {
				period = int64(d)
			} else {
				when = -1
			}
		}
	} else {
		f()
	}
	*fs = firingNow{}
	return period, when
}

// rearmNext re-arms t, whose NextFunc next returned d > 0 from the fire
// the driver is ending (t's due is still dueFiring unless t was Reset or
// rebound meanwhile), as a Reset from the callback would (see
// Timer.TryReset), and tells next if the wheel refuses. It returns the
// deadline it re-armed t with as a schedule handed to the driver, or -1
// (not re-armed, or re-armed through the lock).
func (w *Wheel) rearmNext(next NextFunc, t *Timer, d time.Duration) int64 {
	if w.maxPending == 0 {
		// TryReset's hand-off to the driver, written out again: a shared
		// function is not inlined, and the call cost 2 % of a fire
		// (DriverPeriodic). It differs in taking only a timer still
		// firing.
		when, ok := w.coarseDeadline(d)
		if !ok {
			when = w.scheduleDeadline(d)
		}
		if !t.due.CompareAndSwap(dueFiring, when+1) {
			return -1 // Reset or rebound during the callback: that stands
		}
		w.scheduled.Add(1)
		if w.closed.Load() {
			if _, err := w.unschedule(t, when); err != nil {
				w.tellNext(next, t, err)
			}
			return -1
		}
		return when
	}
	// A MaxPending wheel counts the schedule under its lock.
	if t.due.CompareAndSwap(dueFiring, 0) {
		if _, err := t.TryReset(d); err != nil {
			w.tellNext(next, t, err)
		}
	}
	return -1
}

// endPanicked ends a fire whose callback panicked with r, recovered by a
// driver's walk: a NextFunc hears of it, any other panic is logged and
// counted. r is nil for runtime.Goexit.
func (w *Wheel) endPanicked(fs *firingNow, r any) {
	t, next := fs.t, fs.next
	*fs = firingNow{}
	switch {
	case r == nil:
	case next != nil:
		w.tellNext(next, t, &PanicError{Value: r, Stack: debug.Stack()})
	default:
		w.notePanic(r)
	}
}

// tellNext calls NextFunc next of t with err (see NextFunc), recovering,
// logging and counting a panic of that call.
func (w *Wheel) tellNext(next NextFunc, t *Timer, err error) {
	defer func() {
		if r := recover(); r != nil {
			w.notePanic(r)
		}
	}()
	next(t, err)
}

// callNext runs the fire of t through its NextFunc next off the driver's
// walks (on a virtual wheel, or as an Executor's Task), t claimed and not
// pending: the delay next returns re-arms t unless t is pending by then or
// was rebound.
func (w *Wheel) callNext(next NextFunc, t *Timer) {
	d, perr := w.runNext(next, t)
	if perr != nil {
		w.tellNext(next, t, perr)
		return
	}
	if d > 0 && t.boundTo(w) && !t.Pending() {
		if _, err := t.TryReset(d); err != nil {
			w.tellNext(next, t, err)
		}
	}
}

// runNext calls next(t, nil), recovering a panic as a *PanicError.
func (w *Wheel) runNext(next NextFunc, t *Timer) (d time.Duration, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			d, perr = 0, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return next(t, nil), nil
}

// noteLateness records how late a real-time fire was.
func (w *Wheel) noteLateness(late int64) {
	if late > w.tick {
		w.lateFires.Add(1)
	}
	for {
		m := w.maxLate.Load()
		if late <= m || w.maxLate.CompareAndSwap(m, late) {
			return
		}
	}
}

// run calls f, recovering and counting a panic.
func (w *Wheel) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			w.notePanic(r)
		}
	}()
	f()
}

// notePanic counts a callback's panic, recovered as r, and logs the 1st,
// 2nd, 4th, 8th, ... of the wheel with its stack, so that a callback that
// panics on every fire neither floods the log nor makes the driver late.
func (w *Wheel) notePanic(r any) {
	if n := w.panics.Add(1); n&(n-1) == 0 {
		w.log.Error("timer callback panicked", "panic", r, "panics", n, "stack", string(debug.Stack()))
	}
}

// invoke runs the callback f of t, claimed and not pending, on the
// executor if any, else here (virtual wheel).
func (w *Wheel) invoke(t *Timer, f func()) {
	next := t.next()
	switch {
	case w.exec != nil:
		task := Task{w: w, f: f}
		if next != nil {
			task.t = t
		}
		w.exec(task)
	case next != nil:
		w.callNext(next, t)
	default:
		w.run(f)
	}
}
