package memnet

import (
	"sync"
	"time"

	"github.com/raftick/raftick/wheel"
)

// A Courier delivers messages of type M to one function after a delay on
// a wheel: the carrier under every in-memory network. Each message in
// flight rides a wheel timer that returns to a free list when it fires,
// so a warm Courier sends without allocating. The zero Courier is not
// usable; create one with NewCourier. A Courier alone is not safe for
// concurrent use: Send and the deliveries must not run at the same time,
// as on a virtual wheel that one goroutine advances (the simulators); a
// Network, safe for concurrent use, guards its Courier with its lock.
type Courier[M any] struct {
	w       *wheel.Wheel
	deliver func(M)
	free    *parcel[M]
	mu      sync.Locker // if not nil, held while a fired parcel returns to free
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
	if c.mu != nil {
		c.mu.Lock()
	}
	p.m, p.next, c.free = zero, c.free, p
	if c.mu != nil {
		c.mu.Unlock()
	}
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
	if err != nil {
		var zero M
		p.m, p.next, c.free = zero, c.free, p
	}
	return err
}
