package repeated

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/internal/randsrc"
	"github.com/raftick/raftick/wheel"
)

// Errors returned by New and TryResetTimeout, and recorded by Err.
var (
	// ErrNilWheel is returned by New when the wheel is nil.
	ErrNilWheel = errors.New("repeated: nil wheel")
	// ErrNilTrigger is returned by New when the trigger is nil.
	ErrNilTrigger = errors.New("repeated: nil trigger")
	// ErrInvalidTimeout is returned for a base timeout <= 0.
	ErrInvalidTimeout = errors.New("repeated: timeout must be positive")
	// ErrDestroyed is returned by Start, Restart, Reset and
	// TryResetTimeout after Destroy.
	ErrDestroyed = errors.New("repeated: destroyed")
	// ErrNotRunning is returned by Reset on a stopped timer, which Reset
	// does not start.
	ErrNotRunning = errors.New("repeated: timer not running")
	// ErrNotInitialized is returned by Start, Restart and
	// TryResetTimeout on a zero Timer that neither New nor Init made.
	ErrNotInitialized = errors.New("repeated: timer not initialized (use New or Init)")
	// ErrInitialized is returned by Init on a Timer initialized before
	// (by New or Init).
	ErrInitialized = errors.New("repeated: timer already initialized")
)

// Stats counts what happened to one Timer since New. All counters only grow.
type Stats struct {
	// Schedules is the number of times the timer was armed on the wheel.
	// Each drew a delay from the jitter policy, but for the Resets of a
	// timer made WithResetKeepsDelay, which reuse the last one.
	Schedules uint64
	// Triggers is the number of trigger invocations (wheel fires and
	// RunOnceNow).
	Triggers uint64
	// Stale is the number of wheel callbacks ignored because the schedule
	// they belonged to had been replaced, stopped or run by RunOnceNow
	// while the callback was already on its way (real-time wheel only).
	Stale uint64
	// Panics is the number of trigger, jitter policy and on-destroy hook
	// panics recovered (see Err).
	Panics uint64
	// Clamped is the number of jitter results <= 0 replaced by the base.
	Clamped uint64
	// ScheduleErrors is the number of times the wheel refused a schedule
	// (wheel stopped, too many pending timers); the timer stopped each time.
	ScheduleErrors uint64
	// Rejected is the number of ResetTimeout calls with a duration <= 0.
	Rejected uint64
}

// Timer is a repeating timer on a wheel: once started it calls its trigger,
// waits a (jittered) timeout, calls it again, and so on, until stopped or
// destroyed. The timeout is measured from when the previous trigger
// returned (fixed delay, not fixed rate), and each schedule is randomized
// by the timer's Jitter policy. See the package documentation for the
// semantics in detail.
//
// All methods are safe for concurrent use and may be called from inside any
// trigger, including the timer's own; none of them waits for a running
// trigger to return. A Timer must not be copied.
type Timer struct {
	// The fields the heartbeat Reset and the fire-and-re-arm cycle touch
	// come first, next to the embedded wheel timer, and the whole Timer is
	// 128 bytes: with 100k groups almost every Reset and fire is a cache
	// (and TLB) miss, and the groups' timers, kept in slices, are read in
	// order, so that their size is what the driver and the heartbeat path
	// stream through. What only errors, accessors, Stats and uncommon
	// jitter policies read is in the cold state.
	wt wheel.Timer // the single wheel schedule, bound once to fire (InitNext); first: fire finds t from it
	// fastSchedules counts the schedules made by the lock-free Reset: on
	// the wheel timer's line, which that Reset writes anyway.
	fastSchedules atomic.Uint64

	mu sync.Mutex
	// flags: fRunning, fArmed, fInvoking, fFirst, fDestroyed, fHookDone,
	// fKeepDelay (see there).
	flags uint8
	// consecutive counts triggers since the last Start/Restart; triggers
	// and schedules are Stats.Triggers and the schedules made under mu
	// (the others are fastSchedules). Each holds the low 32 bits of its
	// count, the cold state the high bits (see countTrigger).
	consecutive, triggers, schedules uint32
	// timeout is the base timeout handed to the jitter policy, and span
	// says how a schedule draws its delay from it: the timeout itself
	// (span 0), the timeout plus a uniform draw from [0, span) keyed by
	// key (span > 0), or the policy's Next with the cold state's source
	// (spanPolicy). Written under mu; read without it by the lock-free
	// Reset (see Reset), hence atomic.
	timeout, span atomic.Int64
	trigger       func() // immutable after New
	// key keys the timer's uniform draws (see uniformDraw): kept inside
	// the timer, so that a schedule reads no memory outside it. Immutable
	// after Init.
	key uint64

	// Set by Init; nil in a zero Timer.
	cold *coldState
}

