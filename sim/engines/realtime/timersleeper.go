package realtime

import (
	"errors"
	"time"
)

var errStopped = errors.New("realtime: carrier stopped")

// timerSleeper is a sleeper on a runtime timer.
type timerSleeper struct {
	t    *time.Timer
	c    chan struct{}
	quit chan struct{}
}

func newTimerSleeper() *timerSleeper {
	s := &timerSleeper{c: make(chan struct{}, 1), quit: make(chan struct{})}
	s.t = time.AfterFunc(time.Hour, func() {
		select {
		case s.c <- struct{}{}:
		default:
		}
	})
	s.t.Stop()
	return s
}

func (s *timerSleeper) arm(d time.Duration) {
	if d == never {
		s.t.Stop()
		return
	}
	s.t.Reset(max(d, 0))
}

func (s *timerSleeper) wait() bool {
	select {
	case <-s.c:
		return true
	case <-s.quit:
		return false
	}
}

func (s *timerSleeper) close() { s.t.Stop(); close(s.quit) }
