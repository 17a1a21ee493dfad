package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/quorum"
)

// Failover of hibernating groups. When node liveness takes a peer host for
// dead, the hibernating groups it led need a new leader, and nothing else
// will wake them: a sleeping group has no timer. There may be hundreds of
// thousands of them (a third of a million idle groups at a million per
// three hosts), and a host that woke them all at once, under its lock,
// could not run their elections (a node each, a round of requests, a
// HardState to write) and keep its own heartbeats on time: at 1M groups
// scalemix saw such a verdict turn into hundreds of thousands of spurious
// elections. So the verdict wakes nothing; it queues, and the sweep wakes
// from the queue at a pace the elections set:
//
//   - At a verdict the host queues (per dead leader's host) the
//     hibernating groups whose leader's host is dead by its liveness, in
//     which it is the first voter alive (firstAlive, the rule
//     campaignForDown follows for awake groups), and of which a quorum of
//     voters is alive. It wakes none of them. A group in which another
//     survivor comes first stays asleep here: that survivor's (pre-)vote
//     request wakes it (wakeFor), so that one candidate per group asks
//     and the others answer. A group with no quorum alive could not elect
//     and stays asleep; when a voter's host is heard again, the host
//     queues what then qualifies (heard).
//   - Every sweep (each heartbeat interval) wakes queued groups and makes
//     each campaign at once, while at most Config.FailoverInFlight of
//     them are in flight: woken by failover, with no live leader known.
//     Campaigning at once is safe because LivenessTimeout is at least the
//     lease plus the coalescing window (Validate): a leader that still
//     counted this replica in its lease would have been heard from since.
//     A replica woken so resumes knowing its dead leader, last heard when
//     its host last heard that leader's host (see orphaned), so that its
//     promise to that leader has run out and its vote, and the other
//     survivors' (woken by its requests the same way), count at once.
//   - A group leaves the flight when this host wins its election (the
//     next queued group wakes at once, so the pace is that of the
//     elections completing), when a sweep finds its node knows a leader
//     or it hibernated again, or after failoverWait (so that a group
//     that cannot win does not hold its place; its own timers go on).
//   - A batch from the dead host (alive again: heard) drops what is left
//     of its queue: those groups sleep on under a leader that is alive.
//     A group that wakes otherwise while queued (a Touch, a message)
//     leaves the queue; a queued group that no longer qualifies when its
//     turn comes (its first voter alive is another, or its quorum is
//     gone) stays asleep.
//
// So a verdict, right or wrong, costs at most FailoverInFlight elections
// at a time on each survivor, and a wrong one (a host that stalled past
// LivenessTimeout and comes back) costs at most the groups woken before
// its first batch arrives.

// DefaultFailoverInFlight is the default of Config.FailoverInFlight: the
// order of the group counts whose failover at once the overload tests
// measured (TestOverloadFailover: 900 to 2,000 groups on three hosts
// elect new leaders within 5 election timeouts while the survivors get a
// third of the processor time their work needs), and enough to fail over
// a thousand idle groups per election round trip.
const DefaultFailoverInFlight = 1024

// failoverWait is how long, in election timeouts, a group woken by
// failover holds its place in flight without a known leader: its first
// round, a retry after its election timer (at most two election timeouts
// with the default jitter), and that round.
const failoverWait = 3

// flight is a group woken by failover, in flight until a leader is known
// or until.
type flight struct {
	g     *group
	until time.Duration
}

// Values of group.fo besides k > 0, the group's place in Host.flights
// plus one.
const (
	foNone   = 0  // neither queued nor in flight
	foQueued = -1 // in a peer's failover queue
)

// queueFailover queues for failover every hibernating group that needs
// this host to fail over (see orphan): after a verdict, the dead host's
// groups, and those of an earlier verdict whose first voter alive was
// the host now dead; after a voter's host is heard again, the groups
// whose quorum it completes. h.mu is held.
func (h *Host) queueFailover() {
	for _, g := range h.all {
		if g.node != nil || g.fo != foNone || !h.orphan(g) {
			continue
		}
		p := h.peers[g.dormant.Leader]
		p.failover = append(p.failover, g)
		g.fo = foQueued
		h.stats.FailoverQueued++
	}
}

// dropFailover leaves the rest of p's failover queue asleep: p is alive
// again. h.mu is held.
func (h *Host) dropFailover(p *peer) {
	for _, g := range p.failover[p.foHead:] {
		if g.fo == foQueued {
			g.fo = foNone
			h.stats.FailoverQueued--
			h.stats.FailoverDropped++
		}
	}
	p.failover, p.foHead = nil, 0
}