// Timer.flags.
const (
	// fRunning: started and neither stopped nor destroyed. A running timer
	// is armed, or invoking (it arms when the trigger returns), or has
	// failed to schedule (see coldState.err, which then clears fRunning).
	fRunning uint8 = 1 << iota
	// fArmed: wt holds the one live schedule of this timer. Never set
	// while invoking: re-arming during a trigger is deferred to its end.
	fArmed
	// fInvoking: a trigger is running (from a fire or RunOnceNow).
	fInvoking
	// fFirst: the next schedule is the first since Start/Restart.
	fFirst
	fDestroyed
	fHookDone
	// fKeepDelay: WithResetKeepsDelay (set by Init, never cleared); kept
	// here, not only in the cold state, so that a draw of the other
	// timers (a step-down timer's re-arm per fire) reads nothing outside
	// the timer.
	fKeepDelay
)

// is reports whether flag f is set. mu held.
func (t *Timer) is(f uint8) bool { return t.flags&f != 0 }

// spanPolicy in Timer.span: schedules draw through the policy's Next.
// Below it, Timer.span holds a kept delay (see keptSpan).
const spanPolicy = -1

// keptSpan is what Timer.span holds for a WithResetKeepsDelay timer whose
// last schedule's delay is d > 0: -2-d, below spanPolicy, so that the
// lock-free Reset reads the delay where the others read their span.
func keptSpan(d time.Duration) int64 { return -2 - int64(d) }

// setTimeout sets the base timeout to d and how schedules draw their
// delay (Timer.span) for the timer's policy: the built-in policies that
// draw a uniform delay (Proportional, UniformExtra) are computed inline,
// from the timer's key; other policies, and any policy with a source of
// the caller's (WithRand), go through Next. A WithResetKeepsDelay
// timer's Resets take the lock until its next schedule draws (its kept
// delay is of the old timeout). mu held, or Init.
func (t *Timer) setTimeout(d time.Duration) {
	span := time.Duration(spanPolicy)
	if !t.cold.rngGiven {
		switch j := t.cold.jitter.(type) {
		case none:
			span = 0
		case proportional:
			span = clampSpan(d, j.span(d))
		case uniformExtra:
			span = clampSpan(d, j.max)
		}
	}
	t.timeout.Store(int64(d))
	if t.is(fKeepDelay) {
		c := t.cold
		c.span, c.kept = span, 0
		span = spanPolicy
	}
	t.span.Store(int64(span))
}

// drawSpan returns how a schedule draws its delay (see Timer.span). mu
// held, or Init.
func (t *Timer) drawSpan() time.Duration {
	if t.is(fKeepDelay) {
		return t.cold.span
	}
	return time.Duration(t.span.Load())
}

// countTrigger and countSchedule count a trigger (also in consecutive) and
// a schedule, carrying into the cold state only when the low 32 bits wrap,
// so that the common case reads nothing outside the timer. mu held.
func (t *Timer) countTrigger() {
	if t.consecutive++; t.consecutive == 0 {
		t.cold.consecutiveHi++
	}
	if t.triggers++; t.triggers == 0 {
		t.cold.triggersHi++
	}
}

func (t *Timer) countSchedule() {
	if t.schedules++; t.schedules == 0 {
		t.cold.schedulesHi++
	}
}

// uniformDraw returns the uniform draw from [0, n), n > 0, of the
// schedule with index i of a timer keyed by key: the i-th output of
// SplitMix64 seeded with key, reduced to [0, n) by multiplying and keeping
// the high word (Lemire's method), with rejection, so without bias. A
// draw is a function of (key, i): it needs no state but the index, so
// that the lock-free Reset can draw without a lock (see Reset).
// Schedules made under the lock and by the lock-free Reset take their
// indexes from two counters, in disjoint halves of the index space
// (lockedDraw sets the top bit).
func uniformDraw(key, i uint64, n int64) int64 {
	un := uint64(n)
	x := mix64(key + (i+1)*golden)
	hi, lo := bits.Mul64(x, un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			x = mix64(x + golden)
			hi, lo = bits.Mul64(x, un)
		}
	}
	return int64(hi)
}

