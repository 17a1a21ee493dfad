package election

import (
	"time"

	"github.com/raftick/raftick/internal/quorum"
)

// BroadcastHeartbeat makes a leader send a heartbeat to every voter now
// and re-arms its heartbeat timer, so the next one follows a full
// HeartbeatInterval later (the simulator's "synchronized heartbeat" before
// it kills a leader). With Config.ExternalHeartbeat it is how the leader
// heartbeats at all: the caller must call it at least every
// HeartbeatInterval. It returns ErrNotStarted, ErrStopped or ErrNotLeader.
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

// LeaderTick is BroadcastHeartbeat for a host that drives many leaders
// from one tick (Config.ExternalHeartbeat), at now, the node's wheel time
// read by the caller once for many nodes (not later than the wheel's
// time): with CheckQuorum and Config.ExternalCheckQuorum it first checks
// the quorum as the step-down timer would, and a leader that finds it
// lost steps down (ErrNotLeader) instead of heartbeating. The heartbeats
// are appended to out and returned, for the caller to send, when nothing
// else waits to be sent before them (the node's state is durable, no
// message or event is queued); otherwise they go to the Transport as
// BroadcastHeartbeat sends them, and out is returned as it was. It
// returns ErrNotStarted, ErrStopped or ErrNotLeader.
func (n *Node) LeaderTick(now time.Duration, out []Message) ([]Message, error) {
	term, err := n.LeaderTickTerm(now)
	if term != 0 {
		for _, p := range n.peerList() { // immutable: read without the lock
			out = append(out, Message{Type: MsgHeartbeat, From: n.id, To: p, Term: term, Sent: now})
		}
	}
	return out, err
}

// LeaderTickTerm is LeaderTick for a caller that makes the heartbeats
// itself, in a form of its own (a multi-raft host's coalesced entries):
// where LeaderTick would append them to out, it returns the term they
// carry, and the caller sends a heartbeat of that term, sent at now, to
// every voter but the node (Config.Voters). It returns 0 when the caller
// has nothing to send: the heartbeats went to the Transport, as
// LeaderTick's do then, or err is not nil.
func (n *Node) LeaderTickTerm(now time.Duration) (term uint64, err error) {
	term, _, err = n.LeaderTickHeard(now, noTime, 0)
	return term, err
}

// LeaderTickHeard is LeaderTickTerm for a caller that tallies its peers'
// answers itself (a multi-raft host counts, per peer, the answers to the
// heartbeats its tick sent): heardAt and heardTerm vouch that a quorum
// of the voters (the node counting as one) answered the heartbeats of
// term heardTerm that the node returned from LeaderTickTerm or
// LeaderTickHeard at heardAt (heardAt < 0: nothing vouched). If the
// node still leads in heardTerm and heardAt is within the lease
// (ElectionTimeout times LeaseRatio), every peer of that
// quorum has answered since heardAt and none of them is silent, so the
// node takes its CheckQuorum as passed without judging it (vouched; no
// raftick.election.leader.last_contact sample) and heartbeats. A caller
// that vouches wrongly keeps a leader that lost its quorum leading until
// a check it does not vouch for; the lease (Node.QuorumContact) is
// judged from the answers themselves and is not extended by it.
func (n *Node) LeaderTickHeard(now, heardAt time.Duration, heardTerm uint64) (term uint64, vouched bool, err error) {
	if err := n.lockUsable(); err != nil {
		return 0, false, err
	}
	if n.role != Leader {
		n.mu.Unlock()
		return 0, false, ErrNotLeader
	}
	if n.tickCQ {
		vouched = heardAt >= 0 && heardTerm == n.term && heardAt <= now && now-heardAt <= n.leaseD
		if !vouched && !n.checkQuorum(now) {
			n.unlockAndFlush()
			return 0, false, ErrNotLeader
		}
	}
	if n.holding || len(n.outbox) > 0 || len(n.events) > 0 {
		n.broadcastHeartbeatAt(now)
	} else {
		for i := range n.peerList() {
			n.acks[i].Sent(now)
			n.sent++
		}
		term = n.term
	}
	n.restartHeartbeats()
	n.openLeaderGate()
	n.unlockAndFlush()
	return term, vouched, nil
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
	if !n.hbTimers {
		return
	}
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
	n.votes.Clear()
	n.voteT.Stop()
	n.stopElectionTimer()
	n.lastContact, n.hasContact = now, true
	n.transferring = false
	n.resetAcks()
	for i := range n.acks {
		// Grace period for CheckQuorum: the first check needs answers
		// from after now. No lease: that needs heartbeats answered.
		n.acks[i] = quorum.Ack{At: now, Since: quorum.None, Lease: quorum.None}
	}
	n.resetPriority()
	n.voteJ.leaderKnown()
	n.stats.LeaderElected++
	n.logger.Info("elected leader", "term", n.term)
	n.emit(EventLeaderElected, None, "")
	n.broadcastHeartbeat()
	n.restartHeartbeats()
	n.startStepDownTimer()
}

// startStepDownTimer arms a new leader's step-down timer, if it checks
// the quorum itself (CheckQuorum without ExternalCheckQuorum).
func (n *Node) startStepDownTimer() {
	if n.cfg.CheckQuorum && !n.cfg.ExternalCheckQuorum {
		n.stepDownT.Restart()
	}
}

func (n *Node) broadcastHeartbeat() { n.broadcastHeartbeatAt(n.w.Now()) }

// broadcastHeartbeatAt heartbeats every peer at now.
func (n *Node) broadcastHeartbeatAt(now time.Duration) {
	for i, p := range n.peers {
		n.sendHeartbeat(i, p, now)
	}
}

// sendHeartbeat sends a heartbeat to peer p, the i-th of peers, and
// notes it as unanswered from now if every earlier one was answered.
func (n *Node) sendHeartbeat(i int, p ID, now time.Duration) {
	n.acks[i].Sent(now)
	n.send(Message{Type: MsgHeartbeat, To: p, Term: n.term, Sent: now})
}

// handleHeartbeatResp acts on a heartbeat's answer stepped at now
// (noTime: the wheel's time).
func (n *Node) handleHeartbeatResp(m Message, now time.Duration) {
	switch {
	case m.Term > n.term:
		n.stepDown(m.Term, ReasonHigherTerm, m.From)
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
	case n.role != Leader:
		n.ignore(m, &n.stats.IgnoredOther, ReasonUnexpected)
	default:
		if i := n.peerIndex(m.From); i >= 0 {
			if now == noTime {
				now = n.w.Now()
			}
			n.acks[i].Answered(now, m.Sent)
			n.openLeaderGate()
		}
	}
}

// noTime marks an unset time, as quorum.None does (wheel times are never
// negative).
const noTime = quorum.None

// resetAcks gives a new leader empty acks: no answer, nothing waiting.
func (n *Node) resetAcks() {
	if cap(n.acks) >= len(n.peers) {
		n.acks = n.acks[:len(n.peers)]
	} else {
		n.acks = make([]quorum.Ack, len(n.peers))
	}
	for i := range n.acks {
		n.acks[i] = quorum.NoAck
	}
}
