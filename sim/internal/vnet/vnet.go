package vnet

import (
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/wheel"
)

// A Courier delivers messages of type M to one function after a delay on
// a wheel. Each message in flight rides a wheel timer that returns to a
// free list when it fires, so a warm Courier sends without allocating.
// The zero Courier is not usable; create one with NewCourier. A Courier
// is not safe for concurrent use: Send and the deliveries must not run at
// the same time, as on a virtual wheel that one goroutine advances.
type Courier[M any] struct {
	w       *wheel.Wheel
	deliver func(M)
	free    *parcel[M]
}

// parcel is a message in flight: a reusable wheel timer that delivers it.
type parcel[M any] struct {
	t    wheel.Timer
	c    *Courier[M]
	m    M
	next *parcel[M]
}

func (p *parcel[M]) fire() {
	c, m := p.c, p.m
	var zero M
	p.m, p.next, c.free = zero, c.free, p
	c.deliver(m)
}

// NewCourier returns a Courier that calls deliver with each message sent
// when its delay on w has passed.
func NewCourier[M any](w *wheel.Wheel, deliver func(M)) *Courier[M] {
	return &Courier[M]{w: w, deliver: deliver}
}

// Send puts m in flight for d (zero or negative: the wheel's next
// instant). It returns an error, and m is never delivered, if the wheel
// is stopped.
func (c *Courier[M]) Send(m M, d time.Duration) error {
	p := c.free
	if p != nil {
		c.free = p.next
		p.next = nil
	} else {
		p = &parcel[M]{c: c}
		if err := p.t.Init(c.w, p.fire); err != nil {
			return err
		}
	}
	p.m = m
	_, err := p.t.TryReset(d)
	return err
}

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
