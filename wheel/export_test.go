package wheel

import (
	"time"
)

// DriveByHand takes the driver's place on a real-time wheel that has not
// started its driver: step moves the wheel's clock forward (on top of the
// real time that passes) to republishAfter past the end of the next tick,
// as a busy driver's nap does (see napUntil), and runs everything due, on
// the calling goroutine, and "sleeps" as the driver does, publishing an
// epoch based at its next wake-up (sleepEpoch), which Resets between steps
// use; stop stops the wheel. For benchmarks of the driver's CPU without
// sleeps and wake-ups.
func DriveByHand(w *Wheel) (step func(), stop func()) {
	w.mu.Lock()
	w.started = true // the caller is the driver
	w.mu.Unlock()
	wake := int64(-1)
	step = func() {
		w.mu.Lock()
		now := int64(time.Since(w.epoch))
		if wake < 0 {
			wake = (now/w.tick+1)*w.tick + republishAfter
		}
		if wake > now {
			w.epoch = w.epoch.Add(-time.Duration(wake - now))
		}
		now = w.republish()
		for {
			if n, _ := w.runDue(now); n == 0 {
				break
			}
		}
		c := now / w.tick
		if lvl, _, start, ok := w.nextSlot(); ok && lvl == 0 && start < c {
			c = start
		}
		w.moveCursor(c)
		wake = (now/w.tick+1)*w.tick + republishAfter
		w.sleepEpoch(wake)
		w.mu.Unlock()
	}
	stop = func() {
		w.mu.Lock()
		w.started = false // no driver goroutine to wait for
		w.mu.Unlock()
		w.Stop()
	}
	return step, stop
}

// ChildEnv names the environment variable that tells a test binary it
// runs as a test's child process.
const ChildEnv = "RAFTICK_WHEEL_TEST_CHILD"