// golden is SplitMix64's increment, 2^64 divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's output function (a bijection of the 64-bit words).
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// lockedDraw is the index bit of schedules made under the lock (see
// uniformDraw).
const lockedDraw = 1 << 63

// seedKey turns WithSeed's two words (or two from the operating system)
// into a timer's key.
func seedKey(seed [2]uint64) uint64 { return seed[0] ^ mix64(seed[1]+golden) }

// join returns the count kept as hi and lo (see countTrigger).
func join(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }

// coldState is the part of a Timer read only on errors, by accessors and
// by Stats. Guarded by the timer's mu, but for the immutable fields.
type coldState struct {
	// Immutable after Init.
	name      string
	onDestroy func()
	logger    hclog.Logger
	jitter    Jitter
	// rng is the source handed to jitter.Next: WithRand's (rngGiven), or
	// for a policy of its own kind a PCG seeded as WithSeed says.
	rng      *rand.Rand
	rngGiven bool
	// span: for a timer made WithResetKeepsDelay (fKeepDelay), what
	// Timer.span holds for the others; its Timer.span holds its last
	// schedule's delay (see keptSpan) once it has one and its policy is
	// built in.
	span time.Duration
	// kept is an fKeepDelay timer's last schedule's delay, 0 before the
	// first.
	kept time.Duration

	// The high bits of Timer.consecutive, triggers and schedules.
	consecutiveHi, triggersHi, schedulesHi uint32

	err   error
	stats Stats // but Schedules and Triggers, kept in the Timer
}

// zeroCold stands for the cold state of a zero Timer, read only.
var zeroCold = coldState{logger: hclog.NewNullLogger()}

// c returns t's cold state, or zeroCold (which must not be written) for a
// zero Timer.
func (t *Timer) c() *coldState {
	if t.cold == nil {
		return &zeroCold
	}
	return t.cold
}

// New returns a stopped Timer named name on wheel w that calls trigger
// every timeout (as adjusted by the jitter policy) once started. The name
// appears in String and logs. New returns ErrNilWheel, ErrNilTrigger or
// ErrInvalidTimeout (wrapped, naming the timer) for bad input, and a
// wrapped wheel error if the wheel refuses to initialize the timer.
//
// On a virtual wheel the trigger runs on the goroutine advancing the
// wheel; on a real-time wheel it runs on the wheel's driver goroutine or
// wherever the wheel's Executor sends it. Either way at most one trigger of
// a timer runs at a time.
func New(w *wheel.Wheel, name string, timeout time.Duration, trigger func(), opts ...Option) (*Timer, error) {
	t := new(Timer)
	if err := t.Init(w, name, timeout, trigger, opts...); err != nil {
		return nil, err
	}
	return t, nil
}

