package raftmix

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/raftick/raftick/repeated"
)

// StdTimer is the repeating timer one would write on the standard library
// instead of package repeated: a time.Timer from time.AfterFunc (each fire
// on a new goroutine), a mutex, and the same Jitter policy and State. It is
// the impl=std side of the RaftMix workload (repeated's benchmarks keep a
// copy of their own, since a test of repeated imports nothing above it).
type StdTimer struct {
	mu          sync.Mutex
	t           *time.Timer
	base        time.Duration
	jitter      repeated.Jitter
	rng         *rand.Rand
	trigger     func()
	running     bool
	first       bool
	consecutive int
}

// NewStdTimer returns a stopped StdTimer calling trigger every base
// (adjusted by j, drawing from rng), once started.
func NewStdTimer(base time.Duration, j repeated.Jitter, rng *rand.Rand, trigger func()) *StdTimer {
	s := &StdTimer{base: base, jitter: j, rng: rng, trigger: trigger}
	s.t = time.AfterFunc(time.Hour, s.fire)
	s.t.Stop()
	return s
}

func (s *StdTimer) nextLocked() time.Duration {
	d := s.jitter.Next(s.base, repeated.State{First: s.first, Consecutive: s.consecutive}, s.rng)
	s.first = false
	return d
}

// Start arms a stopped timer with a first-schedule delay.
func (s *StdTimer) Start() {
	s.mu.Lock()
	if !s.running {
		s.running, s.first, s.consecutive = true, true, 0
		s.t.Reset(s.nextLocked())
	}
	s.mu.Unlock()
}

// Reset re-arms a running timer with a fresh delay.
func (s *StdTimer) Reset() {
	s.mu.Lock()
	if s.running {
		s.t.Reset(s.nextLocked())
	}
	s.mu.Unlock()
}

// Stop stops the timer; a trigger already under way may still run.
func (s *StdTimer) Stop() {
	s.mu.Lock()
	s.running = false
	s.t.Stop()
	s.mu.Unlock()
}

func (s *StdTimer) fire() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.consecutive++
	s.mu.Unlock()
	s.trigger()
	s.mu.Lock()
	if s.running {
		s.t.Reset(s.nextLocked())
	}
	s.mu.Unlock()
}
