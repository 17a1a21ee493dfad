package wheel

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"
)

// Timer locations (Timer.loc).
const (
	locNone  uint8 = iota // not linked anywhere
	locSlot               // in a slot's bucket
	locReady              // has a live entry in the ready heap
	locLane               // queued in a lane (see lane.go); slot is the lane's index
)

// A Timer runs a callback once at a deadline on a Wheel. It is meant to be
// embedded in the caller's struct and reused: after Init, Reset and Stop do
// not allocate. A Timer must not be copied after first use. The zero Timer is
// idle and not yet bound to a wheel: until Init, TryReset returns
// ErrNotInitialized and schedules nothing, Reset does the same and returns
// false, and Stop returns false. Such a Reset is a programming error that
// no wheel can count, so it is logged to DefaultLogger with the caller's
// stack (the 1st, 2nd, 4th, 8th... such Reset in the process).
//
// Deadlines are kept exact; the wheel's tick only decides how timers are
// bucketed. Reset that moves a pending timer's deadline later, the path a
// Raft follower takes on every heartbeat, takes no lock on a real-time wheel:
// it stores the new deadline and the timer is re-bucketed lazily when its old
// bucket comes due.
type Timer struct {
	// The driver's visit of a timer it re-buckets (the heartbeat-pushed
	// election timer, about once per timeout) reads and writes only the
	// first 32 bytes, so that it costs one cache line.

	// due is deadline+1 (ns since the wheel's epoch) while pending, 0 when
	// idle, and dueFiring while the real-time driver runs the timer's
	// callback (idle too, but a Reset may hand the timer back to the
	// driver without the lock). It is the single source of truth for
	// "pending" (due > 0): Stop, firing and the lock-free Reset all change
	// it with compare-and-swap.
	due atomic.Int64
	// slotStart is a time by which the wheel will next examine the timer:
	// the start of its slot, or later when the driver moved the timer to
	// an earlier slot with its chunk (see spliceChunk); its lane's
	// sentinel (<= laneMember, see laneSentinel) while it is queued in a
	// lane; -1 if it is in neither. A pending timer may move its deadline
	// without the lock as long as the new deadline is >= slotStart, or in
	// a lane not before its deadline (see extendOK).
	slotStart atomic.Int64
	// Guarded by w.mu: where the timer is (loc), and if in a slot, which
	// (slot: level<<slotLevelShift | index on the level) and where in its
	// bucket (chunk ch, entry pos); if in a lane, slot is the lane's index.
	// A wheel reads loc of a timer found through a possibly stale entry
	// only after boundTo.
	ch *chunk
	// minReset is SetMinReset's promise, in ticks (0: none), whether f is
	// a NextFunc (kindNext), and SetPeriodic's hint (kindPeriodic).
	// Atomic: any goroutine.
	minReset atomic.Uint32
	slot     uint16
	pos      uint8
	loc      uint8

	// w is the wheel t is bound to, nil before Init. Written only by bind
	// (Init, InitNext), atomically, after unlinking t under the lock of
	// the wheel it was bound to. Read plainly by t's own methods, which
	// must not run concurrently with its Init (its owner's calls are
	// ordered), and atomically (boundTo) by a wheel that reaches t through
	// an entry that may be stale (a ready-heap entry, a collected batch).
	w *Wheel
	// f is the callback: a func() (Init), or a NextFunc stored as one
	// (InitNext, see next); either is a pointer to the function's closure.
	// Written by bind, atomically; read plainly under the lock of the
	// wheel t is bound to, or atomically (loadF) by the driver's walks.
	f func()
	// seq orders timers with equal deadlines by when they were scheduled:
	// the wheel's schedule sequence, stored under its lock, read
	// atomically by the driver and Stop.
	seq atomic.Uint64
}

// maxLevels bounds the levels of any wheel: level 0 indexes level0Bits of
// a tick number, each level above slotBits more, up to 63 bits.
const maxLevels = 1 + (63-level0Bits+slotBits-1)/slotBits

