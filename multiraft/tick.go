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
	due := h.sweepDue
	h.noteLateness(now, now-due)
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
	if h.sweeping {
		// The last sweep is not done (its continuation has not run): it
		// ends first, at once.
		h.sweepUntil = 0
		h.sweepSome()
	}
	h.sweeping, h.sweepI = true, len(h.awakeL)
	h.sweepUntil = yieldUntil(now, due, h.ecfg.HeartbeatInterval)
	h.sweepSome()
}

// onSweepMore continues the sweep, if the next did not end it first.
func (h *Host) onSweepMore() {
	h.lock()
	defer h.unlock()
	if !h.stopped && h.sweeping {
		h.sweepSome()
	}
}

// sweepNodes is how many awake nodes the sweep visits per callback of
// the wheel's driver (sweepMoreT continues it): a sweep of 20k awake
// replicas takes about a millisecond and a half, which the host's tick,
// and other hosts' on the same wheel, would wait for.
const sweepNodes = 4096

// sweepSome visits the sweep's next sweepNodes awake nodes, and reports
// whether the sweep is done. The sweep lists the leaders that are not
// listed (a one-voter group, which wins without a vote answer) and puts
// idle ones to sleep; the tick drops the entries of groups that sleep or
// no longer lead, and the entries it keeps keep what it noted of them
// (leaderEntry.term). It goes down the awake list from its end (sweepI
// is the last index not visited, plus one): a group woken meanwhile joins
// the end, and a group put to sleep moves the last awake group into its
// place (setAsleep), one visited already or woken since the sweep began
// unless the list's end is not visited yet, so every group awake
// throughout is visited once (one woken during the sweep by the next).
// It yields the driver until sweepUntil (see yieldUntil), then goes on at
// once. h.mu is held.
func (h *Host) sweepSome() bool {
	supervise, within := h.ecfg.ExternalContact, h.superviseWithin()
	for {
		now := h.w.Now()
		// Groups put to sleep meanwhile (a leader's Hibernate, a Step)
		// may have shortened the list below the part not visited.
		h.sweepI = min(h.sweepI, len(h.awakeL))
		stop := max(h.sweepI-sweepNodes, 0)
		for i := h.sweepI - 1; i >= stop; i-- {
			prefetchNodes(h.awakeN, i)
			if n := h.awakeN[i]; !n.Leading() { // only a leader decides; skip the others cheaply
				if supervise {
					n.SuperviseContact(now, within)
				}
				continue
			}
			a := h.awakeA[i]
			if h.cfg.HibernateAfter > 0 && !h.sweepBusy(a, now) && h.sweepLeader(h.awakeL[i], now) {
				continue // asleep: a visited group took its place
			}
			if !a.listed {
				h.listLeader(h.awakeL[i])
			}
		}
		h.sweepI = stop
		if stop == 0 {
			h.sweeping = false
			return true
		}
		if now < h.sweepUntil {
			h.sweepMoreT.ResetAt(now)
			return false
		}
	}
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
//
// The leaders' CheckQuorum verdicts that the peers' answers vouch for are
// taken at the tick's start (beats.go). The walk over the leaders then
// goes walkLeaders leaders per callback of the wheel's driver (walkT, due
// at once, continues it), so that the other timers on the wheel, other
// hosts' ticks among them, wait for a chunk rather than a whole walk;
// it yields so only while the driver keeps time (see yieldUntil), for
// the heartbeats leave when the walk ends.
func (h *Host) onHeartbeatTick() {
	h.beginTick()
	if h.tick() {
		h.endTick() // the heartbeats, one batch per peer
	}
}

// onWalk continues the tick's walk, if a tick did not end it first.
func (h *Host) onWalk() {
	h.lock()
	done := h.stopped || h.walking && h.walkSome()
	h.unlock()
	if done {
		h.endTick()
	}
}

// walkLeaders is how many leaders the tick visits per callback: about
// 0.1ms of a 2-core machine's time at 100k groups.
const walkLeaders = 1024

// tick begins a heartbeat tick and walks its first chunk of leaders; it
// reports whether the walk is done (true also if the host is stopped).
func (h *Host) tick() bool {
	h.lock()
	defer h.unlock()
	if h.stopped {
		return true
	}
	now := h.w.Now()
	h.stamp.refresh(now)
	if h.metrics != nil {
		h.metrics.tickLateness(now - h.tickDue)
	}
	until := yieldUntil(now, h.tickDue, h.hbTick)
	h.tickDue = nextTick(h.tickDue, now, h.hbTick)
	h.hbT.ResetAt(h.tickDue) // on the grid, and not late by this tick's length
	if h.walking {
		// The last tick's walk is not done (its continuation has not
		// run): it ends first, at once, its heartbeats leaving with
		// this tick's.
		h.walkUntil = 0
		h.walkSome()
	}
	h.walkUntil = until
	// The quorums the last tick's answers vouch for are judged here, at
	// the tick's start, for every leader at once (see beats.go).
	h.beginBeats(now)
	h.walking, h.walkAt, h.walkI, h.walkK, h.vouched = true, now, 0, 0, 0
	return h.walkSome()
}

// walkSome visits the next walkLeaders leaders of the tick's walk, and
// reports whether the walk is done; if not, walkT continues it (until
// walkUntil; then the walk goes on at once). A group that sleeps or no
// longer leads leaves the list here, so that listed always means in the
// list: a group that wins again before the next sweep is listed once,
// not twice. The list is compacted in place (the kept entries before
// walkK, the ones to visit from walkI); a group listed during the walk
// joins its end and is visited by it; prefetchLeaders reads only ahead
// of i, which is not written. h.mu is held.
func (h *Host) walkSome() bool {
	for {
		end := min(len(h.leadersL), h.walkI+walkLeaders)
		h.walkChunk(end)
		if end == len(h.leadersL) {
			break
		}
		if now := h.w.Now(); now < h.walkUntil {
			h.walkT.ResetAt(now)
			return false
		}
	}
	clear(h.leadersL[h.walkK:])
	h.leadersL = h.leadersL[:h.walkK]
	h.walking = false
	if h.metrics != nil && h.vouched > 0 {
		h.metrics.quorumHeard(h.vouched)
	}
	return true
}

// walkChunk visits the walk's leaders up to index end. h.mu is held.
func (h *Host) walkChunk(end int) {
	now := h.walkAt
	for i := h.walkI; i < end; i++ {
		e := h.leadersL[i]
		prefetchLeaders(h.leadersL, i)
		if !e.node.Leading() {
			e.a.listed = false
			continue
		}
		heard := time.Duration(-1)
		if e.term != 0 {
			heard = h.heardFrom(e.voters)
		}
		term, ok, err := e.node.LeaderTickHeard(now, heard, e.term)
		if err != nil {
			e.a.listed = false // stepped down by CheckQuorum
			continue
		}
		if ok {
			h.vouched++
		}
		e.term = term
		h.leadersL[h.walkK] = e
		h.walkK++
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
	h.walkI = end
	h.sendHeartbeats(now)
}

// yieldUntil returns until when a tick's walk or a sweep that runs at
// now, due at due every period, may yield the wheel's driver between its
// chunks: a tenth of the period if it began at most that late, and not
// at all otherwise. A driver behind by L runs each continuation L late
// (it runs the timers due before it first), so a walk that yielded on it
// would send its heartbeats a multiple of L late: at 50k groups, on a
// busy machine, a walk that yielded whenever it had lasted less than a
// tenth of its period made followers time out.
func yieldUntil(now, due, period time.Duration) time.Duration {
	span := period / 10
	if now-due > span {
		return now
	}
	return now + span
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
		ob.beats.sentIn(h.beatSeq, n)
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