// Init makes the zero Timer t what New returns, for a Timer embedded in a
// struct of the caller's: a multi-raft host keeps each group's timers in
// the group's own struct, and the groups in one slice, so that the timers
// cost no allocation of their own and the timers of groups visited in
// order (a batch of heartbeats) lie in order in memory. Init returns New's
// errors, and ErrInitialized if t was initialized before. It must not run
// concurrently with any other method of t, and a Timer must not be copied
// after Init.
func (t *Timer) Init(w *wheel.Wheel, name string, timeout time.Duration, trigger func(), opts ...Option) error {
	if t.trigger != nil {
		return fmt.Errorf("%w (timer %q)", ErrInitialized, t.cold.name)
	}
	if w == nil {
		return fmt.Errorf("%w (timer %q)", ErrNilWheel, name)
	}
	if trigger == nil {
		return fmt.Errorf("%w (timer %q)", ErrNilTrigger, name)
	}
	if timeout <= 0 {
		return fmt.Errorf("%w: timer %q has timeout %v", ErrInvalidTimeout, name, timeout)
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if err := ValidateJitter(o.jitter); err != nil {
		return fmt.Errorf("repeated: timer %q: %w", name, err)
	}
	if w.Stopped() {
		return fmt.Errorf("repeated: timer %q: %w", name, wheel.ErrStopped)
	}
	if o.jitter == nil {
		o.jitter = none{}
	}
	if o.logger == nil {
		o.logger = DefaultLogger()
	}
	if err := t.wt.InitNext(w, fire); err != nil {
		return fmt.Errorf("repeated: timer %q: %w", name, err)
	}
	c := &coldState{name: name, onDestroy: o.onDestroy, logger: o.logger, jitter: o.jitter}
	if o.keepDelay {
		t.flags |= fKeepDelay
	}
	seed := o.seed
	switch {
	case o.rng != nil:
		c.rng, c.rngGiven = o.rng, true
	case !o.seeded:
		seed = randsrc.Seed()
	}
	t.cold = c
	t.key = seedKey(seed)
	t.setTimeout(timeout)
	if t.drawSpan() == spanPolicy && c.rng == nil {
		// A policy of its own kind (its Next needs a *rand.Rand), over a
		// PCG seeded with the same words.
		c.rng = rand.New(rand.NewPCG(seed[0], seed[1]))
	}
	t.wt.SetMinReset(minDelay(c.jitter, timeout))
	t.wt.SetPeriodic(fixedDelay(c.jitter))
	t.trigger = trigger // last: marks t initialized
	return nil
}

// Start starts a stopped timer: it schedules the first trigger after the
// jittered timeout, with State.First set and State.Consecutive cleared.
// Start on a running timer does nothing; in particular it does not move
// the pending deadline (use Restart or Reset for that). Start after Destroy
// does nothing. Called while a trigger of this timer is running (for
// example Stop then Start inside the trigger), the schedule is made when
// the trigger returns.
//
// Start returns nil when the timer runs: it is scheduled, was running
// already, or will be scheduled when its running trigger returns. It
// returns ErrDestroyed after Destroy, and the wheel's error (wrapped,
// naming the timer; wheel.ErrStopped or wheel.ErrTooManyPending) when the
// wheel refused the schedule: the timer then stays stopped and Err reports
// the same error.
func (t *Timer) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.is(fDestroyed):
		return ErrDestroyed
	case t.is(fRunning):
		return nil
	}
	return t.startLocked()
}

// Restart (re)starts the timer with a freshly adjusted timeout, whether it
// was running or stopped: any pending deadline is replaced, State.First is
// set and State.Consecutive (the Backoff exponent) is cleared. Restart
// after Destroy does nothing. Inside a trigger of this timer, the schedule
// is made when the trigger returns. Restart returns what Start returns.
func (t *Timer) Restart() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.is(fDestroyed) {
		return ErrDestroyed
	}
	return t.startLocked()
}

func (t *Timer) startLocked() error {
	if t.trigger == nil {
		return ErrNotInitialized
	}
	t.flags |= fRunning
	t.flags |= fFirst
	t.consecutive, t.cold.consecutiveHi = 0, 0
	t.cold.err = nil
	if !t.is(fInvoking) {
		return t.armLocked()
	}
	return nil
}

// Stop stops the timer: the pending trigger, if any, will not run, and a
// trigger running now will not be followed by another. Stop does not wait
// for a running trigger to return: after Stop returns no new trigger
// starts, but one already under way (a wheel fire that had claimed the
// timer, or RunOnceNow on another goroutine) may still be running. Stop on
// a stopped or destroyed timer does nothing. The base timeout is kept for
// the next Start.
func (t *Timer) Stop() {
	t.mu.Lock()
	if !t.is(fDestroyed) && t.is(fRunning) {
		t.flags &^= fRunning
		t.disarmLocked()
	}
	t.mu.Unlock()
}