// slotLevelShift places a level above a slot index in Timer.slot: level 0
// has 1<<level0Bits slots, and the levels above fewer.
const slotLevelShift = level0Bits

// where returns the level and slot index of a timer in a slot.
func (t *Timer) where() (lvl, idx int) {
	return int(t.slot >> slotLevelShift), int(t.slot & (1<<slotLevelShift - 1))
}

// Init binds t to wheel w and callback f. The timer starts idle. Init may be
// called again to rebind an idle timer; it returns ErrTimerPending if t is
// pending, ErrNilWheel or ErrNilCallback for nil arguments.
func (t *Timer) Init(w *Wheel, f func()) error {
	if w == nil {
		return ErrNilWheel
	}
	if f == nil {
		return ErrNilCallback
	}
	return t.bind(w, f, false)
}

// A NextFunc is the callback of a Timer bound with InitNext: a periodic
// timer's fire, which also says when the timer fires next.
//
// When t fires, the wheel calls f(t, nil) and re-arms t for the delay f
// returns, as a Reset(d) made as f returns would (d <= 0: t stays idle),
// unless t is pending by then (f, or another goroutine, Reset it: that
// schedule stands) or was rebound. The wheel calls f(t, err) once more, at
// once and on the same goroutine, if the first call panicked (err is a
// *PanicError; the wheel neither logs nor counts it, f does) or if the
// wheel cannot re-arm t (ErrStopped, ErrTooManyPending); it ignores what
// that second call returns, and logs and counts a panic in it.
type NextFunc func(t *Timer, err error) time.Duration

// A PanicError is the panic of a NextFunc's fire, recovered by the wheel
// and handed back to the NextFunc (see NextFunc).
type PanicError struct {
	Value any    // what the callback panicked with
	Stack []byte // the goroutine's stack when it panicked
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("wheel: timer callback panicked: %v", e.Value)
}

// InitNext is Init for a timer that re-arms itself through the delay its
// callback returns, and hears of its own panics (see NextFunc). The
// real-time driver runs such a timer's periodic cycle with no recover of
// its own around the callback and no Reset back into the wheel. Since f
// gets t, f can be a plain function, rather than a closure allocated per
// timer, that finds the struct t is embedded in.
func (t *Timer) InitNext(w *Wheel, f NextFunc) error {
	if w == nil {
		return ErrNilWheel
	}
	if f == nil {
		return ErrNilCallback
	}
	return t.bind(w, *(*func())(unsafe.Pointer(&f)), true)
}

// boundTo reports whether t is bound to w. A wheel's driver and Stop use
// it on timers found through entries that may be stale (a ready-heap
// entry, a collected batch, a re-armed timer), before they read the rest
// of the timer's placement (loc): a timer rebound away and back since
// had that placement written by the other wheel under the other wheel's
// lock, which w's holder does not hold; bind stores t.w atomically after
// those writes, so a reader that loads w here sees them.
func (t *Timer) boundTo(w *Wheel) bool {
	return atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&t.w))) == unsafe.Pointer(w)
}

// bind is Init with f a NextFunc in disguise if next (see Timer.f).
func (t *Timer) bind(w *Wheel, f func(), next bool) error {
	if old := t.w; old != nil {
		// Rebinding: detach from the old wheel under its lock, which also
		// orders the write of t.w before the old wheel's next look at its
		// stale heap entries for t.
		old.mu.Lock()
		defer old.mu.Unlock()
		if t.due.Load() > 0 {
			return ErrTimerPending
		}
		// Rebound from inside its own callback: the old driver must not
		// take a Reset meant for the new binding.
		t.due.CompareAndSwap(dueFiring, 0)
		old.unlink(t)
	}
	t.slotStart.Store(-1)
	// Stored atomically, after the old wheel's unlink: see boundTo.
	atomic.StorePointer((*unsafe.Pointer)(unsafe.Pointer(&t.w)), unsafe.Pointer(w))
	// Stored atomically: the driver's walks read it without the lock,
	// just before they claim a timer (see loadF).
	atomic.StorePointer((*unsafe.Pointer)(unsafe.Pointer(&t.f)), *(*unsafe.Pointer)(unsafe.Pointer(&f)))
	t.minReset.And(^uint32(kindPeriodic))
	if next {
		t.minReset.Or(kindNext)
	} else {
		t.minReset.And(^uint32(kindNext))
	}
	return nil
}

