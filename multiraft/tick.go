package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
)

// onSweep runs every heartbeat interval: it hibernates the groups whose
// leader is this host and that have been idle for HibernateAfter, and
// watches the contact of its awake followers (see superviseWithin). It
// also measures how late the host runs (see overload.go).
func (h *Host) onSweep() {
	h.lock()
	defer h.unlock()
	if h.stopped {
		return
	}
	now := h.w.Now()
	h.stamp.refresh(now)
	h.noteLateness(now, now-h.sweepDue)
	// ResetAt, not Reset: a Reset from this callback, which runs long,
	// may fire up to its length late (wheel.Timer.ResetAt).
	h.sweepDue = now + h.ecfg.HeartbeatInterval
	h.sweepT.ResetAt(h.sweepDue)
	if len(h.flights) > 0 || h.stats.FailoverQueued > 0 {
		h.landFailovers(now)
	}
	if h.cfg.HibernateAfter == 0 && !h.cfg.Coalesce {
		return
	}
	// Unlist the old list's groups first, so that a group it drops
	// (asleep, or no longer leading) is listed again (listLeader) when it
	// next leads: with ExternalHeartbeat an unlisted leader heartbeats
	// only as it wins, until a sweep lists it.
	for i := range h.leadersL {
		h.leadersL[i].a.listed = false
	}
	old := len(h.leadersL)
	leaders := h.leadersL[:0] // nothing wakes during the sweep
	supervise, within := h.ecfg.ExternalContact, h.superviseWithin()
	for i := 0; i < len(h.awakeL); i++ {
		prefetchNodes(h.awakeN, i)
		if n := h.awakeN[i]; !n.Leading() { // only a leader decides; skip the others cheaply
			if supervise {
				n.SuperviseContact(now, within)
			}
			continue
		}
		g := h.awakeL[i]
		if h.cfg.HibernateAfter > 0 && h.sweepLeader(g, now) {
			i-- // the last awake group moved to index i
			continue
		}
		g.a.listed = true
		leaders = append(leaders, leaderEntry{node: g.node, a: g.a, id: g.id, voters: g.voters})
	}
	// A node may lead before its host lists it, so the sweep may list
	// more groups than the old list held: clear only a shorter list's
	// stale tail.
	if n := len(leaders); n < old {
		clear(h.leadersL[n:old])
	}
	h.leadersL = leaders
}

// listLeader adds g to the tick's leaders if its node leads and it is
// not listed. h.mu is held.
func (h *Host) listLeader(g *group) {
	if h.cfg.Coalesce && !g.a.listed && g.node.Leading() {
		g.a.listed = true
		h.leadersL = append(h.leadersL, leaderEntry{node: g.node, a: g.a, id: g.id, voters: g.voters})
	}
}

// heartbeatTick returns the period of the host's heartbeat tick for the
// groups' heartbeat interval hb: a tenth less, so that a tick that runs a
// little late still heartbeats every leader within hb, as
// election.Config.ExternalHeartbeat asks of its caller (CheckQuorum counts
// a peer silent after an unanswered heartbeat has waited hb).
func heartbeatTick(hb time.Duration) time.Duration {
	return max(hb-hb/10, 1)
}

// onHeartbeatTick runs every hbTick with Coalesce: every awake group this
// host leads heartbeats now (election.Node.BroadcastHeartbeat; with
// Coalesce the nodes run with ExternalHeartbeat and have no heartbeat
// timer of their own), so all of the host's heartbeats enter the outboxes
// together and leave in the same flush. It visits only the host's list of
// leaders (leadersL, kept by the sweep, wakes and elections), skipping the
// groups in it that sleep or no longer lead (election.Node.Leading,
// lock-free). A group elected through a vote answer, or woken as leader,
// joins the list at once and heartbeats every peer as it wins; the sweep
// lists any other (a one-voter group, which has no peer to heartbeat).
func (h *Host) onHeartbeatTick() {
	h.beginTick()
	h.tick()
	h.endTick() // the heartbeats, one batch per peer
}

