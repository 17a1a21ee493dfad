package realtime

import (
	"time"

	"github.com/raftick/raftick/internal/timerfd"
)

// A sleeper is what the carrier sleeps on: a timerfd (internal/timerfd),
// so that a message is late by the kernel's timer slack rather than by
// the runtime's millisecond sleeps, or a runtime timer where there is
// none (deliveries are then up to about a millisecond late; Stats shows
// it).
type sleeper struct {
	fd *timerfd.Timer
	fb *timerSleeper
}

func newSleeper() sleeper {
	if fd := timerfd.New(); fd != nil {
		return sleeper{fd: fd}
	}
	return sleeper{fb: newTimerSleeper()}
}

// arm makes wait return d from now (d <= 0: at once; never: not before
// the next arm). Any goroutine may call it.
func (s *sleeper) arm(d time.Duration) {
	if s.fb != nil {
		s.fb.arm(d)
		return
	}
	if d == never {
		s.fd.Arm(timerfd.Never)
		return
	}
	s.fd.Arm(int64(d))
}

// wait parks until the arming expires; false once the sleeper is closed.
func (s *sleeper) wait() bool {
	if s.fb != nil {
		return s.fb.wait()
	}
	return s.fd.Wait()
}

func (s *sleeper) close() {
	if s.fb != nil {
		s.fb.close()
		return
	}
	s.fd.Close()
}