// Reset re-arms a running timer: the pending deadline is replaced by now
// plus a freshly adjusted base timeout (the heartbeat path of an election
// timer), or with WithResetKeepsDelay by now plus the last schedule's
// delay. State.First and State.Consecutive are left as they are. Reset on
// a stopped or destroyed timer does nothing; while a trigger of this timer
// runs it does nothing either, since the timer re-arms when the trigger
// returns. Reset does not allocate, and on a real-time wheel the Reset of
// an armed timer with a built-in policy (and without WithRand) takes no
// lock.
//
// Reset returns nil when the timer is re-armed (or re-arms when its running
// trigger returns), ErrNotRunning when the timer is stopped, ErrDestroyed
// after Destroy, and the wheel's error (wrapped, naming the timer) when the
// wheel refused the schedule: the timer is then stopped and Err reports
// the same error.
func (t *Timer) Reset() error {
	// The common case, without the lock: an armed timer with a built-in
	// policy whose new deadline the wheel records without its lock
	// (wheel.Timer.TryExtend; a heartbeat's Reset of an election timer).
	// It is written here rather than called: a heartbeat's Reset waits
	// for its timer's cache miss, and the fewer calls it makes the more of
	// the next Resets' misses the processor overlaps with it.
	//
	// Why no lock is needed: TryExtend succeeds only on a pending wheel
	// timer, and everything that makes the timer not armed (Stop, Destroy,
	// a fire, RunOnceNow) stops or claims the wheel timer, so a Reset that
	// succeeds is ordered before it, as a locked Reset would be. The delay
	// is drawn from the timeout and span read before, and only the index
	// of the draw is state (uniformDraw); a timer that keeps its delay
	// (WithResetKeepsDelay) reads it where the others read their span. A
	// ResetTimeout changes the two and then re-arms under the lock (as
	// does a trigger's re-arm of a timer that keeps its delay): if its
	// re-arm came first, the swap wrote a deadline drawn from the old
	// timeout, which the re-check of the two catches, and Reset then
	// re-arms under the lock, after the ResetTimeout.
	if timeout, span := t.timeout.Load(), t.span.Load(); span != spanPolicy {
		d := time.Duration(timeout)
		if span > 0 {
			d += time.Duration(uniformDraw(t.key, t.fastSchedules.Load(), span))
		} else if span < 0 {
			d = time.Duration(-2 - span) // a kept delay (see keptSpan)
		}
		if t.wt.TryExtend(d) {
			t.fastSchedules.Add(1)
			if t.timeout.Load() != timeout || t.span.Load() != span {
				return t.resetChanged()
			}
			return nil
		}
	}
	t.mu.Lock()
	var err error
	switch {
	case t.is(fDestroyed):
		err = ErrDestroyed
	case !t.is(fRunning):
		err = ErrNotRunning
	case !t.is(fInvoking):
		err = t.resetLocked()
	}
	t.mu.Unlock()
	return err
}

// resetLocked re-arms the timer for a Reset: with its last schedule's
// delay if it keeps it (WithResetKeepsDelay), else with a fresh draw. mu
// held.
func (t *Timer) resetLocked() error {
	if t.is(fKeepDelay) && t.cold.kept > 0 {
		t.countSchedule()
		return t.arm(t.cold.kept)
	}
	return t.armLocked()
}

// resetChanged re-arms t under the lock after Reset's lock-free re-arm
// raced with a ResetTimeout (see Reset).
func (t *Timer) resetChanged() (err error) {
	t.mu.Lock()
	if t.is(fArmed) && !t.is(fDestroyed) {
		err = t.resetLocked()
	}
	t.mu.Unlock()
	return err
}

// ResetTimeout sets the base timeout to d and, if the timer is running,
// re-arms it as Reset does. On a stopped timer it only records d, which
// the next Start uses. A d <= 0 is rejected: the call is logged, counted
// in Stats.Rejected and otherwise ignored. After Destroy it does nothing.
// TryResetTimeout reports these cases as errors.
func (t *Timer) ResetTimeout(d time.Duration) {
	if err := t.TryResetTimeout(d); err != nil && !errors.Is(err, ErrDestroyed) {
		t.c().logger.Warn("repeated: ResetTimeout failed", "timer", t.c().name, "error", err)
	}
}

// TryResetTimeout is ResetTimeout with an error: ErrInvalidTimeout
// (wrapped) for d <= 0, ErrDestroyed after Destroy, or the wheel's error
// if re-arming failed (the timer is then stopped; see Err).
func (t *Timer) TryResetTimeout(d time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.trigger == nil {
		return ErrNotInitialized
	}
	if d <= 0 {
		t.cold.stats.Rejected++
		return fmt.Errorf("%w: timer %q: ResetTimeout(%v)", ErrInvalidTimeout, t.cold.name, d)
	}
	if t.is(fDestroyed) {
		return ErrDestroyed
	}
	t.setTimeout(d)
	t.wt.SetMinReset(minDelay(t.cold.jitter, d))
	if t.is(fRunning) && !t.is(fInvoking) {
		return t.armLocked()
	}
	return nil
}

