package vnet

import (
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/wheel"
)

// Run advances w deadline by deadline until done returns true or the next
// deadline lies beyond limit, and returns done(). done is checked before
// each instant is processed and once more after the last, so when it
// turns true Now() is the instant of the last change. If stop is not nil,
// Run calls it every every instants (every > 0) and returns false at once
// when it returns true, so that a caller can cancel a long run cheaply.
func Run(w *wheel.Virtual, limit time.Duration, done func() bool, stop func() bool, every int) bool {
	for n := 0; !done(); n++ {
		if stop != nil && every > 0 && n%every == every-1 && stop() {
			return false
		}
		next, ok := w.NextDeadline()
		if !ok || next > limit {
			return done()
		}
		w.AdvanceTo(next)
	}
	return true
}

// Copies draws how many copies of one message a lossy, duplicating
// network delivers: 0 with probability loss, else 2 with probability dup,
// else 1. It draws from rng only for a positive probability, loss first,
// so that the simulators built on vnet spend their random streams alike.
func Copies(rng *rand.Rand, loss, dup float64) int {
	if loss > 0 && rng.Float64() < loss {
		return 0
	}
	if dup > 0 && rng.Float64() < dup {
		return 2
	}
	return 1
}