// Reset schedules t to fire d from now (d <= 0: due at once), whether or not
// it is pending, and reports whether it was pending, as time.Timer.Reset
// does. If the timer cannot be scheduled (wheel stopped, MaxPending reached,
// t not initialized) Reset also returns false and leaves it idle: callers
// that must tell "was idle, now scheduled" from "could not schedule" use
// TryReset, which returns the reason. A rejection is never silent: the
// wheel counts it in Stats.Rejected (and raftick.wheel.rejected) and logs
// it as a warning (the 1st, 2nd, 4th, 8th... rejection, so a storm cannot
// flood the log). Reset may be called from any goroutine, including from
// t's own callback.
func (t *Timer) Reset(d time.Duration) bool {
	pending, _ := t.reset(d, true)
	return pending
}

// TryExtend is Reset for a pending timer where that takes no lock: t is
// pending on a real-time wheel and the new deadline, d from now, is not
// before the start of the slot the wheel last located t in (which is not
// before the slot t waits in; a later deadline, such as a heartbeat's,
// always qualifies; see SetMinReset). Then it records the new
// deadline, as Reset would, and returns true. Otherwise it changes nothing
// and returns false, and Reset or TryReset does the work; in particular it
// never schedules a timer that is not pending (stopped, fired, or running
// its callback).
//
// A layer that keeps state of its own next to t (package repeated) uses it
// to re-arm without taking its own lock: a true result means t was
// pending, so nothing that stops t under that layer's lock ran between.
func (t *Timer) TryExtend(d time.Duration) bool {
	w := t.w
	if w == nil || w.virtual {
		return false
	}
	old := t.due.Load()
	if old <= 0 {
		return false
	}
	// TryReset's lock-free path, written out in both: a call of a shared
	// helper (too big for Go to inline) cost 10-40 % of a 10 ns Reset.
	when, ok := w.coarseDeadline(d)
	if !ok {
		when = w.scheduleDeadline(d)
	}
	s := t.slotStart.Load()
	if extendHook != nil {
		extendHook(t)
	}
	if !extendOK(s, when, old) || !t.due.CompareAndSwap(old, when+1) {
		return false
	}
	if s2 := t.slotStart.Load(); s2 != s && !extendOK(s2, when, when+1) {
		w.fixup(t)
	}
	return true
}

// extendHook, nil outside tests, runs in TryExtend and in Reset's
// lock-free path for a pending timer between the load of t's slot start
// and the swap of its deadline: a test sets it to re-bucket t there, as
// the driver may, and so reaches the repair (fixup) that follows the swap.
var extendHook func(*Timer)

// extendOK reports whether a pending timer with deadline old-1 whose
// published slot start is s may move its deadline to when without the
// lock: in a slot, when is not before the slot's start (the driver looks
// at the timer by then); in a lane, when is not before its deadline (the
// lane's driver reaches it by its queued deadline, which is not after
// old-1). Anything else (-1: being moved, or not linked) needs the lock.
func extendOK(s, when, old int64) bool {
	if s >= 0 {
		return when >= s
	}
	return s <= laneMember && when+1 >= old
}

// TryReset is Reset that also returns why a timer could not be scheduled:
// ErrNotInitialized, ErrStopped or ErrTooManyPending.
func (t *Timer) TryReset(d time.Duration) (wasPending bool, err error) {
	return t.reset(d, false)
}