// tick is onHeartbeatTick without the flush.
func (h *Host) tick() {
	h.lock()
	defer h.unlock()
	if h.stopped {
		return
	}
	now := h.w.Now()
	h.stamp.refresh(now)
	if h.metrics != nil {
		h.metrics.tickLateness(now - h.tickDue)
	}
	h.tickDue = nextTick(h.tickDue, now, h.hbTick)
	h.hbT.ResetAt(h.tickDue) // on the grid, and not late by this tick's length
	// A group that sleeps or no longer leads leaves the list here, so that
	// listed always means in the list: a group that wins again before the
	// next sweep is listed once, not twice. The list is compacted in
	// place; prefetchLeaders reads only ahead of i, which is not written.
	keep := h.leadersL[:0]
	for i, e := range h.leadersL {
		prefetchLeaders(h.leadersL, i)
		if !e.node.Leading() {
			e.a.listed = false
			continue
		}
		term, err := e.node.LeaderTickTerm(now)
		if err != nil {
			e.a.listed = false // stepped down by CheckQuorum
			continue
		}
		keep = append(keep, e)
		if term == 0 {
			continue // sent through the Transport
		}
		for _, v := range e.voters.ids {
			if v != h.id {
				h.tickOut = append(h.tickOut, tickBeat{to: v, group: e.id, term: term})
			}
		}
		if len(h.tickOut) >= tickChunk {
			h.sendHeartbeats(now)
		}
	}
	h.sendHeartbeats(now)
	clear(h.leadersL[len(keep):])
	h.leadersL = keep
}

// superviseWithin is the contact age at which the sweep arms an awake
// follower's election timer (election.Config.ExternalContact: a follower
// that heard its leader keeps none, and election.Node.SuperviseContact
// arms it for a fresh timeout after the last contact): ElectionTimeout
// less one and a half sweep periods, and at least a heartbeat interval,
// so that the timer is armed before it is due unless the sweep runs more
// than half a period late. The sweep visits every awake node already (to
// find the leaders); a follower costs it the load of its parked flag.
func (h *Host) superviseWithin() time.Duration {
	hb := h.ecfg.HeartbeatInterval
	return max(h.ecfg.ElectionTimeout-hb-hb/2, hb)
}

// nextTick returns the deadline of the tick after one due at due that
// runs at now, period apart: the tick keeps its rate, so that a tick that
// ran late does not push every later one back (a tick re-armed from when
// it ran heartbeats once per period plus its lateness, and its leaders'
// heartbeats then come that much less often than the period). A tick
// half a period or more late is not made up for: the next is a period
// after now, so that a host that falls behind sheds the ticks it cannot
// run rather than running them closer together (the overload tests'
// failovers get slower when it does: their hosts have more work queued).
func nextTick(due, now, period time.Duration) time.Duration {
	if now-due < period/2 {
		return due + period
	}
	return now + period
}

// tickChunk is how many heartbeats the tick gathers before it queues
// them in their outboxes, with one lock per outbox.
const tickChunk = 512

// tickBeat is a heartbeat the tick gathered: of term, for group's
// replica on peer to, sent at the tick's time.
type tickBeat struct {
	to    election.ID
	group GroupID
	term  uint64
}

// sendHeartbeats queues the heartbeats the tick gathered (h.tickOut),
// sent at now, in their peers' outboxes, as send queues one each, and
// empties h.tickOut. h.mu is held.
func (h *Host) sendHeartbeats(now time.Duration) {
	out := h.tickOut
	for len(out) > 0 {
		to := out[0].to
		ob := h.outboxOf(to)
		ob.mu.Lock()
		ob.b.Heartbeats = hbPool.reserve(ob.b.Heartbeats, ob.hbCap-len(ob.b.Heartbeats))
		n := 0
		for i := range out {
			if b := &out[i]; b.to == to && b.term != 0 {
				ob.b.Heartbeats = append(ob.b.Heartbeats, Heartbeat{Group: b.group, Term: b.term, Sent: now})
				b.term = 0 // taken
				n++
			}
		}
		ob.loose = ob.loose || !h.ticking.Load()
		ob.stats.messages += int64(n)
		ob.stats.heartbeats += int64(n)
		ob.mu.Unlock()
		for len(out) > 0 && out[0].term == 0 {
			out = out[1:]
		}
	}
	h.tickOut = h.tickOut[:0]
}
