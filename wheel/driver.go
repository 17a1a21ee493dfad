package wheel

import (
	"runtime"
	"time"

	"github.com/raftick/raftick/internal/invariants"
)

const (
	// maxBatch bounds the timers the real-time driver claims under one
	// hold of the wheel's lock.
	maxBatch = 1024
	// republishAfter is how old the published coarse clock may get during
	// a batch of callbacks before the driver publishes a fresh one.
	republishAfter = int64(100 * time.Microsecond)
)

// drive is the real-time driver goroutine. Each round it reads the clock
// once, ends the coarse clock's epoch, claims up to maxBatch due timers
// under the lock (a whole fine-grained slot at a time once the slot's end
// has passed, see collect), runs their callbacks without the lock, and
// sleeps until the next slot end or deadline, or until woken by a nearer
// timer.
func (w *Wheel) drive() {
	defer close(w.doneCh)
	sleep := time.NewTimer(time.Hour)
	sleep.Stop()
	var nap *napper
	if w.napMin >= 0 {
		nap = newNapper()
	}
	if nap != nil {
		w.napMu.Lock()
		w.napper = nap
		w.napMu.Unlock()
		defer w.dropNapper()
	}
	// lastBatch is how many timers the last round ran or looked at: the driver sleeps
	// on the timerfd only while batches are big (see napMinBatch).
	lastBatch := 0
	for {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
		if invariants.Enabled {
			w.checkLocked()
		}
		now := w.republish()
		if n, stopped := w.runDue(now); n > 0 {
			lastBatch = n
			w.mu.Unlock()
			if stopped {
				return
			}
			continue
		}
		if len(w.drains) > 0 {
			// A big slot is being re-bucketed: let waiting Resets in,
			// then go on without sleeping.
			w.mu.Unlock()
			runtime.Gosched()
			continue
		}
		// Every slot that collect may process by now has been processed,
		// but for the head of a level-0 slot that is not due yet.
		if w.batchSlots {
			c := now / w.tick
			if lvl, _, start, ok := w.nextSlot(); ok && lvl == 0 && start < c {
				c = start
			}
			w.moveCursor(c)
		} else {
			w.moveCursor(now/w.tick + 1)
		}
		next := w.nextEvent()
		precise := nap != nil && (lastBatch >= w.napMin || len(w.precise) > 0 && w.preciseBy(next))
		if precise && next != never {
			next = w.napUntil(next)
		}
		next = min(next, w.laneWake(now))
		if next-now > w.epochLimit(precise) {
			// A long sleep: stop publishing, so that an epoch never spans
			// it; Resets read the clock until the driver wakes for a fire.
			// Wake-ups thus follow fires, not Resets, unless Resets are so
			// many that their clock reads cost more than waking once a
			// millisecond to keep the clock published (planSleep).
			next = w.planSleep(now, next)
		} else if next > now {
			w.sleepEpoch(next)
		}
		w.sleepUntil.Store(next)
		if precise {
			// Sleep on the timerfd (see nap_linux.go), armed under the
			// lock, so that a Reset that needs the driver sooner, or Stop,
			// either comes before (and is seen by the next round) or
			// re-arms it to expire at once (kick).
			d := never
			if next != never {
				d = next - int64(time.Since(w.epoch))
			}
			if d > 0 {
				nap.arm(d)
				w.napping.Store(true)
			}
			w.mu.Unlock()
			if d > 0 {
				ok := nap.wait()
				w.napping.Store(false)
				w.wakeups.Add(1)
				if !ok {
					// The timerfd failed: sleep with the runtime's timers
					// from now on.
					w.dropNapper()
					nap = nil
				}
			}
			continue
		}
		w.mu.Unlock()

		if next == never {
			select {
			case <-w.wakeCh:
			case <-w.stopCh:
				return
			}
			w.wakeups.Add(1)
		} else if d := next - int64(time.Since(w.epoch)); d > 0 {
			sleep.Reset(time.Duration(d))
			select {
			case <-sleep.C:
			case <-w.wakeCh:
				sleep.Stop()
			case <-w.stopCh:
				sleep.Stop()
				return
			}
			w.wakeups.Add(1)
		}
	}
}

// runDue collects the timers due by now and runs them: the batch (see
// collect) and a level-0 slot taken whole (see runTransit). It returns how
// many timers it looked at (0: none was due) and whether the wheel was
// stopped meanwhile. mu held, released while callbacks run.
func (w *Wheel) runDue(now int64) (n int, stopped bool) {
	w.collect(now)
	lanes := w.lanesDue(now)
	if len(w.batch) == 0 && w.tr.head == nil && !lanes {
		return 0, false
	}
	n = len(w.batch) + int(w.tr.live)
	// Set under the lock, so that a Stop that finds it false knows the
	// driver will see stopped before starting any callback.
	w.running = true
	w.mu.Unlock()
	if len(w.batch) > 0 {
		w.runBatch(now)
	}
	if w.tr.head != nil {
		w.runTransit(now)
	}
	if lanes {
		n += w.runLanes(now)
	}
	w.mu.Lock()
	w.running = false
	clear(w.batch)
	w.batch = w.batch[:0]
	if w.tr.head != nil {
		w.freeBucket(&w.tr)
	}
	return n, w.stopped
}

