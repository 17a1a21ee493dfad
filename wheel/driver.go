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
		now := int64(time.Since(w.epoch))
		batch := w.batch[:0]
		for {
			f, ok := w.popDue(now)
			if !ok {
				break
			}
			batch = append(batch, f)
		}
		w.moveCursor(now/w.tick + 1)
		next := w.nextEvent()
		w.sleepUntil.Store(next)
		w.mu.Unlock()

		if len(batch) > 0 {
			w.inCallback.Store(true)
			for i := range batch {
				w.noteLateness(now - batch[i].when)
				w.invoke(batch[i].f)
				batch[i] = firing{}
			}
			w.inCallback.Store(false)
		}
		w.batch = batch[:0]

		if next == never {
			select {
			case <-w.wakeCh:
			case <-w.stopCh:
				return
			}
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
		}
		w.wakeups.Add(1)
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
