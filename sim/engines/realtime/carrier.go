package realtime

import (
	"container/heap"
	"sync"
	"time"

	"github.com/raftick/raftick/election"
)

// never is an arming that never expires.
const never = time.Duration(1<<63 - 1)

// A carrier holds messages for their delays in real time and hands each
// to deliver, with the time it was due, once its delay has passed, from a
// goroutine of its own that sleeps on a sleeper (a timerfd on Linux)
// until the earliest arrival.
type carrier struct {
	now     func() time.Duration // the cluster's clock
	deliver func(m election.Message, due time.Duration)
	sl      sleeper
	done    chan struct{} // closed when the goroutine exits

	mu      sync.Mutex
	q       parcels
	seq     uint64
	armed   time.Duration // when the sleeper expires (never: disarmed)
	stopped bool
}

// A parcel is a message in flight: it arrives at when; seq orders
// arrivals at the same instant as they were sent.
type parcel struct {
	when time.Duration
	seq  uint64
	m    election.Message
}

type parcels []parcel

func (p parcels) Len() int { return len(p) }
func (p parcels) Less(i, j int) bool {
	return p[i].when < p[j].when || p[i].when == p[j].when && p[i].seq < p[j].seq
}
func (p parcels) Swap(i, j int) { p[i], p[j] = p[j], p[i] }
func (p *parcels) Push(x any)   { *p = append(*p, x.(parcel)) }
func (p *parcels) Pop() any {
	old := *p
	x := old[len(old)-1]
	*p = old[:len(old)-1]
	return x
}

// newCarrier starts a carrier on the clock now.
func newCarrier(now func() time.Duration, deliver func(m election.Message, due time.Duration)) *carrier {
	c := &carrier{now: now, deliver: deliver, sl: newSleeper(), done: make(chan struct{}), armed: never}
	go c.run()
	return c
}

// Send puts m in flight for d.
func (c *carrier) Send(m election.Message, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return errStopped
	}
	now := c.now()
	when := now + max(d, 0)
	c.seq++
	heap.Push(&c.q, parcel{when: when, seq: c.seq, m: m})
	if when < c.armed {
		c.armed = when
		c.sl.arm(when - now)
	}
	return nil
}

// run delivers what is due, then sleeps until the next arrival.
func (c *carrier) run() {
	defer close(c.done)
	var due []parcel
	for {
		c.mu.Lock()
		if c.stopped {
			c.mu.Unlock()
			return
		}
		now := c.now()
		due = due[:0]
		for len(c.q) > 0 && c.q[0].when <= now {
			due = append(due, heap.Pop(&c.q).(parcel))
		}
		c.armed = never
		if len(c.q) > 0 {
			c.armed = c.q[0].when
		}
		if len(due) == 0 {
			if c.armed == never {
				c.sl.arm(never)
			} else {
				c.sl.arm(c.armed - now)
			}
		}
		c.mu.Unlock()
		if len(due) == 0 {
			if !c.sl.wait() {
				return
			}
			continue
		}
		for _, p := range due {
			c.deliver(p.m, p.when)
		}
	}
}

// stop stops the carrier (the messages in flight are never delivered)
// and waits for its goroutine to exit.
func (c *carrier) stop() {
	c.mu.Lock()
	already := c.stopped
	c.stopped = true
	c.mu.Unlock()
	if !already {
		c.sl.close()
	}
	<-c.done
}