// unqueue notes that g, queued for failover, woke otherwise (its entry
// stays in the queue and is skipped). h.mu is held.
func (h *Host) unqueue(g *group) {
	if g.fo == foQueued {
		g.fo = foNone
		h.stats.FailoverQueued--
	}
}

// orphan reports whether g, hibernating, needs this host to fail over:
// its leader's host is dead by liveness, this host is its first voter
// alive, and a quorum of its voters is alive (a group that cannot elect
// is left asleep rather than woken to campaign in vain). h.mu is held.
func (h *Host) orphan(g *group) bool {
	l := g.dormant.Leader
	if l == h.id || h.leaderAlive(l) || h.firstAlive(g) != h.id {
		return false
	}
	alive := 0
	for _, id := range g.voters.ids {
		if id == h.id || h.leaderAlive(id) {
			alive++
		}
	}
	return quorum.Majority(len(g.voters.ids)).Reached(alive)
}

// landFailovers ends the flight of the groups that know a leader, sleep,
// or have flown failoverWait, and wakes queued groups into the places
// freed. h.mu is held.
func (h *Host) landFailovers(now time.Duration) {
	for i := 0; i < len(h.flights); {
		n := h.flights[i].g.node // awake: a group that sleeps has landed
		led := n.Leading()
		if l := n.Status().Leader; !led && l != election.None {
			led = h.leaderAlive(l) // not the dead one it resumed under
		}
		if !led && now < h.flights[i].until {
			i++
			continue
		}
		if !led {
			h.stats.FailoverExpired++
		}
		h.land(h.flights[i].g) // place i now holds the last flight
	}
	h.launchFailovers(now)
}

// land ends g's flight. h.mu is held.
func (h *Host) land(g *group) {
	i, last := int(g.fo)-1, len(h.flights)-1
	h.flights[i] = h.flights[last]
	h.flights[i].g.fo = int32(i + 1)
	h.flights[last] = flight{}
	h.flights = h.flights[:last]
	g.fo = foNone
	h.stats.FailoverInFlight--
}

// won notes that g's node, in flight, was elected here: its place goes to
// the next queued group at once. h.mu is held.
func (h *Host) won(g *group) {
	h.land(g)
	h.launchFailovers(h.w.Now())
}

// launchFailovers wakes queued groups, leaderless, and makes each
// campaign, until FailoverInFlight are in flight or the queues are empty.
// A queued group that no longer needs this host (awake, its leader's host
// alive again, or another voter first alive) is skipped. h.mu is held.
func (h *Host) launchFailovers(now time.Duration) {
	for _, p := range h.peerList {
		for len(h.flights) < h.cfg.FailoverInFlight && p.foHead < len(p.failover) {
			g := p.failover[p.foHead]
			p.failover[p.foHead] = nil
			p.foHead++
			if g.fo != foQueued {
				continue
			}
			h.unqueue(g)
			if g.node != nil || g.dormant.Leader != p.id || !h.orphan(g) {
				continue
			}
			if h.wake(g, h.orphaned(g, p, true), false) != nil {
				continue
			}
			h.stats.LivenessWakes++
			_ = g.node.Campaign()
			h.flights = append(h.flights, flight{g: g, until: now + failoverWait*h.ecfg.ElectionTimeout})
			g.fo = int32(len(h.flights))
			h.stats.FailoverInFlight++
		}
		if p.foHead == len(p.failover) {
			p.failover, p.foHead = nil, 0
		}
	}
}

// orphaned returns the Dormant that g, hibernating under a leader whose
// host p is dead by liveness, resumes from to elect another: knowing that
// leader, last heard when the host last heard p (or its own record of
// its last answer, or the host's start, whichever is latest), so that
// the promise it made that leader runs from then (see
// election.Node.QuorumContact) and has run out, unless LivenessTimeout is
// shorter than the election timeout. Resumed without a leader, a replica
// would promise afresh from now (a node started in a term above 0 may
// have answered a leader just before it stopped), and refuse every
// candidate, itself included, for an election timeout: the first voter
// alive's campaign at once would be lost. campaign is set for the
// replica about to campaign (Campaign forgets the leader); a replica
// woken by another's request resumes without a leader under
// election.StickyUntilTimeout, which would keep it loyal to the dead one
// until its own timer fires. h.mu is held.
func (h *Host) orphaned(g *group, p *peer, campaign bool) election.Dormant {
	d := g.dormant
	if !campaign && h.ecfg.Stickiness == election.StickyUntilTimeout {
		return election.Dormant{Term: d.Term}
	}
	d.Contact = max(d.Contact, p.heardAt, h.born, 1) // 0 would mean never
	return d
}