// RunOnceNow runs the trigger now, on the calling goroutine, instead of at
// the pending deadline, which it cancels; when the trigger returns the
// timer re-arms as after any trigger. No lock is held while the trigger
// runs, so the trigger may call the timer's methods. RunOnceNow does
// nothing if the timer is stopped or destroyed, or if a trigger of this
// timer is already running (so calling it from inside its own trigger does
// nothing). A panicking trigger is recovered and logged, as for wheel
// fires.
func (t *Timer) RunOnceNow() {
	t.mu.Lock()
	if t.is(fDestroyed) || !t.is(fRunning) || t.is(fInvoking) {
		t.mu.Unlock()
		return
	}
	t.disarmLocked()
	t.beginLocked()
	t.mu.Unlock()
	t.invoke()
	t.finish()
}

// Destroy stops the timer for good: later Start, Restart, Reset,
// ResetTimeout and RunOnceNow do nothing. Destroy is idempotent and does
// not wait for a running trigger. The on-destroy hook (WithOnDestroy) runs
// exactly once: on this goroutine before Destroy returns if no trigger is
// running, otherwise on the trigger's goroutine right after it returns.
// Destroy releases the timer's wheel schedule; it does not stop the wheel.
func (t *Timer) Destroy() {
	t.mu.Lock()
	if t.is(fDestroyed) {
		t.mu.Unlock()
		return
	}
	t.flags |= fDestroyed
	t.flags &^= fRunning
	t.disarmLocked()
	hook := false
	if !t.is(fInvoking) {
		t.flags |= fHookDone
		hook = true
	}
	t.mu.Unlock()
	if hook {
		t.runHook()
	}
}

// fire is the wheel callback, a wheel.NextFunc: it runs the trigger and
// returns the delay of the next schedule, which the wheel makes as fire
// returns, or 0. The wheel calls it for every schedule that comes due,
// possibly (real-time wheel, executor) after the timer has been re-armed,
// stopped or run by RunOnceNow. A callback belongs to the live schedule
// exactly when the timer is armed and the wheel no longer holds a pending
// schedule for it: re-arming always leaves wt pending again, so a callback
// that finds wt pending belongs to a replaced schedule. Such stale
// callbacks, and any callback while a trigger is running (nothing is armed
// then), are ignored.
//
// The trigger runs with no recover here: the wheel recovers its panic and
// calls fire again with it (a *wheel.PanicError), as it does when it
// cannot make the schedule fire asked for (see fireFailed).
func fire(wt *wheel.Timer, err error) time.Duration {
	t := (*Timer)(unsafe.Pointer(wt))
	if err != nil {
		t.fireFailed(err)
		return 0
	}
	t.mu.Lock()
	if !t.is(fArmed) || t.is(fInvoking) || t.wt.Pending() {
		t.cold.stats.Stale++
		t.mu.Unlock()
		return 0
	}
	t.flags &^= fArmed
	t.beginLocked()
	t.mu.Unlock()
	t.trigger()
	t.mu.Lock()
	d := t.endLocked()
	if d > 0 {
		t.flags |= fArmed // the wheel makes the schedule as fire returns
	}
	hook := t.takeHookLocked()
	t.mu.Unlock()
	if hook {
		t.runHook()
	}
	return d
}

// fire finds its Timer from the wheel timer, the Timer's first field.
var _ [-unsafe.Offsetof(Timer{}.wt)]struct{}

// fireFailed is fire told by the wheel that the trigger it ran panicked
// (it ends the invocation as after any trigger, re-arming a running
// timer), or that the schedule fire asked for was refused (the timer
// stops, as when armLocked fails).
func (t *Timer) fireFailed(err error) {
	if p, ok := err.(*wheel.PanicError); ok {
		t.notePanic("trigger", p)
		t.finish()
		return
	}
	t.mu.Lock()
	if t.is(fArmed) && !t.wt.Pending() {
		t.refuseLocked(err)
	}
	t.mu.Unlock()
}

func (t *Timer) beginLocked() {
	t.flags |= fInvoking
	t.countTrigger()
}

// invoke runs the trigger with no lock held, recovering a panic.
func (t *Timer) invoke() {
	defer t.recoverPanic("trigger")
	t.trigger()
}

// finish ends an invocation (of RunOnceNow, or a fire whose trigger
// panicked): it re-arms a running timer, or runs the on-destroy hook if
// the timer was destroyed during the trigger.
func (t *Timer) finish() {
	t.mu.Lock()
	if d := t.endLocked(); d > 0 {
		t.arm(d)
	}
	hook := t.takeHookLocked()
	t.mu.Unlock()
	if hook {
		t.runHook()
	}
}

