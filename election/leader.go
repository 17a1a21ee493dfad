package election

import (
	"time"
)

// BroadcastHeartbeat makes a leader send a heartbeat to every voter now
// and re-arms its heartbeat timer, so the next one follows a full
// HeartbeatInterval later (the simulator's "synchronized heartbeat" before
// it kills a leader). It returns ErrNotStarted, ErrStopped or ErrNotLeader.
func (n *Node) BroadcastHeartbeat() error {
	if err := n.lockUsable(); err != nil {
		return err
	}
	if n.role != Leader {
		n.mu.Unlock()
		return ErrNotLeader
	}
	n.broadcastHeartbeat()
	n.restartHeartbeats()
	n.unlockAndFlush()
	return nil
}

// stopHeartbeats stops the leader's heartbeat timer(s).
func (n *Node) stopHeartbeats() {
	if n.heartbeatT != nil {
		n.heartbeatT.Stop()
	}
	for _, t := range n.peerHeartbeatT {
		t.Stop()
	}
}

// restartHeartbeats (re)arms the leader's heartbeat timer(s) with fresh
// periods.
func (n *Node) restartHeartbeats() {
	if n.heartbeatT != nil {
		n.heartbeatT.Restart()
	}
	for _, t := range n.peerHeartbeatT {
		t.Restart()
	}
}

func (n *Node) becomeLeader() {
	now := n.w.Now()
	n.leader = n.id
	n.setRole(Leader, ReasonWon)
	n.votes = nil
	n.voteT.Stop()
	n.stopElectionTimer()
	n.lastContact, n.hasContact = now, true
	n.acks = make(map[ID]time.Duration, len(n.peers))
	for _, p := range n.peers {
		n.acks[p] = now // grace period: the first check-quorum tick needs answers from after now
	}
	n.resetPriority()
	n.voteJ.leaderKnown()
	n.stats.LeaderElected++
	n.logger.Info("elected leader", "term", n.term)
	n.emit(EventLeaderElected, None, "")
	n.broadcastHeartbeat()
	n.restartHeartbeats()
	if n.cfg.CheckQuorum {
		n.stepDownT.Restart()
	}
}

func (n *Node) broadcastHeartbeat() {
	for _, p := range n.peers {
		n.send(Message{Type: MsgHeartbeat, To: p, Term: n.term})
	}
}

func (n *Node) handleHeartbeatResp(m Message) {
	switch {
	case m.Term > n.term:
		n.stepDown(m.Term, ReasonHigherTerm, m.From)
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
	case n.role != Leader:
		n.ignore(m, &n.stats.IgnoredOther, ReasonUnexpected)
	default:
		n.acks[m.From] = n.w.Now()
	}
}
