package wheel

import "time"

// The coarse clock.
//
// Reading the monotonic clock costs about 25ns on a typical VM, most of a
// Reset. While timers are being scheduled and the driver is awake or
// sleeps for at most a millisecond, the real-time driver therefore keeps a
// coarse clock published, and Reset computes deadlines from it. A
// published value (its base) starts an epoch; the epoch ends when the
// driver unpublishes it, which it does before reading the clock, so every
// Reset that used the value happened before the measured end of the epoch.
// A deadline computed from an epoch's base is thus early by at most the
// time from the base to the epoch's end (the epoch's slack; 0 if the epoch
// ended before its base). While the driver is awake the base is the time
// of publication; for a short sleep it is the planned wake-up, so that the
// slack is only how late the driver woke.
//
// Each epoch carries a tag (1..tagMask, 0 meaning "exact clock") that
// travels in the low bits of the deadlines computed from it, so the tag is
// written atomically with the deadline. The driver records, per tag, the
// longest epoch recently seen, and fires a timer only once its deadline plus
// its own epoch's length has passed. A driver stalled past its planned
// wake-up (CPU starvation) therefore delays only the timers scheduled during
// the stall, and never lets one fire early.
//
// The clock stays published while the driver collects and runs callbacks
// (a busy driver is exactly when Resets are many): the driver publishes a
// fresh epoch at every round and, while it walks a big slot or runs a long
// batch of callbacks, every republishAfter. Because a tag's slack is the
// longest of its recent epochs, publish skips tags that a long epoch (an
// oversleep, a stall) left with a long slack, so that one stall does not
// delay the timers of every later epoch that reuses its tag. A
// callback that runs long stretches its epoch, so timers scheduled while
// it runs may fire up to its duration late; timers scheduled after it
// returned are not affected. Before a sleep longer than maxEpoch (a tick
// on a wheel with a coarser tick that takes its slots whole; for a busy
// driver's nap until a slot is due whole, a tick plus 200µs: see
// epochLimit) the driver stops publishing, so that an idle epoch never
// spans it and wake-ups follow fires, never Resets: Resets meanwhile read
// the clock.
//
// Real-time deadlines are rounded up to a multiple of tagMask+1 ns (4.096µs)
// to make room for the tag; virtual wheels keep exact deadlines and never
// use the coarse clock.

const (
	tagBits = 12
	tagMask = 1<<tagBits - 1

	// coarseMaxDelay bounds the delays scheduled on the coarse clock; longer
	// ones read the clock. slackWindow is how long an epoch's length is
	// remembered. A coarse timer's epoch ends before the driver decides to
	// fire it; if that decision comes more than slackWindow after the
	// epoch's end, the fire is already more than coarseMaxDelay after the
	// Reset call, so forgetting the epoch cannot make it early.
	coarseMaxDelay = 4 * time.Second
	slackWindow    = int64(coarseMaxDelay)

	// maxEpoch is the longest sleep the driver lets an epoch span, on a
	// wheel with a tick of at most maxEpoch; on a coarser wheel that takes
	// its slots whole, whose timers may fire a tick late anyway, a tick
	// (see Wheel.epochSpan).
	maxEpoch = int64(time.Millisecond)

	// While Resets read the clock at least once a microsecond on average
	// (a clock read costs about 25ns, a driver wake-up about 20µs), the
	// driver keeps the clock published for tickLease, waking every
	// epochSpan although nothing fires; clockReadWake clock reads since its
	// last look wake it to check the rate.
	tickRate = int64(time.Microsecond) // ns per clock read, at most

	// shortEpoch is the longest remembered slack of a tag that publish
	// reuses without looking further; maxTagSkips bounds the search.
	shortEpoch    = int64(50 * time.Microsecond)
	maxTagSkips   = 16
	tickLease     = int64(50 * time.Millisecond)
	clockReadWake = 1024
)

// slackEntry is the longest epoch recently seen for one tag.
type slackEntry struct {
	len int64 // ns
	end int64 // when the latest epoch with this tag ended
}

// encodeRT returns the real-time deadline base+d rounded up to make room
// for tag in its low bits, saturating at the end of time.
func encodeRT(base int64, d time.Duration, tag int64) int64 {
	when := addDeadline(base, d)
	if when > maxWhen-tagMask {
		return maxWhen // the end of time: no slack needed
	}
	return ((when + tagMask) &^ tagMask) | tag
}

// scheduleDeadline is the deadline recorded for a timer scheduled d from
// now.
func (w *Wheel) scheduleDeadline(d time.Duration) int64 {
	if w.virtual {
		return addDeadline(w.vnow.Load(), d)
	}
	if d <= coarseMaxDelay {
		if c := w.coarse.Load(); c >= 0 {
			if !w.demand.Load() {
				w.demand.Store(true)
			}
			return encodeRT(c&^tagMask, d, c&tagMask)
		}
		// Tell the driver that Resets are happening, so that it publishes
		// when it next wakes, and count the clock reads: a fast stream of
		// them (see tickRate) wakes it, once, to keep the clock published.
		if !w.demand.Load() {
			w.demand.Store(true)
		}
		if w.clockReads.Add(1) == clockReadWake {
			w.kick()
		}
	}
	return encodeRT(int64(time.Since(w.epoch)), d, 0)
}