// reset is TryReset; with warn, Reset's, it also logs a rejection (see
// Wheel.resetResult). Reset and TryReset are wrappers small enough for Go to
// inline, and the deadline's common case (coarseDeadline) is inline here:
// a Reset of a timer out of the cache (a heartbeat's, or one of a
// million) waits for that miss, and the fewer calls and instructions it
// takes, the more of the next Resets' misses the processor overlaps with
// it (BenchmarkResetSteady: 88 to 68 ns).
func (t *Timer) reset(d time.Duration, warn bool) (wasPending bool, err error) {
	w := t.w
	if w == nil {
		if warn {
			warnUninitialized()
		}
		return false, ErrNotInitialized
	}
	when, ok := w.coarseDeadline(d)
	if !ok {
		when = w.scheduleDeadline(d)
	}
	if !w.virtual {
		old := t.due.Load()
		switch {
		case old > 0:
			// Lock-free path: a pending timer whose new deadline is not
			// before the start of the slot it sits in just records the
			// deadline (TryExtend is this case alone).
			s := t.slotStart.Load()
			if extendHook != nil {
				extendHook(t)
			}
			if extendOK(s, when, old) && t.due.CompareAndSwap(old, when+1) {
				// If the wheel re-bucketed the timer between our check and
				// the swap, it may now sit in a slot that starts after the
				// new deadline: repair under the lock (rare).
				if s2 := t.slotStart.Load(); s2 != s && !extendOK(s2, when, when+1) {
					w.fixup(t)
				}
				return true, nil
			}
		case old == 0 && w.maxPending == 0:
			// An idle timer still linked where it was stopped (Stop
			// unlinks lazily) whose new deadline is not before that
			// slot's start: schedule it in place, as a push later does.
			if s := t.slotStart.Load(); s >= 0 && when >= s && t.due.CompareAndSwap(0, when+1) {
				w.scheduled.Add(1) // no pending count without MaxPending
				if w.closed.Load() {
					pending, err := w.unschedule(t, when)
					return w.resetResult(warn, pending, err)
				}
				if s2 := t.slotStart.Load(); s2 < 0 || when < s2 {
					w.fixup(t)
				}
				return false, nil
			}
		case old == dueFiring && w.maxPending == 0:
			// The driver is running t's callback (this is typically the
			// callback re-arming its own timer): hand the new schedule to
			// the driver, which places it when the callback returns.
			// (Wheel.rearmNext does the same for a NextFunc's delay.)
			if t.due.CompareAndSwap(dueFiring, when+1) {
				w.scheduled.Add(1) // no pending count without MaxPending
				if w.closed.Load() {
					pending, err := w.unschedule(t, when)
					return w.resetResult(warn, pending, err)
				}
				return false, nil
			}
		}
	}
	pending, err := w.schedule(t, when)
	return w.resetResult(warn, pending, err)
}

// ResetAt schedules t to fire at the time at on its wheel's clock (see
// Wheel.Now; a time already passed: due at once), whether or not it is
// pending, and reports whether it was pending, as Reset does. Reset's deadline is its
// call plus d, on a real-time wheel from a coarse clock: a Reset made
// while a long callback runs, such as a periodic callback re-arming its
// own timer as it begins, may fire up to that callback's length late (see
// the package documentation). ResetAt reads no clock, so its deadline is
// exact, and a periodic callback that computes its deadlines on a grid
// (due += period) keeps its rate. It takes the wheel's lock: it is for a
// tick, not for a hot path like a follower's election timer.
func (t *Timer) ResetAt(at time.Duration) bool {
	pending, _ := t.resetAt(at, true)
	return pending
}

// TryResetAt is ResetAt that also returns why a timer could not be
// scheduled, as TryReset does.
func (t *Timer) TryResetAt(at time.Duration) (wasPending bool, err error) {
	return t.resetAt(at, false)
}

