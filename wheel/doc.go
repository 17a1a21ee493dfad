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
// earlier than its bucket takes the wheel's lock. TryExtend is that path
// alone: it moves a pending timer's deadline where no lock is needed and
// otherwise changes nothing, so a layer with state of its own (package
// repeated) can re-arm without a lock of its own either. Rescheduling a stopped
// timer that is still linked where it was (Stop unlinks lazily) is the same
// compare-and-swap. Reset does not read the clock either (25ns of a 35ns
// Reset on a typical VM): while timers are being scheduled and the driver is
// awake or sleeping for at most a millisecond (a tick, at a tick of up to
// 10ms), it keeps a coarse clock published and measures how far each
// published value could have been behind real time (its epoch's slack). The epoch travels in the low bits of
// the deadlines computed from it, and a timer fires only once its deadline
// plus its own epoch's slack has passed, so it never fires before the Reset
// call plus d, and a driver stall delays only the timers scheduled during
// it. Before a longer sleep the driver stops publishing (Resets then read
// the clock), so wake-ups follow fires, never Resets.
//
// # Structure
//
// Level 0 is a ring of 1024 slots of one tick (1.024s at the default 1ms
// tick): every deadline less than 1024 ticks ahead goes straight into its
// slot, also across the end of the current 1024-tick window, so Raft's
// timeouts are never re-bucketed from a coarser level first, and timers a
// step-down period ahead do not pile up in level 1 at the end of every
// window to be moved all at once. On a real-time wheel a timer 128 or more
// ticks ahead (at a tick coarser than 1ms, 128ms or more ahead) waits in
// an earlier slot, halfway to its deadline or, if its
// owner promised (Timer.SetMinReset) that every later Reset is at least m
// ahead, m ahead: a heartbeat drawing a shorter timeout can then still move
// it without the lock, and the driver touches it about once per m. Each
// level above has 64 slots covering 64 times the span of the one below.
// Occupancy bitmaps find the next occupied slot without scanning, and
// enough levels are used to reach any time.Duration at the configured
// tick. Deadlines are exact; the tick only decides bucketing. Each slot is
// a bucket: a queue of 512-byte chunks of timer pointers, appended at the
// tail and consumed from the head, so that it gives back its timers in the
// order they were placed, and the driver, reading the addresses in order,
// prefetches timers several entries ahead of the one it works on (walking
// a linked list through the timers, each cache miss would wait for the one
// before it). A Reset that moves a timer earlier leaves a nil entry behind;
// a bucket that is mostly such entries is compacted. Chunks are recycled
// through a free list, so a wheel in a steady state allocates nothing; a
// wheel holds about 8.3 bytes of chunk per timer at its busiest (up to
// twice that where the real-time driver moved chunks whole, see below),
// plus a partly filled chunk per occupied slot.
//
// # The real-time driver
//
// One goroutine per wheel. Each round it reads the clock once and
// publishes a fresh coarse-clock epoch. What follows holds for ticks up to
// 10ms; at a coarser tick the timers due within the current tick wait in
// a small heap and fire one by one at their deadlines, and there are no
// lanes. When timers in the earliest
// level-0 slot are due, the driver takes the slot's bucket whole under the
// lock (O(1): timers placed meanwhile go to a fresh bucket) and then runs
// it without the lock, touching each timer once:
// it prefetches the timer (and the 128 bytes from its start, where an
// embedding struct such as repeated's keeps its state) eight entries
// ahead, reads its deadline, and if the timer is due claims it with one
// compare-and-swap and runs its callback at once, while the timer is in
// cache. A timer pushed later since it was placed (the lazy extension of
// lock-free Resets), re-armed by its callback (the periodic timer's
// cycle), stopped, or still inside its epoch's slack is placed where it
// now belongs under the lock, one chunk of the slot (62 timers) per hold,
// so that Resets and Stops are not held up and the lock is taken once per
// chunk rather than once per timer. Such a chunk's timers mostly go to one
// slot or a few close together (a slot's periodic timers re-arm a period
// ahead, its election timers a SetMinReset promise ahead, or to their
// deadline a little before): the timers going to the earliest of them,
// or at most 64 ticks later, stay in the chunk, each only told its new
// slot, and the chunk itself moves to that slot's bucket, ahead of a
// partly filled tail; the few others are unlinked, leaving nil entries,
// and placed one by one (a chunk left less than half full is freed
// instead, its timers placed one by one). So a chunk's timers stay
// together, and in the order of their memory, from slot to slot, which
// the processor's prefetchers and TLB follow when the driver walks them.
// Meanwhile the slot's timers stay
// linked, so a locked Reset, Init or Stop that reaches one unlinks it (or
// claims it) as usual, and the driver skips an entry that no longer holds
// the timer it read. If the slot is not due as a whole yet (its latest
// deadline has not passed), the driver stops at its first timer not due
// yet and gives the rest of the bucket back to the slot untouched (timers
// are appended in about deadline order); periodic timers re-armed by their
// callbacks fall due in the part of a tick the driver wakes in, so by the
// driver's first look most of a slot is due, or pushed later, anyway. Due
// timers of the ready heap (deadlines before the cursor) run as a batch,
// each claimed just before its callback. Higher-level slots are re-bucketed when
// their start comes, in chunks so that locked Resets are not held up. The
// driver reads the clock once per chunk of a slot, for lateness and to keep
// the coarse clock's epochs short. Then it sleeps until the next occupied
// level-0 slot is due whole (plus 100µs for the epochs' slack) or a
// higher-level slot starts, or until a timer that needs it earlier wakes
// it.
//
// Fixed-delay periodic timers (InitNext, marked with SetPeriodic: a
// heartbeat, a step-down check; package repeated marks its timers with
// fixed delays) skip even that re-bucketing. The driver fires the timers
// of one period in order and re-arms each from the coarse clock, so their
// new deadlines come in the order of the old ones: the timers of a period
// form a queue already sorted by deadline. A lane is that queue, a ring
// of (timer, deadline) entries per period (up to eight periods get one).
// After its first fire from a slot a marked timer joins its period's
// lane; the driver walks a lane's due front as it walks a slot, without
// the lock, claims and fires each timer still queued at its entry's
// deadline, and puts it back at the end, under the lock once per 62
// entries: no aim, no slot, no chunk to move. A timer leaves its lane
// the way it leaves a slot (a locked Reset, Init, Stop): its entry goes
// stale and is skipped. A lock-free Reset may move a queued timer's
// deadline later only; the driver, finding it later than its entry,
// moves it to a slot. A NextFunc that returns another delay moves the
// timer to that delay's lane. A lane stays in deadline order to within a
// tick (an entry that would not goes to a slot), so a timer waits behind
// the one queued ahead of it at most that long, and the driver wakes for
// a lane once the last deadline queued in its front's tick has passed, as
// for a slot due whole.
//
// The Go runtime wakes a sleeping goroutine only to the millisecond (its
// network poller waits in epoll_wait, whose timeout is whole
// milliseconds): a 300µs sleep ends about a millisecond after it began.
// On Linux the driver therefore sleeps on a timerfd, read through the
// runtime's network poller, which wakes it within the kernel's timer slack
// (50µs by default) without holding a thread, while its batches are big
// (32 timers or more). With fewer timers per wake-up it sleeps with the
// runtime's timers, whose wake-ups the runtime shares among the process's
// sleeping goroutines, so that a lightly loaded process wakes less often.
// Elsewhere, or if the system refuses a timerfd, it always sleeps with the
// runtime's timers.
//
// This is cheap because every timer is touched about once per slot it sits
// in, with no heap operation, no lock and no clock read per timer on the
// hot paths; a Reset writes only its own timer, in few enough instructions
// (its common case is one call, the clock's read inline) that the
// processor overlaps the cache misses of Resets to many timers; the driver
// wakes about once per tick at most however many timers fire, firing
// everything due by then (a wake-up costs tens of microseconds of CPU on a
// virtual machine, so wake-ups per second are a budget).
//
// What real time promises: a timer never fires before the Reset call plus
// d. It fires after its deadline by up to a tick (the driver takes a
// busy slot whole), plus 100µs, plus the time the driver takes to wake (the
// timer slack on a busy Linux wheel; up to a millisecond otherwise, the
// runtime's granularity), plus the time it takes for the callbacks ahead of it; a callback that runs long delays the others, and timers
// scheduled while it runs (they may fire up to its duration late). Timers
// due together have no defined order on a real-time wheel (in practice
// mostly the order they were scheduled in); the exact (deadline, schedule
// order) order is a promise of the virtual wheel, which fires every timer
// at its exact deadline and keeps timers due within the current tick in a
// small heap ordered by (deadline, schedule order).
//
// # Callbacks, errors, shutdown
//
// Callbacks run on the driver goroutine unless Config.Executor hands them
// elsewhere; they should be short. A panicking callback is recovered, logged
// and counted (Stats.Panics); the wheel keeps running. A periodic timer can
// be bound with InitNext instead of Init: its callback (a NextFunc) returns
// the delay of its next fire, which the driver makes without a Reset back
// into the wheel, and is handed its own panic (or a refused re-arm) to deal
// with; repeated's timers are made so. Config.MaxPending bounds
// pending timers (ErrTooManyPending). Wheel.Stop is idempotent, returns the
// timers that never fired, makes later scheduling fail with ErrStopped, and
// may be called from a callback; it never waits for a callback that started
// after it. A callback must not advance its own virtual wheel (that panics:
// see Virtual). Stats reports counters: scheduled, fired, cancelled,
// pending, rejected, panics, lateness and driver wake-ups.
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
// package election or repeated) must ignore its driver, which may be parked inside the runtime's poller
// (so IgnoreAnyFunction, not IgnoreTopFunction):
//
//	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/raftick/raftick/wheel.(*Wheel).drive"))
package wheel
