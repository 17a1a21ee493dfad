package sim

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// Crash stops server id at once: its timers die, messages to it are
// dropped, messages it already sent stay in flight. Its term and vote
// survive in its storage. Crashing a server that is down does nothing.
func (c *Cluster) Crash(id election.ID) {
	sv := c.server(id)
	if sv == nil || !sv.up {
		return
	}
	c.trace(id, "crash")
	sv.up = false
	sv.node.Stop()
	if sv.paused {
		sv.paused = false
		sv.resume.Stop()
	}
	sv.pauseEnd, sv.diskBusy = 0, 0
	for _, q := range sv.queue {
		if q.run == nil {
			c.stats.DroppedDown++
			c.rpcDropped(q.msg)
		}
	}
	for _, m := range sv.held {
		c.rpcDropped(m)
	}
	sv.held, sv.queue = sv.held[:0], sv.queue[:0]
	for _, p := range sv.rpc {
		if p == nil {
			continue
		}
		if p.flush != nil {
			p.flush.Stop()
		}
		if p.held != nil {
			c.stats.Cancelled++
		}
	}
	sv.rpc = nil // a restarted server has no RPCs
}

// Restart brings a crashed server back as a new node that loads its term
// and vote from storage and starts as a follower.
func (c *Cluster) Restart(id election.ID) error {
	sv := c.server(id)
	if sv == nil {
		return fmt.Errorf("Restart: %w: %d", ErrNoServer, id)
	}
	if sv.up {
		return fmt.Errorf("Restart: %w: %d (Crash it first)", ErrServerRunning, id)
	}
	if err := c.newNode(sv); err != nil {
		return err
	}
	sv.diskEnd = c.w.Now()
	c.trace(id, "restart")
	return c.Start(id)
}

// Pause freezes server id for d, like a long garbage-collection pause or
// a SIGSTOP: messages that arrive meanwhile queue up, and messages it
// sends meanwhile (its timers keep firing, as overdue timers do when a
// process resumes) are held back. When it resumes, the held messages
// leave, then the queued ones are delivered, in order. Pausing a paused
// server extends the pause to end d from now.
func (c *Cluster) Pause(id election.ID, d time.Duration) error {
	sv := c.server(id)
	if sv == nil || !sv.up {
		return fmt.Errorf("Pause: %w: %d", ErrServerDown, id)
	}
	c.trace(id, fmt.Sprintf("pause for %v", d))
	sv.pauseEnd = addSat(c.w.Now(), max(d, 0))
	return c.block(sv, sv.pauseEnd)
}

// block freezes sv until at least until.
func (c *Cluster) block(sv *server, until time.Duration) error {
	if sv.resume == nil {
		sv.resume = new(wheel.Timer)
		if err := sv.resume.Init(c.w.Wheel, func() { c.resume(sv) }); err != nil {
			return err
		}
	}
	if d, ok := sv.resume.Deadline(); sv.paused && ok && d >= until {
		return nil
	}
	sv.paused = true
	sv.resume.Reset(until - c.w.Now())
	return nil
}

func (c *Cluster) resume(sv *server) {
	if !sv.up || !sv.paused {
		return
	}
	if end := max(sv.pauseEnd, sv.diskBusy); end > c.w.Now() {
		sv.resume.Reset(end - c.w.Now())
		return
	}
	if sv.pauseEnd == c.w.Now() {
		c.trace(sv.id, "resume")
	}
	sv.paused = false
	out := sv.held
	sv.held = nil
	for _, msg := range out {
		c.transmit(sv, msg)
	}
	for len(sv.queue) > 0 && sv.up && !sv.paused {
		q := sv.queue[0]
		sv.queue = sv.queue[1:]
		if q.run != nil {
			q.run()
		} else {
			c.step(sv, q.msg)
		}
	}
	if len(sv.queue) == 0 {
		sv.queue = nil
	}
}

// Partition splits the servers into groups that cannot reach each other
// (a full partition): every link between different groups is cut both
// ways; links within a group are restored. Servers not listed form one
// more group together.
func (c *Cluster) Partition(groups ...[]election.ID) {
	group := make([]int, len(c.servers)+1)
	for g, ids := range groups {
		for _, id := range ids {
			if c.server(id) != nil {
				group[id] = g + 1
			}
		}
	}
	for a := 1; a <= len(c.servers); a++ {
		for b := 1; b <= len(c.servers); b++ {
			c.cut[a][b] = group[a] != group[b]
		}
	}
	c.trace(0, fmt.Sprintf("partition %v", groups))
}

// Cut cuts the one-way link from -> to (an asymmetric partition: to's
// messages still reach from). Cut both directions of a few links for a
// partial partition, where some servers still reach everyone.
func (c *Cluster) Cut(from, to election.ID) {
	if c.server(from) != nil && c.server(to) != nil {
		c.cut[from][to] = true
		c.trace(0, fmt.Sprintf("cut %d->%d", from, to))
	}
}

// Linked reports whether the one-way link from -> to is up (not cut);
// false for an unknown server.
func (c *Cluster) Linked(from, to election.ID) bool {
	return c.server(from) != nil && c.server(to) != nil && !c.cut[from][to]
}

// Heal restores every link.
func (c *Cluster) Heal() {
	for a := range c.cut {
		clear(c.cut[a])
	}
	c.trace(0, "heal")
}
