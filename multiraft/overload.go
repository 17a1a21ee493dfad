package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
)

// A host that cannot keep up (its processor taken by other work, or more
// groups than it can serve) runs its timers late and steps its inbound
// batches late. A follower's election timer may then come due before the
// heartbeat that would have reset it is stepped, a leader's CheckQuorum
// may find answers missing that wait in its backlog or in the peer's,
// and the elections that follow add votes, new leaders' heartbeats and
// step-downs to the work the host is already behind on: the overload
// feeds itself and outlasts its cause.
//
// The host judges a silence by what it has processed, not by its clock
// alone, per peer host, from the batches that peer sends it anyway:
//
//   - Every heartbeat tick of a peer sends this host one tick batch
//     (Batch.Tick) with a heartbeat of every group the peer leads. A
//     follower whose election timer comes due was last heard at least an
//     election timeout ago; if a tick batch of its leader's host was
//     stepped since then, it lacked the group: the leader is silent and
//     the follower acts. If none was, the silence may be a backlog's (this
//     host's or the leader host's), and the timer runs on (a hold). A
//     follower that woke from hibernation also holds until the leader's
//     host has answered something sent after it woke: until that host
//     processes the follower's Wake its leader may sleep, and its ticks
//     lack the group.
//   - Every coalesced answer echoes the send time, on this host's clock,
//     of the heartbeat it answers. A leader's CheckQuorum (or a
//     candidate's round) waits for a peer's answers to what it sent since
//     some time; if the peer has answered anything sent since then, it
//     has processed the request and its silence is its own. If not, the
//     peer's host is behind (or dead), and the voter is held: counted
//     reachable, or the round kept.
//
// Every hold is bounded: a peer's silence is held only while liveness
// counts the peer's host alive (onPeerSilent: node liveness, measured the
// same way, ends every hold on a dead host's groups), and only while the
// evidence the hold waits for is younger than holdLimit (the peer's last
// tick batch stepped, or the send time of the last heartbeat it
// answered): a peer whose host stopped ticking or answering while it
// still sends other batches is held for at most holdLimit, ten election
// timeouts unless the peer's recent pace was slower (at most maxHold).
// Until a peer's first answer is stepped, a silence waiting on its
// answers is held for holdLimit from when it began, once this host has
// sent the peer a tick batch (whose answers are then due): a host that
// starts behind (every group woken at once on a busy processor) has
// heard no answer yet, and a peer it has never heard answer is as likely
// behind as gone, which liveness decides. A host that sent the peer no
// heartbeat has no answer to wait for: a candidate's round there is not
// held. (A follower's tick evidence has no such stand-in: a peer whose
// groups all sleep sends no tick batch, and its woken followers must not
// wait holdLimit on it.)
//
// The host still measures its own lateness through its sweep timer, due
// every heartbeat interval (Stats.Lateness, Behind, BehindSpells); it no
// longer holds anything on it.

// holdLimit bounds every hold: a silence is held only while the evidence
// it waits for from the peer is at most this old: ten election timeouts,
// or three times the peer's recent pace (the longest recent gap between
// its tick batches, or the round trip of its last answer) when that is
// longer, and never more than maxHold.
func (h *Host) holdLimit(pace time.Duration) time.Duration {
	et := h.ecfg.ElectionTimeout
	return min(max(10*et, 3*pace), maxHold*et)
}

// maxHold is the most election timeouts any hold lasts.
const maxHold = 100

// recentMax is the longest of some recent durations: a longer one
// replaces it, and it halves every half-life, or every twice its value
// if that is longer (a long gap is forgotten only after a few more).
type recentMax struct{ v, at time.Duration }

// note records d at now and returns the longest recent duration.
func (r *recentMax) note(d, now, halfLife time.Duration) time.Duration {
	for r.v > 0 && now-r.at >= max(halfLife, 2*r.v) {
		r.at += max(halfLife, 2*r.v)
		r.v /= 2
	}
	if d > r.v {
		r.v, r.at = d, now
	}
	return r.v
}

// lateLimit returns how late the sweep may run before the host counts as
// behind (Stats.Behind): half a heartbeat interval, and at least two of
// the wheel's ticks, beyond the lateness of a wheel that keeps up (a
// tick), so that a heartbeat interval of a tick or two does not leave the
// host behind for good.
func lateLimit(hb, tick time.Duration) time.Duration { return max(hb/2, 2*tick) }