// endLocked ends an invocation and returns the delay of the next schedule
// if the timer is to re-arm (running, not destroyed, not re-armed), else
// 0. mu held.
func (t *Timer) endLocked() time.Duration {
	t.flags &^= fInvoking
	if t.is(fDestroyed) || !t.is(fRunning) || t.is(fArmed) {
		return 0
	}
	return t.delayLocked()
}

// takeHookLocked reports whether the on-destroy hook is to run now (the
// timer was destroyed and the hook has not run), and marks it run. mu
// held, after endLocked.
func (t *Timer) takeHookLocked() bool {
	if !t.is(fDestroyed) || t.is(fHookDone) {
		return false
	}
	t.flags |= fHookDone
	return true
}

// armLocked replaces the timer's schedule with one at now plus the
// adjusted timeout. On a wheel error the timer stops and records it.
func (t *Timer) armLocked() error {
	return t.arm(t.delayLocked())
}

// arm replaces the timer's schedule with one d from now. On a wheel error
// the timer stops and records it. mu held.
func (t *Timer) arm(d time.Duration) error {
	if _, err := t.wt.TryReset(d); err != nil {
		return t.refuseLocked(err)
	}
	t.flags |= fArmed
	return nil
}

// refuseLocked stops the timer because the wheel refused its schedule
// with err, and records err. mu held.
func (t *Timer) refuseLocked(err error) error {
	t.flags &^= fArmed
	t.flags &^= fRunning
	c := t.cold
	c.err = fmt.Errorf("repeated: timer %q: %w", c.name, err)
	c.stats.ScheduleErrors++
	c.logger.Error("repeated: cannot schedule; timer stopped", "timer", c.name, "error", err)
	return c.err
}

// delayLocked draws the delay of the next schedule (> 0) and counts the
// schedule. mu held.
func (t *Timer) delayLocked() time.Duration {
	timeout := time.Duration(t.timeout.Load())
	d := timeout
	switch span := t.drawSpan(); {
	case span > 0:
		// The index is the low 32 bits of the count (the stream repeats
		// after 2^32 schedules): a draw reads nothing outside the timer.
		d += time.Duration(uniformDraw(t.key, lockedDraw|uint64(t.schedules), int64(span)))
	case span == spanPolicy:
		c := t.cold
		st := State{First: t.is(fFirst), Consecutive: int(min(join(t.consecutive, c.consecutiveHi), math.MaxInt))}
		d = t.policyNext(timeout, st)
	}
	t.flags &^= fFirst
	t.countSchedule()
	if d <= 0 {
		t.cold.stats.Clamped++
		t.cold.logger.Warn("repeated: jitter returned a non-positive delay; using the base timeout",
			"timer", t.cold.name, "delay", d, "timeout", timeout)
		d = timeout
	}
	if t.is(fKeepDelay) {
		c := t.cold
		// Resets reuse d: tell the wheel that they land d ahead (a hint;
		// one that raced with this still works, see SetMinReset).
		c.kept = d
		t.wt.SetMinReset(d)
		if c.span != spanPolicy {
			t.span.Store(keptSpan(d))
		}
	}
	return d
}

// policyNext returns the delay the timer's policy draws for a schedule of
// base timeout timeout in state st. A panic of the policy is recovered,
// logged, counted and recorded for Err (notePanicLocked), and the
// schedule takes the base timeout: the timer's lock stays held by its
// holder, never by a panic on its way out. mu held.
func (t *Timer) policyNext(timeout time.Duration, st State) (d time.Duration) {
	c := t.cold
	defer func() {
		if r := recover(); r != nil {
			t.notePanicLocked("jitter", &wheel.PanicError{Value: r, Stack: debug.Stack()})
			d = timeout
		}
	}()
	return c.jitter.Next(timeout, st, c.rng)
}

func (t *Timer) disarmLocked() {
	if t.is(fArmed) {
		t.flags &^= fArmed
		t.wt.Stop()
	}
}

func (t *Timer) runHook() {
	onDestroy := t.c().onDestroy
	if onDestroy == nil {
		return
	}
	defer t.recoverPanic("on-destroy hook")
	onDestroy()
}

