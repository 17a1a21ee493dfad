// Package repeated provides Timer, a repeating timer on a wheel.Wheel with
// a pluggable randomization policy (Jitter): the building block of Raft's
// election, vote, step-down and snapshot timers.
//
//	t, err := repeated.New(wheel.Shared(), "election", 150*time.Millisecond, campaign,
//		repeated.WithJitter(repeated.Proportional(1))) // [150ms, 300ms), freshly seeded
//	err = t.Start()  // an error if the wheel refuses the schedule
//	err = t.Reset()  // on every heartbeat: push the deadline back
//	t.Destroy()      // on shutdown
//
// See Example_electionTimer for a whole life on a virtual wheel.
//
// It follows SOFAJRaft's RepeatedTimer (start, stop, reset, run-once-now,
// destroy, and an adjustTimeout hook applied to every schedule) and fixes
// that class's known defects.
//
// # A tour
//
//	w := wheel.Shared() // or v.Wheel of a *wheel.Virtual in tests
//	election, err := repeated.New(w, "election-n1", 150*time.Millisecond, onElectionTimeout,
//		repeated.WithJitter(repeated.Proportional(1)), // [150ms, 300ms)
//		repeated.WithSeed(seed, 1)) // reproducible; the default is freshly seeded
//	election.Start()   // first trigger after a jittered timeout
//	election.Reset()   // on every heartbeat: push the deadline back (no allocation)
//	election.Stop()    // on becoming leader
//	election.Restart() // on stepping down: always a fresh deadline
//	election.Destroy() // on shutdown; the on-destroy hook runs once
//
// After each trigger returns, a running timer waits a freshly adjusted
// timeout again (fixed delay). Triggers run on the goroutine that advances
// a virtual wheel, or on the real-time wheel's driver goroutine (or its
// Executor); RunOnceNow runs one on the caller's goroutine.
//
// # Many timers
//
// A host of many Raft groups embeds the timers in its per-group structs, or
// keeps one slice of them per kind, and makes them with Init instead of New:
// no allocation per timer, and a batch of heartbeats visiting groups in
// order reads memory in order. WithSeed gives each a reproducible jitter
// kept inside the timer: a schedule with a built-in policy then reads
// nothing outside the timer's 128 bytes, and the heartbeat's Reset of an
// armed timer on a real-time wheel takes no lock at all: it draws its
// delay from the seed and the schedule's index, and the wheel timer
// records the later deadline with one compare-and-swap
// (wheel.Timer.TryExtend). (With WithRand's *rand.Rand, or a policy of the
// caller's, a schedule takes the timer's lock and also reads the timer's
// cold state and the source. BenchmarkRepeatedResetMany, 100k timers in
// order: 13-16ns per Reset embedded with WithSeed, 45-50ns made by New
// with WithRand.) See ExampleTimer_Init. A timer whose policy re-arms
// it with its base timeout every time (None, and FirstOnly after its first
// schedule: a heartbeat or step-down timer) is marked for the wheel as a
// fixed-delay periodic one (wheel.Timer.SetPeriodic), which a real-time
// wheel keeps in a queue per period instead of re-bucketing it every fire.
//
// # Errors where the caller looks
//
// New refuses what could never work: a nil wheel or trigger, a timeout <=
// 0, a stopped wheel, and a Jitter built with invalid parameters
// (Proportional(-1), UniformExtra(-1s), Backoff(100, 0): see
// ValidateJitter). Start, Restart and Reset return the wheel's error when
// it refuses a schedule (the timer then stops, and Err keeps the error);
// Reset returns ErrNotRunning on a stopped timer, which it does not start.
//
// # Jitter policies
//
// None, UniformExtra ([T, T+max), SOFAJRaft's election and vote timers),
// Proportional ([T, T(1+f)); f = 1 is etcd's and hashicorp/raft's
// [T, 2T)), FirstOnly ([T/2, T) for the first schedule only, SOFAJRaft's
// snapshot timer), Backoff (binary exponential backoff after consecutive
// triggers, cleared by Start and Restart) and Func (any function). A policy sees a
// State (first schedule? how many triggers since Start/Restart?) and the
// timer's own random source, never a global one. By default that source
// is seeded from the operating system's entropy, so no two timers jitter
// alike; WithSeed seeds it and WithRand injects a *rand.Rand of the
// caller's, and runs on a virtual wheel are then reproducible from the
// seed. (The built-in uniform policies, without WithRand, draw from a
// counter-based stream; see WithSeed.)
//
// # Semantics
//
//  1. The policy is applied on every schedule: Start, Restart, Reset,
//     ResetTimeout and the re-arm after each trigger; each draws from the
//     timer's random source. An empty range means no jitter. With
//     WithResetKeepsDelay a Reset instead restarts the countdown of the
//     last schedule's delay (etcd's election timeout, drawn per term).
//  2. Start is idempotent: on a running timer it neither re-arms nor moves
//     the deadline. Restart always re-arms with a fresh adjusted timeout
//     (SOFAJRaft issue #407: stepDown calling start kept the old deadline).
//  3. Stop while the trigger runs prevents the re-arm and returns at once.
//     After Stop (or Destroy) returns no new trigger starts; one that was
//     already under way may still be running (see IsInvoking).
//  4. Re-arming from inside the trigger (Reset, Restart, Stop then Start,
//     ResetTimeout) leaves exactly one schedule: while a trigger runs
//     nothing is armed, and the timer arms once when it returns. (In
//     SOFAJRaft a timer re-armed inside its callback keeps two schedules
//     and fires about twice as often.)
//  5. ResetTimeout on a stopped timer records the timeout for the next
//     Start.
//  6. Destroy is final and idempotent; the on-destroy hook runs exactly
//     once, after any running trigger has returned, also after Stop then
//     Destroy during a trigger (SOFAJRaft can run it twice).
//  7. At most one trigger of a timer runs at a time, even when the wheel's
//     Executor runs callbacks on several goroutines: a wheel callback that
//     belongs to a replaced schedule, or arrives while a trigger runs, is
//     ignored (counted in Stats.Stale).
//  8. RunOnceNow runs the trigger at once on the caller's goroutine,
//     cancelling the pending fire, without holding the timer's lock, so the
//     trigger may call the timer's methods; it does nothing if a trigger is
//     already running or the timer is stopped or destroyed.
//  9. On a virtual wheel the fire times are a function of the seed.
//  10. Reset and the fire-and-re-arm cycle allocate nothing: the Timer
//     embeds its wheel.Timer and reuses it.
//
// Panics in a trigger, the jitter policy or the on-destroy hook are
// recovered, logged (with the stack) and counted, and Err reports the
// latest; the timer keeps its schedule (a panicked draw takes the base
// timeout).
package repeated