// slackFor returns how long after its recorded deadline a timer scheduled
// in the epoch with this tag may fire, as of now (the driver's latest clock
// reading; an older reading only keeps an epoch's slack longer). For the
// epoch still published it is the time since its start, which is less than
// the rounding every deadline of that epoch carries above the epoch's
// start, so such a timer is never due in that decision. Tags come round
// again (every tagMask epochs, which may be well within slackWindow), so
// the open epoch's tag also keeps the slack remembered for older epochs
// with the same tag. Driver goroutine only.
func (w *Wheel) slackFor(tag, now int64) int64 {
	if tag == 0 {
		return 0
	}
	var remembered int64
	if e := w.slack[tag]; now-e.end <= slackWindow {
		remembered = e.len
	}
	if tag == w.openTag {
		// The epoch is still published: any Reset in it happened before now.
		return max(remembered, now-w.openBase, 0)
	}
	return remembered
}

// fireableAt returns when a timer with real-time deadline when may fire, as of
// now: once the slack of the coarse-clock epoch it was scheduled in has
// passed too (see slackFor). Driver goroutine only.
func (w *Wheel) fireableAt(when, now int64) int64 { return when + w.slackFor(when&tagMask, now) }

// suspendCoarse unpublishes the coarse clock and records the epoch it ends.
// It returns the time. Driver goroutine only.
func (w *Wheel) suspendCoarse() int64 {
	// Unpublish first: a Reset that read the value did so before this swap,
	// hence before the clock read below.
	c := w.coarse.Swap(-1)
	now := int64(time.Since(w.epoch))
	if c >= 0 {
		tag := c & tagMask
		e := &w.slack[tag]
		if now-e.end > slackWindow {
			e.len = 0
		}
		e.len = max(e.len, now-(c&^tagMask)) // < 0 for an epoch based ahead of time
		e.end = now
	}
	w.openTag = 0
	return now
}

// republish ends the published epoch and publishes a fresh one, whether or
// not timers were scheduled in it, and returns the time. The driver calls
// it at the start of every round and while busy: the round's callbacks
// re-arm their timers, and Resets between now and the next round (a
// heartbeat batch arriving while the driver sleeps) should find the clock
// published. Only a long sleep stops publishing (planSleep). Driver
// goroutine only.
func (w *Wheel) republish() (now int64) {
	now = w.suspendCoarse()
	w.demand.Store(false)
	w.publish(now, now)
	return now
}

// planSleep decides, before a sleep until next (more than the epoch
// limit away, see epochLimit), whether to keep the clock published (it
// returns an earlier wake-up, w.epochSpan away) or to stop publishing.
// Driver goroutine only.
func (w *Wheel) planSleep(now, next int64) int64 {
	n := w.clockReads.Swap(0)
	if el := now - w.rateSince; n >= 64 && n*tickRate >= el {
		w.tickUntil = now + tickLease
	}
	w.rateSince = now
	if now < w.tickUntil && (w.openTag != 0 || w.demand.Load()) {
		wake := now + w.epochSpan
		w.sleepEpoch(wake)
		return wake
	}
	w.suspendCoarse()
	return next
}

// sleepEpoch ends the current epoch and, if it was published or timers
// were scheduled since, publishes one for a short sleep based at the
// planned wake-up: deadlines computed from it are late by up to the sleep
// instead of early, so its slack is only how far the driver oversleeps,
// and a level-0 slot whose end the driver wakes at is due whole. Driver
// goroutine only.
func (w *Wheel) sleepEpoch(wake int64) {
	published := w.openTag != 0
	now := w.suspendCoarse()
	if w.demand.Swap(false) || published {
		w.publish(wake, now)
	}
}

// publish starts an epoch at base (rounded down to make room for the tag).
// now is the driver's latest clock reading. Tags come round every tagMask
// epochs, well within slackWindow when the driver is busy, and a tag's
// remembered slack is the longest of its recent epochs (slackFor): one
// long epoch (an oversleep, a stall) would lend its slack to every later
// epoch with its tag, and delay their timers by a slot. publish therefore
// skips, up to a bound, tags whose remembered slack is longer than
// shortEpoch.
func (w *Wheel) publish(base, now int64) {
	var tag int64
	for range maxTagSkips {
		w.epochSeq++
		tag = 1 + w.epochSeq%tagMask
		if e := w.slack[tag]; e.len <= shortEpoch || now-e.end > slackWindow {
			break
		}
	}
	w.openTag, w.openBase = tag, base&^tagMask
	w.coarse.Store(w.openBase | tag)
}

// coarseDeadline is scheduleDeadline's common case: the coarse clock is
// published, the delay within its reach and the driver already told of
// Resets. Small enough for Go to inline where a Reset computes its
// deadline (see TryReset).
func (w *Wheel) coarseDeadline(d time.Duration) (int64, bool) {
	c := w.coarse.Load()
	if c < 0 || d > coarseMaxDelay || !w.demand.Load() {
		return 0, false
	}
	// encodeRT(c&^tagMask, d, c&tagMask), but for its saturation, which a
	// delay of at most coarseMaxDelay from a published epoch never needs.
	return (c&^tagMask+int64(max(d, 0))+tagMask)&^tagMask | c&tagMask, true
}
