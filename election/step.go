package election

import (
	"slices"
	"strings"
)

// logOK applies Raft's up-to-date rule to a candidate's last entry.
func (n *Node) logOK(m Message) bool {
	idx, term := n.lv.Last()
	return m.LastLogTerm > term || (m.LastLogTerm == term && m.LastLogIndex >= idx)
}

// Step delivers an inbound message. Messages that are malformed, not for
// this node, from an unknown sender, stale or unexpected are ignored,
// counted in Stats and reported as EventIgnored; Step never panics on
// them. Messages before Start or after Stop are ignored and counted.
//
// A heartbeat from the known leader of the node's term is the hot path of
// a process hosting many groups: it locks the node once, reads the clock
// once, re-arms the election timer without the timer's lock where that
// means the same as restarting it (see Config.ElectionJitter), queues the
// answer inside the Node and sends it without locking again. It
// allocates nothing.
func (n *Node) Step(m Message) {
	n.mu.Lock()
	n.received++
	if n.usable() != nil {
		n.stats.IgnoredStopped++
		n.mu.Unlock()
		return
	}
	switch {
	case m.To != n.id:
		n.ignore(m, &n.stats.IgnoredWrongTo, ReasonWrongTo)
	case m.From == n.id || !n.isVoter(m.From):
		n.ignore(m, &n.stats.IgnoredUnknown, ReasonUnknownSender)
	default:
		if err := m.Validate(); err != nil {
			n.ignore(m, &n.stats.IgnoredMalformed, strings.TrimPrefix(err.Error(), "election: "))
		} else {
			n.step(m)
		}
	}
	n.unlockAndFlush()
}

// isVoter reports whether id is a voter. For the few voters of a Raft
// group it scans peers instead of looking up the voter map: Step runs on
// nodes whose memory is cold when a host drives many of them, and the
// map costs a cache miss more than the slice.
func (n *Node) isVoter(id ID) bool {
	if len(n.peers) <= 8 {
		return id == n.id || slices.Contains(n.peers, id)
	}
	return n.voter[id]
}

func (n *Node) step(m Message) {
	switch m.Type {
	case MsgHeartbeat:
		n.handleHeartbeat(m)
	case MsgHeartbeatResp:
		n.handleHeartbeatResp(m)
	case MsgPreVote:
		n.handlePreVote(m)
	case MsgPreVoteResp:
		n.handlePreVoteResp(m)
	case MsgVote:
		n.handleVote(m)
	case MsgVoteResp:
		n.handleVoteResp(m)
	case MsgTimeoutNow:
		n.handleTimeoutNow(m)
	}
}

func (n *Node) handleHeartbeat(m Message) {
	if m.Term < n.term {
		// Tell the stale leader about our term so that it steps down.
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		n.send(Message{Type: MsgHeartbeatResp, To: m.From, Term: n.term})
		return
	}
	if m.Term == n.term && n.role == Leader {
		n.anomaly(m, ReasonAnomalyLeaders)
		return
	}
	if m.Term > n.term || n.role != Follower {
		reason := ReasonLeaderHB
		if m.Term > n.term {
			reason = ReasonHigherTerm
		}
		if !n.stepDown(m.Term, reason, m.From) {
			return
		}
	}
	if n.leader != m.From {
		if n.leader != None {
			n.anomaly(m, ReasonAnomalyLeaders)
			return
		}
		n.leader = m.From
		n.resetPriority()
		n.voteJ.leaderKnown()
		n.logger.Debug("leader known", "leader", m.From, "term", n.term)
		n.emit(EventLeaderKnown, m.From, "")
	}
	now := n.w.Now()
	n.lastContact, n.hasContact = now, true
	n.promise(now, m.From)
	n.resetElectionTimer(now)
	n.send(Message{Type: MsgHeartbeatResp, To: m.From, Term: n.term, Granted: true, Sent: m.Sent})
}

func (n *Node) anomaly(m Message, reason string) {
	n.logger.Error("anomaly", "msg", m.String(), "reason", reason, "term", n.term, "role", n.role, "leader", n.leader)
	n.ignore(m, &n.stats.Anomalies, reason)
}
