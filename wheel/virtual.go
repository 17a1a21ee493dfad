package wheel

import (
	"bytes"
	"runtime"
	"sync"
	"time"
)

// Virtual is a Wheel on virtual time: the clock starts at 0 and moves only
// when the caller advances it. Callbacks run synchronously on the goroutine
// that advances time (or are handed to Config.Executor), outside any lock,
// one at a time, in (deadline, schedule order) order, with Now() equal to the
// exact deadline of the timer being fired. A callback may schedule, reset and
// stop timers, including ones due at the current instant, which then fire in
// the same advance.
//
// Embedding *Wheel, a Virtual is used like any wheel: pass v.Wheel to code
// that schedules timers, and drive time with the methods below. Calls that
// advance time are serialized; the timers may be used from any goroutine.
//
// A callback must not advance its own wheel (AdvanceTo, AdvanceBy,
// AdvanceToNext, RunUntilIdle): the advance that runs it is still under
// way. That is a programming error and panics with a message saying so. A
// callback may schedule, reset and stop timers, and read Now and
// NextDeadline.
type Virtual struct {
	*Wheel
	advMu sync.Mutex // serializes advancing
}

// NewVirtual returns a wheel on virtual time, with its clock at 0.
func NewVirtual(cfg Config) (*Virtual, error) {
	w, err := newWheel(cfg, true)
	if err != nil {
		return nil, err
	}
	return &Virtual{Wheel: w}, nil
}

// AdvanceTo moves the clock to t, firing every timer whose deadline is <= t,
// and returns how many fired. A t before Now() does not move the clock back;
// it fires only timers due at Now(). The clock stops at the latest
// representable deadline (math.MaxInt64-1 ns). On a stopped wheel it does
// nothing. Called from a callback of this wheel, it panics.
func (v *Virtual) AdvanceTo(t time.Duration) int {
	if !v.advMu.TryLock() {
		if reentrant() {
			panic("wheel: a callback advanced its own virtual wheel (AdvanceTo, AdvanceBy, AdvanceToNext or RunUntilIdle from inside a timer callback); schedule a timer instead")
		}
		v.advMu.Lock()
	}
	defer v.advMu.Unlock()
	w := v.Wheel
	target := min(max(int64(t), w.vnow.Load()), maxWhen)
	n := 0
	for {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return n
		}
		f, ok := w.popDue(target)
		if !ok {
			w.vnow.Store(target)
			w.moveCursor(target/w.tick + 1)
			w.mu.Unlock()
			return n
		}
		w.vnow.Store(f.when)
		w.mu.Unlock()
		w.invoke(f.t, f.f)
		n++
	}
}

// AdvanceBy moves the clock forward by d (d <= 0: fire what is due now).
func (v *Virtual) AdvanceBy(d time.Duration) int {
	return v.AdvanceTo(time.Duration(v.deadline(d)))
}

// NextDeadline returns the earliest pending deadline, or false if no timer
// is pending.
func (v *Virtual) NextDeadline() (time.Duration, bool) {
	w := v.Wheel
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return 0, false
	}
	e, ok := w.peek(never)
	return time.Duration(e.when), ok
}

// AdvanceToNext moves the clock to the earliest pending deadline and fires
// every timer due at that instant (including ones its callbacks schedule for
// the same instant). It returns how many fired: 0 when nothing is pending.
func (v *Virtual) AdvanceToNext() int {
	next, ok := v.NextDeadline()
	if !ok {
		return 0
	}
	return v.AdvanceTo(next)
}

// RunUntilIdle fires timers in deadline order, moving the clock, until none
// is pending, and returns how many fired. It does not return while callbacks
// keep scheduling new timers (a periodic timer, for example): use AdvanceTo
// with a horizon for those.
func (v *Virtual) RunUntilIdle() int {
	n := 0
	for {
		next, ok := v.NextDeadline()
		if !ok {
			return n
		}
		n += v.AdvanceTo(next)
	}
}

// advanceFrame is how AdvanceTo appears in a stack trace.
var advanceFrame = []byte("wheel.(*Virtual).AdvanceTo(")

// reentrant reports whether the calling goroutine is already inside
// AdvanceTo, that is, whether a callback is advancing its own wheel. It is
// called only when the advance lock is taken, so its cost (a stack trace)
// is paid only by contended or erroneous calls.
func reentrant() bool {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) || len(buf) >= 16<<20 {
			return bytes.Count(buf[:n], advanceFrame) >= 2
		}
		buf = make([]byte, 2*len(buf))
	}
}