// lagging is every node's election.Config.Lagging (see above), counting
// the silences it holds in Stats.LaggingSkips. It is called with a node's
// lock held and takes no lock. Without Coalesce there are no tick batches
// nor coalesced answers to judge by, and it holds nothing.
func (h *Host) lagging(g *group, s election.Silence) bool {
	if !h.cfg.Coalesce {
		return false
	}
	tab := *h.peerTab.Load()
	p := tab[s.Peer]
	if p == nil {
		return false
	}
	if !p.up.Load() {
		// The leader's host is down: the group's first voter alive
		// campaigns at once (campaignForDown, or failover.go if the group
		// slept); the others give it deferFirst to win before their own
		// timers act, from the verdict or from when the group woke here,
		// if later (a group that slept wakes when the first voter's
		// failover reaches it, perhaps long after the verdict).
		if s.Answers {
			return false
		}
		first := h.firstUp(g, tab)
		if first == h.id || first == election.None {
			return false
		}
		wait := deferFirst * h.ecfg.ElectionTimeout
		if q := tab[first]; q != nil {
			wait = min(max(wait, 3*time.Duration(q.answerPace.Load())), maxHold*h.ecfg.ElectionTimeout)
		}
		if h.w.Now()-max(time.Duration(p.downAt.Load()), time.Duration(g.wokeAt.Load())) >= wait {
			return false
		}
		h.laggingSkips.Add(1)
		return true
	}
	now := h.w.Now()
	if s.Answers {
		// The peer has answered nothing sent since s.Since, but answered
		// something sent within holdLimit: it is behind, not silent.
		a := p.answered.Load()
		if a < 0 {
			// No answer yet (see above): held only if this host's
			// heartbeats went to the peer, whose answers are then due.
			if p.beatsFrom.Load() < 0 {
				return false
			}
			a = int64(s.Since) - 1
		}
		if a >= int64(s.Since) || a < int64(now-h.holdLimit(time.Duration(p.answerPace.Load()))) {
			return false
		}
	} else {
		// No tick batch of the leader's host was stepped since the
		// follower last heard its leader, but one was within holdLimit;
		// or the follower woke since, and the leader's host has not yet
		// answered anything sent after that: the leader may sleep until
		// it processes the follower's Wake, and its ticks lack the group.
		t := p.tickAt.Load()
		if t < 0 || t < int64(now-h.holdLimit(time.Duration(p.tickPace.Load()))) {
			return false
		}
		if t > int64(s.Since) {
			a, w := p.answered.Load(), g.wokeAt.Load()
			if a >= w || a < int64(now-h.holdLimit(time.Duration(p.answerPace.Load()))) {
				return false
			}
		}
	}
	h.laggingSkips.Add(1)
	return true
}

// deferFirst is how many election timeouts the survivors of a group
// whose leader's host went down wait for its first voter alive to win
// before their own timers act (counted from the verdict, or from the
// group's wake if later): that, or three times the first voter's recent
// answer round trip if longer (a round takes two), at most 100.
const deferFirst = 2

// firstUp is firstAlive without Host.mu, for lagging.
func (h *Host) firstUp(g *group, tab map[election.ID]*peer) election.ID {
	for _, id := range g.voters.ids {
		if p := tab[id]; id == h.id || p != nil && p.up.Load() {
			return id
		}
	}
	return election.None
}

// processed records that the host finished stepping batch b from peer p,
// which it began to step at begun: a tick batch's begun, the latest send
// time its answers echo. h.mu is held.
func (h *Host) processed(p *peer, b *Batch, begun time.Duration) {
	now := h.w.Now()
	// p's silence, if any, starts counting the others' batches afresh;
	// the others' silences have a batch of p stepped since they began.
	p.othersFrom = -1
	for _, q := range h.peerList {
		if q != p && q.othersFrom < 0 {
			q.othersFrom = now
		}
	}
	halfLife := 2 * h.ecfg.ElectionTimeout
	if last := p.tickAt.Load(); b.Tick && int64(begun) > last {
		if last >= 0 {
			p.tickPace.Store(int64(p.tickGap.note(begun-time.Duration(last), now, halfLife)))
		}
		p.tickAt.Store(int64(begun))
	}
	if len(b.Responses) == 0 {
		return
	}
	latest := time.Duration(-1)
	for i := range b.Responses {
		latest = max(latest, b.Responses[i].Sent)
	}
	if latest > time.Duration(p.answered.Load()) && latest <= now {
		p.answerPace.Store(int64(p.answerLag.note(now-latest, now, halfLife)))
		p.answered.Store(int64(latest))
		p.answeredAt.Store(int64(now))
	}
}

// noteLateness records that the sweep ran late by late at now. The host
// is behind (Stats.Behind) from a sweep late by more than lateLimit until
// its sweeps have run on time for an election timeout. h.mu is held.
func (h *Host) noteLateness(now, late time.Duration) {
	h.lateness = late
	h.maxLateness = max(h.maxLateness, late)
	if late > lateLimit(h.ecfg.HeartbeatInterval, h.w.Tick()) {
		h.lateAt, h.wasLate = now, true
	}
	behind := h.wasLate && now-h.lateAt < h.ecfg.ElectionTimeout
	if behind && !h.behind.Load() {
		h.stats.BehindSpells++
	}
	h.behind.Store(behind)
}
