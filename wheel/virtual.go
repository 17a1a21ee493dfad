package wheel

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/internal/invariants"
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
// that schedules timers, and drive time with the methods below. The timers
// may be used from any goroutine; time is advanced by one goroutine at a
// time.
//
// Advances must not overlap: AdvanceTo, AdvanceBy, AdvanceToNext or
// RunUntilIdle called while another advance of the same wheel is under
// way panics with a message saying so, whichever goroutine calls it. That
// covers a callback advancing its own wheel, directly or through an
// Executor that runs it on another goroutine while the advance waits for
// it, which would otherwise wait forever for the advance that runs it. A
// callback may schedule, reset and stop timers, and read Now and
// NextDeadline; to act later, it schedules a timer.
//
// An advance fires every deadline it passes, exactly, so its work is the
// number of those deadlines: a timer re-armed every nanosecond fires a
// billion times per second of virtual time, and a callback that re-arms
// its own timer at once (Reset(0)) keeps its advance at that instant for
// ever. (A real-time wheel fires such a timer at most once per round of
// its driver, which sleeps between rounds.) Validate periods where they
// come from.
type Virtual struct {
	*Wheel
	// advancing is set for the duration of an advance (AdvanceTo, which
	// the other advances call) and cleared when it returns or unwinds:
	// an advance that finds it set refuses to start.
	advancing atomic.Bool
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
// nothing. Called while another advance of v is under way (from one of
// v's callbacks, or from another goroutine), it panics.
func (v *Virtual) AdvanceTo(t time.Duration) int {
	if !v.advancing.CompareAndSwap(false, true) {
		panic(ErrOverlappingAdvance)
	}
	defer v.advancing.Store(false)
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
		if invariants.Enabled {
			w.checkLocked()
		}
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

// ErrOverlappingAdvance is what an advance of a virtual wheel panics with
// when another advance of the wheel is under way (see Virtual).
var ErrOverlappingAdvance = errors.New("wheel: a virtual wheel was advanced (AdvanceTo, AdvanceBy, AdvanceToNext or RunUntilIdle) while another advance of it was under way, from one of its timer callbacks or from another goroutine; advances must not overlap (a callback schedules a timer instead)")