// epochLimit returns the longest sleep the driver lets a published epoch
// span: epochSpan, or for a nap until a level-0 slot is due whole (see
// napUntil) a tick plus twice republishAfter, so that a busy driver, which
// finishes a slot and its successor's due front about republishAfter into
// a tick, naps to the end of that tick in one sleep. Capped at maxEpoch
// it would wake (to keep the clock published) just before the slot is
// due, and take the slot's front then, so that the slot's timers would go
// through the driver in several partial walks instead of one pass
// (runTransit).
func (w *Wheel) epochLimit(nap bool) int64 {
	if nap {
		return max(maxEpoch, w.tick+2*republishAfter)
	}
	return w.epochSpan
}

// napMinBatch is the least batch of timers after which the driver sleeps on
// its timerfd. A precise wake-up is worth its cost when many timers wait
// for it; with a few timers per wake-up the driver sleeps with the
// runtime's timers, whose wake-ups the runtime shares with the process's
// other sleeping goroutines (so a lightly loaded process wakes less), at
// the price of up to a millisecond of lateness.
const napMinBatch = 32

// dropNapper closes the driver's timerfd, if it has one.
func (w *Wheel) dropNapper() {
	w.napMu.Lock()
	defer w.napMu.Unlock()
	if w.napper != nil {
		w.napper.close()
		w.napper = nil
	}
}

// napUntil returns when a driver about to nap should wake, next being the
// earliest time something may be due. A wake-up costs tens of
// microseconds of CPU, so the driver naps until a level-0 slot is due
// whole (its latest deadline has passed), plus republishAfter, by which
// the slack of the epochs its deadlines came from has passed too; a timer
// then waits at most a tick (and the slack) for its fire, and the driver
// wakes at most about once a tick. Other events (a ready-heap deadline, a
// higher level's slot) wake it at once. mu held.
func (w *Wheel) napUntil(next int64) int64 {
	if !w.batchSlots {
		return next
	}
	if lvl, _, start, ok := w.nextSlot(); ok && lvl == 0 && w.slotLook(start) == next {
		if top, ok := w.cleanTop(); !ok || top.key > next {
			return max(next, w.slotDue(start)+republishAfter)
		}
	}
	return next
}

// collect moves up to maxBatch due timers into w.batch, without claiming
// them (runBatch does, just before each callback, so that a callback or
// Stop can still stop a timer of the same batch). Real time has no order
// among due timers: a level-0 slot whose end has passed is taken whole
// (batchSlot); due ready-heap entries are taken as found. mu held.
func (w *Wheel) collect(now int64) {
	for len(w.batch) < maxBatch {
		if !w.drainSome() {
			return // the driver yields the lock
		}
		if top, ok := w.cleanTop(); ok && top.key <= now {
			// A deadline from the coarse clock is due only once its
			// epoch's length has passed too.
			if look := w.fireableAt(top.when, now); look > top.key {
				w.ready.pop()
				top.key = look
				w.ready.push(top)
				continue
			}
			w.ready.pop()
			top.t.loc = locNone
			w.batch = append(w.batch, firing{t: top.t, f: top.t.f, when: top.when})
			continue
		}
		lvl, idx, start, ok := w.nextSlot()
		if !ok {
			return
		}
		if lvl == 0 && w.batchSlots {
			if w.slotLook(start) > now {
				return
			}
			w.batchSlot(idx, start, now)
			return // runDue runs the slot
		}
		if w.tickStart(start) > now {
			return
		}
		w.processSlot(lvl, idx, start)
		// A big slot takes a few hundred microseconds: keep the epoch
		// short (see readClock).
		w.readClock()
	}
}

// slotDue returns when the real-time driver takes level-0 slot start (a
// tick) whole: once the latest deadline placed in it has passed, by the
// slot's end at the latest.
func (w *Wheel) slotDue(start int64) int64 {
	end := w.tickStart(start + 1)
	if end == never {
		return never
	}
	return min(end, w.slotMax[start&(1<<level0Bits-1)]+1)
}

// slotLook returns when the real-time driver should next look at level-0
// slot start: once the earliest deadline in it (slotNext) may have passed,
// and at the latest when the slot is due whole (slotDue). (A timer waiting
// out a long epoch slack (a stalled driver) may put slotNext well past the
// slot's end; the slot is still taken whole at its due time, the timer
// moved on to wait in the next slot, so that the slots behind it are not
// held up.)
func (w *Wheel) slotLook(start int64) int64 {
	return min(w.slotNext[start&(1<<level0Bits-1)], w.slotDue(start))
}

// readClock reads the clock for the driver while it re-buckets a slot or
// runs callbacks, and publishes a fresh epoch if the published one is
// republishAfter old: every epoch's length becomes the slack of all
// deadlines with its tag for a while (see slackFor), so epochs are kept
// short while Resets use them. Driver goroutine only.
func (w *Wheel) readClock() int64 {
	now := int64(time.Since(w.epoch))
	if w.openTag != 0 && now-w.openBase >= republishAfter {
		w.republish()
	}
	return now
}
