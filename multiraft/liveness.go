package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
)

// leaderAlive reports whether node id is alive as far as liveness knows.
func (h *Host) leaderAlive(id election.ID) bool {
	p := h.peers[id]
	return p == nil || p.alive
}

// heard records a batch from p: it is alive, and its timer restarts for
// livenessWait. If p was down, the groups still queued for failover from
// it stay asleep, and those whose quorum p completes are queued.
func (h *Host) heard(p *peer) {
	p.timer.Reset(h.livenessWait(p))
	p.heldOnce = false
	if p.alive {
		return
	}
	p.alive = true
	p.up.Store(true)
	h.stats.PeersUp++
	h.dropFailover(p)
	// Groups left asleep for lack of a quorum alive may have one now.
	h.queueFailover()
	// The groups this host leads that hibernated without p's replica
	// wake, so that their heartbeats bring it up to date (it may believe
	// in an older term's leader, or lead one itself).
	for _, g := range h.all {
		if g.node == nil && g.behind != 0 && g.dormant.Leader == h.id {
			if i := g.voters.index(p.id); i >= 0 && g.behind&bit(i) != 0 {
				_ = h.wake(g, g.dormant, false)
			}
		}
	}
}

// onPeerSilent is p's liveness timer: no batch of p was stepped for a
// liveness timeout. If the host has been stepping batches of other peers
// for at least half a liveness timeout since p's last, it is processing
// what reaches it, and p is silent: p is down, every hold on p's silence
// ends (see overload.go), the awake groups it led that this host is the
// first voter alive of campaign, and the hibernating ones are queued for
// failover (see failover.go). If not (it stepped nothing from anyone, or
// only just started again after a stall, with p's batches perhaps still
// queued), the silence may be its own backlog: the verdict waits one more
// liveness timeout, once.
func (h *Host) onPeerSilent(p *peer) {
	h.lock()
	defer h.unlock()
	if h.stopped || !p.alive || h.w.Now() < p.silentAt {
		return // a batch re-armed the timer after it came due
	}
	now := h.w.Now()
	if (p.othersFrom < 0 || now-p.othersFrom < h.cfg.LivenessTimeout/2) && !p.heldOnce {
		p.heldOnce = true
		h.stats.LivenessHolds++
		p.silentAt = now + h.cfg.LivenessTimeout
		p.timer.Reset(h.cfg.LivenessTimeout)
		return
	}
	p.alive = false
	p.up.Store(false)
	p.downAt.Store(int64(h.w.Now()))
	h.stats.PeersDown++
	h.campaignForDown(p.id)
	h.queueFailover()
}

// onPing tells every peer the host is alive if it sent the peer nothing
// since the last tick (LivenessInterval), and reports the host's metrics.
func (h *Host) onPing() {
	h.lock()
	if h.stopped {
		h.unlock()
		return
	}
	h.pingT.Reset(h.cfg.LivenessInterval)
	to := h.peerIDs // sorted; only grows, under h.mu
	h.unlock()
	h.outMu.Lock()
	var quiet []election.ID
	for _, id := range to {
		ob := h.outboxFor(id)
		ob.mu.Lock()
		if !ob.sent {
			quiet = append(quiet, id)
			ob.stats.batches++
			ob.stats.liveness++
		}
		ob.sent = false
		ob.mu.Unlock()
	}
	h.outMu.Unlock()
	for _, id := range quiet {
		h.tr.Send(Batch{From: h.id, To: id})
	}
	if h.metrics != nil {
		h.metrics.report(h.Stats())
	}
}

// campaignForDown makes the awake groups whose leader was the peer down,
// and in which this host is the first of the voters alive by its
// liveness, campaign at once. The other survivors' election timers run
// their course: on a host that is behind, a round takes longer than the
// spread of their random timeouts, and survivors that all campaigned as
// their timers came due would split the votes round after round; one
// known candidate per group wins at its first round whenever the others
// hear its requests before their own timers come due. h.mu is held.
func (h *Host) campaignForDown(down election.ID) {
	for _, g := range h.awakeL {
		if st := g.node.Status(); st.Role != election.Follower || st.Leader != down || h.firstAlive(g) != h.id {
			continue
		}
		if g.node.Campaign() == nil {
			h.stats.LivenessCampaigns++
		}
	}
}

// firstAlive returns g's first voter, in Voters' order, that is this host
// or a peer alive by its liveness. h.mu is held.
func (h *Host) firstAlive(g *group) election.ID {
	for _, id := range g.voters.ids {
		if id == h.id || h.leaderAlive(id) {
			return id
		}
	}
	return election.None
}

// livenessWait notes a batch of p stepped now and returns how long p may
// now stay silent: LivenessTimeout, or twice the longest recent gap
// between p's batches if that is longer (a peer host that runs behind
// sends in bursts), but at most LivenessTimeout plus two election
// timeouts. The longest gap halves every two election timeouts. h.mu is
// held.
func (h *Host) livenessWait(p *peer) time.Duration {
	now := h.w.Now()
	var gap time.Duration
	if p.heardAt > 0 || p.gap.v > 0 {
		gap = p.gap.note(now-p.heardAt, now, 2*h.ecfg.ElectionTimeout)
	}
	p.heardAt = now
	wait := min(max(h.cfg.LivenessTimeout, 2*gap), h.cfg.LivenessTimeout+2*h.ecfg.ElectionTimeout)
	p.silentAt = now + wait
	return wait
}
