// Package wheel is a hierarchical timing wheel shared by many timers, with two
// drivers: real time for production and virtual time for simulation and
// tests.
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
// A Wheel is a data structure plus a step that fires what is due. Who takes
// the step is the driver:
//
//   - New returns a real-time wheel. A single driver goroutine sleeps until the
//     next occupied deadline and is woken early when a nearer timer arrives; it
//     never wakes once per tick when nothing is due (the "empty advance" of
//     Netty's HashedWheelTimer). Shared returns one process-wide real-time
//     wheel, so thousands of Raft groups share one goroutine.
//   - NewVirtual returns a Virtual wheel. Its clock starts at 0 and moves only
//     through AdvanceTo, AdvanceBy, AdvanceToNext and RunUntilIdle; callbacks
//     run synchronously on the calling goroutine, at their exact deadlines, in
//     (deadline, schedule order) order. A whole simulated cluster runs as "jump
//     to the next deadline, fire it", reproducibly.
//
// Code that schedules timers takes a *Wheel and runs unchanged on either.
// Time is a time.Duration since the wheel's epoch (Wheel.Now).
//
// # Timers
//
// A Timer is embedded in the caller's struct, bound once with Init and
// re-armed with Reset; after Init, Reset and Stop never allocate.
// Wheel.AfterFunc is the convenience form (one allocation). Stop reports true
// only if it prevented the callback; Reset reports whether the timer was
// pending.
//
// Reset is the hot path of Raft: followers push their election timer forward
// on every heartbeat. On a real-time wheel, moving a pending timer's deadline
// later takes no lock: the new deadline is stored atomically and the timer is
// re-bucketed lazily when its old bucket comes due. Only moving a deadline
// earlier than its bucket takes the wheel's lock. Reset does not read the
// clock either (25ns of a 35ns Reset on a typical VM): while timers are being
// scheduled, the driver publishes a coarse clock at least once a millisecond
// and measures how long each published value stayed current (its epoch). The
// epoch travels in the low bits of the deadlines computed from it, and a
// timer fires only once its deadline plus its own epoch's length has passed,
// so it never fires before the Reset call plus d, and a driver stall delays
// only the timers scheduled during it. A real-time timer fires at most about
// a tick plus scheduler delay late. When nothing is being scheduled the
// driver stops publishing and sleeps until the next deadline.
//
// # Structure
//
// Levels of 64 slots, each covering 64 times the span of the one below, hold
// the timers; a 64-bit occupancy bitmap per level finds the next occupied
// slot in O(levels) without scanning, and enough levels are used to reach any
// time.Duration at the configured tick (1ms by default). Deadlines are exact;
// the tick only decides bucketing. Timers due within the current tick wait in
// a small heap ordered by (deadline, schedule order).
//
// # Callbacks, errors, shutdown
//
// Callbacks run on the driver goroutine unless Config.Executor hands them
// elsewhere; they should be short. A panicking callback is recovered, logged
// and counted (Stats.Panics); the wheel keeps running. Config.MaxPending bounds
// pending timers (ErrTooManyPending). Wheel.Stop is idempotent, returns the
// timers that never fired, makes later scheduling fail with ErrStopped, and
// may be called from a callback. Stats reports counters: scheduled, fired,
// cancelled, pending, rejected, panics, lateness and driver wake-ups.
//
// # Metrics
//
// A real-time wheel reports its Stats to go-metrics every
// Config.MetricsInterval (1s by default), to the global sink unless
// Config.Metrics names another, like hashicorp/raft; a
// *metrics.BlackholeSink turns it off, and a virtual wheel never reports.
// hashicorp/raft runs no timing wheel, so these have no raft.* counterpart:
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
// package election or repeated) must ignore its driver:
//
//	goleak.VerifyNone(t, goleak.IgnoreTopFunction("github.com/raftick/raftick/wheel.(*Wheel).drive"))
package wheel
