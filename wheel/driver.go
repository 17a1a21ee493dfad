package wheel

import "time"

// drive is the real-time driver goroutine: fire what is due, then sleep until
// the next occupied slot or heap deadline, or until woken by a nearer timer.
func (w *Wheel) drive() {
	defer close(w.doneCh)
	sleep := time.NewTimer(time.Hour)
	sleep.Stop()
	for {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
		now, ticking := w.closeEpoch()
		slack := max(w.slackCur, w.slackPrev)
		target := now - slack
		// Claim and run one timer at a time, so that a callback can still
		// stop a timer due at the same instant that has not started.
		ran := false
		for {
			f, ok := w.popDue(target)
			if !ok {
				break
			}
			if !ran {
				// Callbacks may be slow: stop publishing the coarse clock
				// while they run, so that an epoch never spans one and a
				// slow callback does not become everyone's slack.
				ran = true
				w.suspendCoarse()
			}
			w.mu.Unlock()
			w.inCallback.Store(true)
			w.noteLateness(now - f.when)
			w.invoke(f.f)
			w.inCallback.Store(false)
			w.mu.Lock()
			if w.stopped {
				w.mu.Unlock()
				return
			}
		}
		if ran {
			now, ticking = w.closeEpoch()
		}
		if target >= 0 {
			w.moveCursor(target/w.tick + 1)
		}
		next := w.nextEvent(slack)
		if ticking {
			next = min(next, now+w.tick)
		}
		w.sleepUntil.Store(next)
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

// noteLateness records how late a real-time fire was.
func (w *Wheel) noteLateness(late int64) {
	if late > w.tick {
		w.lateFires.Add(1)
	}
	for {
		m := w.maxLate.Load()
		if late <= m || w.maxLate.CompareAndSwap(m, late) {
			return
		}
	}
}

// suspendCoarse unpublishes the coarse clock and records the epoch it ends.
// mu held.
func (w *Wheel) suspendCoarse() {
	if c := w.coarse.Swap(-1); c >= 0 {
		w.slackCur = max(w.slackCur, int64(time.Since(w.epoch))-c)
	}
}

// closeEpoch ends the current coarse-clock epoch, records its length, and
// publishes a new one if timers were scheduled during it. It returns the
// current time and whether the driver must wake again within a tick to keep
// the coarse clock fresh. Called by the driver with mu held.
func (w *Wheel) closeEpoch() (now int64, ticking bool) {
	// Unpublish first: a Reset that read the old value did so before this
	// swap, hence before the clock read below, so the measured length
	// bounds how far behind real time the value it used was.
	c := w.coarse.Swap(-1)
	now = int64(time.Since(w.epoch))
	if now-w.periodStart >= slackPeriod {
		if now-w.periodStart >= 2*slackPeriod {
			w.slackPrev = 0
		} else {
			w.slackPrev = w.slackCur
		}
		w.slackCur = 0
		w.periodStart = now
	}
	if c >= 0 {
		w.slackCur = max(w.slackCur, now-c)
	}
	if w.demand.Swap(false) {
		w.coarse.Store(now)
		return now, true
	}
	return now, false
}
