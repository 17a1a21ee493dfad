package multiraft

import (
	"github.com/raftick/raftick/election"
)

// leaderAlive reports whether node id is alive as far as liveness knows.
func (h *Host) leaderAlive(id election.ID) bool {
	p := h.peers[id]
	return p == nil || p.alive
}

// heard records a batch from p: it is alive, and its timer restarts.
func (h *Host) heard(p *peer) {
	p.timer.Reset(h.cfg.LivenessTimeout)
	if p.alive {
		return
	}
	p.alive = true
	h.stats.PeersUp++
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

// onPeerSilent is p's liveness timer: p fell silent. Every hibernating
// group whose leader p was wakes without a leader, to elect another;
// unless the host is behind, when the timer is re-armed instead.
func (h *Host) onPeerSilent(p *peer) {
	h.lock()
	defer h.unlock()
	if h.stopped || !p.alive {
		return
	}
	if h.behind.Load() {
		// The peer's batches may be waiting in this host's own backlog: its
		// silence counts no more than a leader's does while the host is
		// behind (see lagging). Look again a liveness timeout later.
		p.timer.Reset(h.cfg.LivenessTimeout)
		return
	}
	p.alive = false
	h.stats.PeersDown++
	for _, g := range h.all {
		if g.node == nil && g.dormant.Leader == p.id {
			if h.wake(g, election.Dormant{Term: g.dormant.Term}, false) == nil {
				h.stats.LivenessWakes++
			}
		}
	}
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
