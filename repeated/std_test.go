package repeated_test

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/raftick/raftick/repeated"
)

// stdTimer is the baseline of repeated's benchmarks (impl=std): the
// repeating timer one would write on the standard library instead of
// package repeated, a time.Timer from time.AfterFunc (each fire on a
// goroutine of its own) under a mutex, drawing its delays from the same
// Jitter policy with the same State. It lives here, with the benchmarks
// that need it, so that testing repeated builds nothing above it.
type stdTimer struct {
	mu       sync.Mutex
	timer    *time.Timer
	base     time.Duration
	jitter   repeated.Jitter
	rng      *rand.Rand
	trigger  func()
	running  bool
	state    repeated.State
	firstArm bool
}

// newStdTimer returns a stopped stdTimer that calls trigger every base,
// adjusted by j drawing from rng, once started.
func newStdTimer(base time.Duration, j repeated.Jitter, rng *rand.Rand, trigger func()) *stdTimer {
	s := &stdTimer{base: base, jitter: j, rng: rng, trigger: trigger}
	s.timer = time.AfterFunc(time.Hour, s.fire)
	s.timer.Stop()
	return s
}

// delay draws the next schedule's delay. mu held.
func (s *stdTimer) delay() time.Duration {
	st := s.state
	st.First = s.firstArm
	s.firstArm = false
	return s.jitter.Next(s.base, st, s.rng)
}

// Start arms a stopped timer with its first schedule.
func (s *stdTimer) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return
	}
	s.running, s.firstArm, s.state.Consecutive = true, true, 0
	s.timer.Reset(s.delay())
}

// Reset re-arms a running timer with a fresh delay.
func (s *stdTimer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.timer.Reset(s.delay())
	}
}

// Stop stops the timer; a trigger under way may still run.
func (s *stdTimer) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = false
	s.timer.Stop()
}

// fire runs the trigger without the lock and re-arms a running timer.
func (s *stdTimer) fire() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.state.Consecutive++
	s.mu.Unlock()
	s.trigger()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.timer.Reset(s.delay())
	}
}
