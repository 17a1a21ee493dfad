package repeated

import (
	"errors"
	"fmt"
	"math/rand/v2"
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
// Any positive timeout is accepted: a virtual wheel fires at exact
// deadlines, down to the nanosecond. On a real-time wheel a timeout below
// the wheel's tick fires up to a tick late, so the timer recurs at the
// tick's pace; the election and multiraft configurations, whose timers
// must keep their period, refuse such durations (election.MinPeriod,
// election.MinElectionTimeout, the wheel's tick).
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

func (t *Timer) disarmLocked() {
	if t.is(fArmed) {
		t.flags &^= fArmed
		t.wt.Stop()
	}
}

// A Timer is at most 128 bytes (two cache lines; see Timer).
var _ [128 - unsafe.Sizeof(Timer{})]struct{}
