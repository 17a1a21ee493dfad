package repeated

import (
	"fmt"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/raftick/raftick/wheel"
)

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

// fire finds its Timer from the wheel timer, the Timer's first field.
var _ [-unsafe.Offsetof(Timer{}.wt)]struct{}