func (t *Timer) resetAt(at time.Duration, warn bool) (wasPending bool, err error) {
	w := t.w
	if w == nil {
		if warn {
			warnUninitialized()
		}
		return false, ErrNotInitialized
	}
	var when int64
	if w.virtual {
		now := w.vnow.Load()
		when = addDeadline(now, at-time.Duration(now))
	} else {
		// Tag 0: an exact deadline, which no epoch's slack delays.
		when = encodeRT(max(int64(at), 0), 0, 0)
	}
	pending, err := w.schedule(t, when)
	return w.resetResult(warn, pending, err)
}

// SetMinReset tells the wheel that every later Reset of t will schedule it
// at least d ahead, as the heartbeat Resets of an election timer drawn from
// [ET, 2ET) are at least ET ahead. It is a hint for speed, never for
// correctness: a real-time wheel then keeps a timer that is far ahead in a
// slot such Resets can push it past without the wheel's lock, and touches
// it about once per d instead of twice as often; a Reset that breaks the
// promise still works (it takes the lock). d <= 0 withdraws the hint.
// SetMinReset returns ErrNotInitialized before Init.
func (t *Timer) SetMinReset(d time.Duration) error {
	w := t.w
	if w == nil {
		return ErrNotInitialized
	}
	ticks := int64(0)
	if d > 0 {
		ticks = min(int64(d)/w.tick, minResetMax)
	}
	for {
		old := t.minReset.Load()
		if t.minReset.CompareAndSwap(old, old&(kindNext|kindPeriodic)|uint32(ticks)) {
			return nil
		}
	}
}

// SetPeriodic tells the wheel whether t, bound with InitNext, re-arms with
// the same delay on every fire: a fixed-delay periodic timer, such as a
// leader's heartbeat or step-down check. It is a hint for speed, never for
// correctness. A real-time wheel keeps the timers that re-arm with one
// delay in a queue of their own, a lane, in the order they re-armed,
// which is the order of their deadlines; its driver walks a lane's front
// as it comes due and puts each re-armed timer back at the end, where a
// timer in a slot would be re-bucketed (see the package documentation). A
// timer whose NextFunc returns another delay, or that is Reset, Stopped
// or rebound, leaves its lane as it would leave a slot. Init and InitNext
// clear the hint. SetPeriodic returns ErrNotInitialized before Init.
func (t *Timer) SetPeriodic(on bool) error {
	if t.w == nil {
		return ErrNotInitialized
	}
	if on {
		t.minReset.Or(kindPeriodic)
	} else {
		t.minReset.And(^uint32(kindPeriodic))
	}
	return nil
}

// SetPrecise tells a real-time wheel whether t is worth a precise
// wake-up: a timer whose callback stands for many timers (a multi-raft
// host's heartbeat tick, which judges thousands of leaders' CheckQuorum).
// While t is the next timer due, or due within a tick of it, the driver
// sleeps on a timerfd where it has one (Linux), which wakes within the
// kernel's timer slack (50µs by default), as it does when its batches
// are big, instead of on the runtime's timers, which wake up to a
// millisecond late. It is a hint for lateness, never for correctness,
// and costs a system call or two per wake-up; a virtual wheel ignores
// it. The wheel keeps the timers hinted until SetPrecise(false), so a
// timer dropped with the hint on stays reachable: clear the hint when
// done with t. SetPrecise returns ErrNotInitialized before Init.
func (t *Timer) SetPrecise(on bool) error {
	w := t.w
	if w == nil {
		return ErrNotInitialized
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.Index(w.precise, t)
	switch {
	case on && i < 0:
		w.precise = append(w.precise, t)
	case !on && i >= 0:
		w.precise = slices.Delete(w.precise, i, i+1)
	}
	return nil
}

// preciseBy reports whether a timer hinted with SetPrecise is pending
// with a deadline by at (a tick of slack). mu held.
func (w *Wheel) preciseBy(at int64) bool {
	for _, t := range w.precise {
		if d := t.due.Load(); d > 0 && d-1 <= at+w.tick {
			return true
		}
	}
	return false
}

// Timer.minReset holds SetMinReset's promise in its low 30 bits, in
// kindNext whether t.f is a NextFunc (InitNext), and in kindPeriodic
// SetPeriodic's hint.
const (
	kindNext     = 1 << 31
	kindPeriodic = 1 << 30
	minResetMax  = kindPeriodic - 1
)

// next returns t's callback as a NextFunc, or nil if t was bound with
// Init. The driver reads it before running the callback, which may
// rebind t.
func (t *Timer) next() NextFunc {
	if t.minReset.Load()&kindNext == 0 {
		return nil
	}
	return asNext(t.loadF())
}

// loadF reads t.f where the wheel's lock is not held: Init may rebind an
// idle timer meanwhile (a timer the driver has claimed is idle). The
// driver's walks read it before they claim t, so that a fire runs the
// callback of the binding whose schedule it claimed.
func (t *Timer) loadF() func() {
	p := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&t.f)))
	return *(*func())(unsafe.Pointer(&p))
}

