package repeated

import (
	"fmt"
	"time"
)

// Stats counts what happened to one Timer since New. All counters only grow.
type Stats struct {
	// Schedules is the number of times the timer was armed on the wheel.
	// Each drew a delay from the jitter policy, but for the Resets of a
	// timer made WithResetKeepsDelay, which reuse the last one.
	Schedules int64
	// Triggers is the number of trigger invocations (wheel fires and
	// RunOnceNow).
	Triggers int64
	// Stale is the number of wheel callbacks ignored because the schedule
	// they belonged to had been replaced, stopped or run by RunOnceNow
	// while the callback was already on its way (real-time wheel only).
	Stale int64
	// Panics is the number of trigger, jitter policy and on-destroy hook
	// panics recovered (see Err).
	Panics int64
	// Clamped is the number of jitter results <= 0 replaced by the base.
	Clamped int64
	// ScheduleErrors is the number of times the wheel refused a schedule
	// (wheel stopped, too many pending timers); the timer stopped each time.
	ScheduleErrors int64
	// Rejected is the number of ResetTimeout calls with a duration <= 0.
	Rejected int64
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

// join returns the count kept as hi and lo (see countTrigger).
func join(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }

// Stats returns a snapshot of the timer's counters.
func (t *Timer) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.c().stats
	st.Schedules = int64(join(t.schedules, t.c().schedulesHi) + t.fastSchedules.Load())
	st.Triggers = int64(join(t.triggers, t.c().triggersHi))
	return st
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
