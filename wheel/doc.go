// Package wheel is a hierarchical timing wheel shared by many timers, with two
// drivers: real time for production and virtual time for simulation and tests.
//
//	w := wheel.Shared() // one process-wide real-time wheel; wheel.NewVirtual in tests
//	var t wheel.Timer   // embed it in your struct; no allocation after Init
//	err := t.Init(w, func() { fmt.Println("fired") })
//	_, err = t.TryReset(150 * time.Millisecond) // arm, or re-arm on every heartbeat
//	t.Stop()
//
// See ExampleNew for a real-time wheel, ExampleVirtual for virtual time and
// package repeated for a repeating, jittered timer on top of this one.
//
// # One wheel, two drivers
//
// A Wheel is a data structure plus a step that fires what is due. Who takes the
// step is the driver:
//
//   - New returns a real-time wheel. A single driver goroutine sleeps until the
//     next occupied deadline and is woken early when a nearer timer arrives;
//     it never wakes once per tick when nothing is due. Shared returns one
//     process-wide real-time wheel, so thousands of Raft groups share one
//     goroutine.
//   - NewVirtual returns a Virtual wheel. Its clock starts at 0 and moves only
//     through AdvanceTo, AdvanceBy, AdvanceToNext and RunUntilIdle; callbacks
//     run synchronously on the calling goroutine.
//
// Code that schedules timers takes a *Wheel and runs unchanged on either. Time is
// a time.Duration since the wheel's epoch (Wheel.Now).
//
// # Timers
//
// A Timer is embedded in the caller's struct, bound once with Init and re-armed
// with Reset; after Init, Reset and Stop never allocate. Wheel.AfterFunc is the
// convenience form (one allocation). A Timer bound with InitNext is periodic:
// its callback (a NextFunc) returns the delay of its next fire, which the
// driver makes itself, and is handed its own panic or a refused re-arm.
//
// Reset is the hot path of Raft: followers push their election timer forward
// on every heartbeat. On a real-time wheel, moving a pending timer's deadline
// later takes no lock and no clock read; only moving it earlier takes the
// wheel's lock. TryExtend is the lock-free path alone. ResetAt arms a
// timer for an absolute time on the wheel's clock, for a periodic tick
// that keeps a grid of deadlines.
//
// The zero Timer is not bound to a wheel: TryReset reports ErrNotInitialized
// and Reset returns false until Init is called.
//
// # Promises
//
//   - Never early. A timer never fires before the Reset (or AfterFunc) call
//     plus its delay, on either driver.
//   - Lateness. A virtual wheel fires every timer at its exact deadline. A
//     real-time wheel fires it late by up to a tick (1ms by default) plus
//     100µs, plus the time the driver takes to wake (up to a millisecond,
//     less on a busy Linux wheel), plus the time the callbacks ahead of it
//     take. A Reset made while a callback runs (the callback's own re-arm,
//     say) may also be late by up to that callback's length, as its
//     deadline comes from a coarse clock published before the callback
//     began; ResetAt's deadline is exact. Stats.MaxLateness is the
//     largest lateness seen, Stats.LateFires the fires later than a tick.
//   - Order. A virtual wheel fires in (deadline, schedule order) order:
//     deadlines are exact, not rounded to ticks, so sub-millisecond delays
//     interleave correctly. Timers due together on a real-time wheel have
//     no defined order.
//   - Stop returns true only if it prevented the callback; false means the
//     timer was not pending or its callback has started (or is about to).
//     Stop never waits for a running callback. Reset and TryReset report
//     whether the timer was pending.
//   - Wheel.Stop is idempotent, returns the timers that never fired (nil on
//     later calls), makes later scheduling fail with ErrStopped, and may be
//     called from a callback; it never waits for a callback that started
//     after it. Stop on the Shared wheel is refused.
//   - Errors, not panics, for bad input: an invalid Config is an
//     ErrInvalidConfig naming the field; Config.MaxPending bounds pending
//     timers (ErrTooManyPending).
//
// # Callbacks
//
// Callbacks run on the driver goroutine unless Config.Executor hands them
// elsewhere; they must be short and must not block, since every timer of the
// wheel waits for them. A panicking callback is recovered, logged with its
// stack through Config.Logger (standard error unless the Config names
// another logger; hclog.NewNullLogger turns it off) and counted
// (Stats.Panics); the wheel keeps running. A callback must not advance its
// own virtual wheel (that panics: see Virtual).
//
// # Metrics
//
// A real-time wheel reports its Stats to go-metrics every
// Config.MetricsInterval (1s by default), to the global sink unless
// Config.Metrics names another, like hashicorp/raft; a
// *metrics.BlackholeSink turns it off, and a virtual wheel never reports:
//
//	raftick.wheel.pending       gauge    timers pending now
//	raftick.wheel.max_lateness  gauge    largest delay of a fire past its deadline so far (ms)
//	raftick.wheel.scheduled     counter  timers that went from idle to pending
//	raftick.wheel.fired         counter  callbacks started
//	raftick.wheel.cancelled     counter  Stop calls that prevented a callback
//	raftick.wheel.rejected      counter  schedules refused (stopped, MaxPending)
//	raftick.wheel.panics        counter  callbacks that panicked
//	raftick.wheel.late_fires    counter  fires later than one tick past the deadline
//	raftick.wheel.wakeups       counter  driver wake-ups from sleep
//
// # Goroutines and goleak
//
// A real-time wheel runs one driver goroutine while it has timers, until
// Stop. The Shared wheel is never stopped, so tests that check for leaked
// goroutines with go.uber.org/goleak and use it (directly, or through
// package election or repeated) must ignore its driver, which may be parked
// inside the runtime's poller (so IgnoreAnyFunction, not IgnoreTopFunction):
//
//	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/raftick/raftick/wheel.(*Wheel).drive"))
//
// # Internals
//
// How the wheel keeps these promises cheaply at a million timers (levels
// and slots, the lock-free Reset's coarse clock, the driver's batches and
// lanes) is described in docs/wheel.md of the repository.
package wheel