// asNext returns f, a NextFunc stored as a func() (see Timer.f), as what
// it is.
func asNext(f func()) NextFunc { return *(*NextFunc)(unsafe.Pointer(&f)) }

// endFire ends a fire of t by the real-time driver once its callback has
// returned: t goes idle, unless it is pending again or was taken meanwhile
// (its callback, a NextFunc's delay or another goroutine re-armed it, or
// Stop or Init took it), which endFire reports as true. It looks before
// the compare-and-swap: a periodic timer is re-armed by now, and the swap
// would fail at the price of a locked instruction (about 1 % of a fire,
// BenchmarkDriverPeriodic).
func (t *Timer) endFire() (taken bool) {
	return t.due.Load() != dueFiring || !t.due.CompareAndSwap(dueFiring, 0)
}

// Stop prevents t from firing. It returns true if the call stopped a pending
// timer, false if the timer was idle: already fired (its callback has been
// or is being run), already stopped, or never scheduled. Stop does not wait
// for a running callback. It takes no lock.
func (t *Timer) Stop() bool {
	if _, ok := t.claim(); ok {
		t.w.cancelled.Add(1)
		return true
	}
	return false
}

// claim makes a pending timer idle and returns its deadline.
func (t *Timer) claim() (int64, bool) {
	for {
		due := t.due.Load()
		if due <= 0 {
			return 0, false
		}
		if t.due.CompareAndSwap(due, 0) {
			t.w.addPending(-1)
			return due - 1, true
		}
	}
}

// Pending reports whether t is scheduled and has not yet fired or been
// stopped.
func (t *Timer) Pending() bool { return t.due.Load() > 0 }

// Deadline returns t's deadline on its wheel's clock (see Wheel.Now) and
// true if t is pending, or 0 and false. On a virtual wheel it is exact. On a
// real-time wheel, Reset computes deadlines from a coarse clock that may lag
// or lead real time by up to about a millisecond (see the package
// documentation), so Deadline may differ from the Reset call plus d by
// about that much either way; the timer itself never fires before the
// Reset call plus d.
func (t *Timer) Deadline() (time.Duration, bool) {
	due := t.due.Load()
	if due <= 0 {
		return 0, false
	}
	return time.Duration(due - 1), true
}

// Wheel returns the wheel t is bound to, or nil before Init.
func (t *Timer) Wheel() *Wheel { return t.w }

// The first 32 bytes of a Timer hold what the driver's re-bucketing visit
// touches (see Timer), and Timer.slot has room for every level.
var (
	_ [32 - unsafe.Offsetof(Timer{}.w)]struct{}
	_ [1<<(16-slotLevelShift) - maxLevels]struct{}
)
