package wheel

import (
	"runtime"
	"time"
)

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
		// Claim and run one timer at a time, so that a callback can still
		// stop a timer due at the same instant that has not started. The
		// clock is read once per fire: it decides what is due, bounds the
		// slack check and measures lateness.
		ran := false
		for {
			f, ok := w.popDue(now)
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
			now = int64(time.Since(w.epoch))
			w.mu.Lock()
			if w.stopped {
				w.mu.Unlock()
				return
			}
		}
		if len(w.drains) > 0 {
			// A big slot is being re-bucketed: let waiting Resets in,
			// then go on without sleeping.
			w.mu.Unlock()
			runtime.Gosched()
			continue
		}
		// Every slot starting at or before now has been processed.
		w.moveCursor(now/w.tick + 1)
		if ran {
			now, ticking = w.closeEpoch()
		}
		next := w.nextEvent()
		if ticking {
			next = min(next, now+min(w.tick, maxEpoch))
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