// recoverPanic must be deferred directly.
func (t *Timer) recoverPanic(what string) {
	if r := recover(); r != nil {
		t.notePanic(what, &wheel.PanicError{Value: r, Stack: debug.Stack()})
	}
}

// notePanic is notePanicLocked for a caller that does not hold mu.
func (t *Timer) notePanic(what string, p *wheel.PanicError) {
	t.mu.Lock()
	t.notePanicLocked(what, p)
	t.mu.Unlock()
}

// notePanicLocked counts panic p, recovered from what (the trigger, the
// jitter policy or the on-destroy hook), records it for Err and logs it
// with its stack: the 1st, 2nd, 4th, 8th... panic of the timer, so that
// a trigger that panics on every fire cannot flood the log. mu held.
func (t *Timer) notePanicLocked(what string, p *wheel.PanicError) {
	c := t.cold
	c.stats.Panics++
	c.err = fmt.Errorf("repeated: timer %q: %s: %w", c.name, what, p)
	if n := c.stats.Panics; n&(n-1) == 0 {
		c.logger.Error("repeated: recovered panic", "timer", c.name, "in", what,
			"panic", p.Value, "panics", n, "stack", string(p.Stack))
	}
}

// Name returns the name given to New.
func (t *Timer) Name() string { return t.c().name }

// Timeout returns the current base timeout (before jitter).
func (t *Timer) Timeout() time.Duration {
	return time.Duration(t.timeout.Load())
}

// IsRunning reports whether the timer is started: Start or Restart was
// called and neither Stop nor Destroy since, and the wheel accepted the
// last schedule. A running timer has a pending deadline or a trigger in
// flight after which it re-arms.
func (t *Timer) IsRunning() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.is(fRunning)
}

// IsStopped reports whether the timer is not running: never started,
// stopped, destroyed, or stopped by a scheduling error (see Err). It is
// always the negation of IsRunning.
func (t *Timer) IsStopped() bool { return !t.IsRunning() }

// IsDestroyed reports whether Destroy was called.
func (t *Timer) IsDestroyed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.is(fDestroyed)
}

// IsInvoking reports whether a trigger of the timer is running now.
func (t *Timer) IsInvoking() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.is(fInvoking)
}

// Deadline returns the wheel time (see wheel.Wheel.Now) at which the
// pending trigger is due, and whether one is pending. It is false while
// stopped and while a trigger runs.
func (t *Timer) Deadline() (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.is(fArmed) {
		return 0, false
	}
	d, _ := t.wt.Deadline()
	return d, true
}

// Err returns the timer's last failure, or nil. A failure is either a
// schedule the wheel refused, which stopped the timer (the wheel's error,
// wrapped with the timer's name), or a panic recovered from the trigger,
// the jitter policy or the on-destroy hook (a *wheel.PanicError, wrapped
// with the timer's name and which of the three panicked; errors.As finds
// it). After a panic the timer goes on: a panicked trigger is followed by
// the next schedule as a returning one is, and a panicked draw schedules
// the base timeout, so a timer whose trigger panics on every fire keeps
// firing every timeout, and Err reports its latest panic. Start and
// Restart clear Err.
func (t *Timer) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c().err
}

// Stats returns a snapshot of the timer's counters.
func (t *Timer) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.c().stats
	st.Schedules = join(t.schedules, t.c().schedulesHi) + t.fastSchedules.Load()
	st.Triggers = join(t.triggers, t.c().triggersHi)
	return st
}

// String describes the timer's name, base timeout, jitter policy and
// state, for logs and debugging.
func (t *Timer) String() string {
	t.mu.Lock()
	state := "stopped"
	switch {
	case t.is(fDestroyed):
		state = "destroyed"
	case t.is(fRunning):
		state = "running"
	}
	timeout, invoking, armed := time.Duration(t.timeout.Load()), t.is(fInvoking), t.is(fArmed)
	var deadline time.Duration
	if armed {
		deadline, _ = t.wt.Deadline()
	}
	t.mu.Unlock()
	next := "none"
	if armed {
		next = deadline.String()
	}
	return fmt.Sprintf("repeated.Timer{name=%q timeout=%v jitter=%v state=%s invoking=%t next=%s}",
		t.c().name, timeout, t.c().jitter, state, invoking, next)
}

// A Timer is at most 128 bytes (two cache lines; see Timer).
var _ [128 - unsafe.Sizeof(Timer{})]struct{}
