package election

import (
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/repeated"
)

// Config.Emulate.Tick: a node driven by a ticker, as etcd raft's nodes are.
// etcd counts every timeout in calls of Tick (raft.tickElection,
// raft.tickHeartbeat): a count reset at instant t reaches k on the k-th tick
// after t, so what it measures depends on where t falls between two ticks.
// tickGrid reproduces that on the wheel: every timer delay is rounded onto
// the node's ticks, and the contact checks count ticks.

// tickGrid is the instants phase + k*tick of one node's ticker.
type tickGrid struct {
	tick, phase time.Duration
}

// newTickGrid returns the grid of period tick with a phase drawn
// uniformly from [0, tick).
func newTickGrid(tick time.Duration, rng *rand.Rand) tickGrid {
	return tickGrid{tick: tick, phase: time.Duration(rng.Int64N(int64(tick)))}
}

// index returns the number of the last tick at or before t (floor
// division, correct for t before the phase).
func (g tickGrid) index(t time.Duration) int64 {
	x := int64(t - g.phase)
	q := x / int64(g.tick)
	if x%int64(g.tick) < 0 {
		q--
	}
	return q
}

// count returns d as a number of ticks: ceil(d/tick), at least 1.
func (g tickGrid) count(d time.Duration) int64 {
	return max(1, (int64(d)+int64(g.tick)-1)/int64(g.tick))
}

// nth returns the instant of the k-th tick strictly after t (k >= 1).
func (g tickGrid) nth(t time.Duration, k int64) time.Duration {
	return g.phase + time.Duration(g.index(t)+k)*g.tick
}

// since returns the number of ticks in (t, now].
func (g tickGrid) since(t, now time.Duration) int64 {
	return g.index(now) - g.index(t)
}

// tickJitter rounds the delays of inner onto the node's ticks: a delay d
// drawn at now fires on the ceil(d/tick)-th tick after now. It calls now
// with the timer's lock held; the wheel's clock takes no other lock.
type tickJitter struct {
	inner repeated.Jitter
	grid  tickGrid
	now   func() time.Duration
}

func (j *tickJitter) Next(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
	d := j.inner.Next(base, st, rng)
	if d <= 0 {
		d = base // what the timer would do with it
	}
	now := j.now()
	return j.grid.nth(now, j.grid.count(d)) - now
}

// onTicks returns j driven by the node's ticker, or j itself without
// Config.Emulate.Tick.
func (n *Node) onTicks(j repeated.Jitter) repeated.Jitter {
	if n.cfg.Emulate.Tick <= 0 {
		return j
	}
	return &tickJitter{inner: j, grid: n.grid, now: n.w.Now}
}

// readLease returns the lease QuorumContact grants: ElectionTimeout *
// LeaseRatio, and on a ticker (Config.Emulate.Tick) no more than the time a
// voter is sure to stay loyal after hearing the leader: it refuses
// candidates until the ceil(ElectionTimeout/Tick)-th tick after it heard
// the leader, which can come just one tick less than that after it.
func (n *Node) readLease() time.Duration {
	lease := n.cfg.lease()
	if n.cfg.Emulate.Tick > 0 {
		lease = min(lease, time.Duration(n.grid.count(n.cfg.ElectionTimeout)-1)*n.cfg.Emulate.Tick)
	}
	return lease
}

// within reports whether less than d has passed since t: on a ticker
// (Config.Emulate.Tick), whether fewer than ceil(d/Tick) ticks came since t,
// as etcd's electionElapsed < electionTimeout (raft.Step's lease check).
func (n *Node) within(t, d time.Duration) bool {
	now := n.w.Now()
	if n.cfg.Emulate.Tick <= 0 {
		return now-t < d
	}
	return n.grid.since(t, now) < n.grid.count(d)
}
