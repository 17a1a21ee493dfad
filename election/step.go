package election

import (
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/raftick/raftick/internal/prefetch"
	"github.com/raftick/raftick/internal/quorum"
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
// means the same as restarting it (see Config.ElectionJitter), and sends
// its answer, built on the stack, once the node is unlocked, without
// locking it again. It allocates nothing and, with many nodes, touches
// five cache lines of its node (see Node's layout).
func (n *Node) Step(m Message) {
	// Hint the lines a heartbeat touches beyond the first two, which the
	// lock's own miss brings: with many nodes their misses then overlap
	// with the lock's instead of following it, since a locked instruction
	// holds back later loads but not a prefetch issued before it.
	if m.Type == MsgHeartbeat {
		from := unsafe.Offsetof(n.outbox) &^ 63
		prefetch.Range(uintptr(unsafe.Pointer(n))+from, unsafe.Offsetof(n.electionT)+2*64-from)
	}
	if a, direct := n.stepAt(m, noTime); direct {
		// The answer is all the step produced: sent as unlockAndFlush
		// sends a lone message.
		n.tr.Send(a)
	}
}

// StepAt is Step for a host that steps many nodes' messages in a batch:
// now is the node's wheel time the message is stepped at, read by the
// caller once for many messages, at or after the message arrived (a
// heartbeat's contact, and an answer's time, are recorded at now), and
// the answer to a heartbeat, when it is all the step produced, is
// returned (direct set) for the caller to send, not handed to the
// Transport. Everything else the step sends goes to the Transport as
// with Step. now must not be later than the wheel's time.
func (n *Node) StepAt(m Message, now time.Duration) (answer Message, direct bool) {
	return n.stepAt(m, now)
}

// stepAt is Step and StepAt: now is noTime for the wheel's time.
func (n *Node) stepAt(m Message, now time.Duration) (answer Message, direct bool) {
	n.lock()
	n.received++
	if n.usable() != nil {
		n.stats.IgnoredStopped++
		n.mu.Unlock()
		return Message{}, false
	}
	switch {
	case m.To != n.id:
		n.ignore(m, &n.stats.IgnoredWrongTo, ReasonWrongTo)
	case m.From == n.id || !n.isVoter(m.From):
		n.ignore(m, &n.stats.IgnoredUnknown, ReasonUnknownSender)
	default:
		if err := m.Validate(); err != nil {
			n.ignore(m, &n.stats.IgnoredMalformed, strings.TrimPrefix(err.Error(), "election: "))
		} else if m.Type == MsgHeartbeatResp {
			n.handleHeartbeatResp(m, now)
		} else if m.Type != MsgHeartbeat {
			n.step(m)
		} else if a, direct := n.handleHeartbeat(m, now); direct {
			n.mu.Unlock()
			return a, true
		}
	}
	n.unlockAndFlush()
	return Message{}, false
}

// isVoter reports whether id is a voter. For groups of two to five
// voters it scans peerArr, and the node has no voter map: Step runs on
// nodes whose memory is cold when a host drives many of them, where a
// map costs cache misses, and building one costs every node an
// allocation (a host builds a node at every wake).
func (n *Node) isVoter(id ID) bool {
	if n.nPeers > 0 {
		return id == n.id || slices.Contains(n.peerArr[:n.nPeers], id)
	}
	return n.voter[id]
}

// peerList returns peers, from peerArr where it holds them (see isVoter).
func (n *Node) peerList() []ID {
	if n.nPeers > 0 {
		return n.peerArr[:n.nPeers]
	}
	return n.peers
}

// voterMajority returns the majority of the voters, without reading the cold
// state where peerArr holds the peers (see isVoter).
func (n *Node) voterMajority() quorum.Majority {
	if n.nPeers > 0 {
		return quorum.Majority(n.nPeers + 1)
	}
	return n.majority
}

// peerIndex returns the index of id in peers, or -1, reading peerArr
// inside the Node where it holds the peers (see isVoter).
func (n *Node) peerIndex(id ID) int {
	if n.nPeers > 0 {
		return slices.Index(n.peerArr[:n.nPeers], id)
	}
	return slices.Index(n.peers, id)
}

func (n *Node) step(m Message) {
	switch m.Type {
	case MsgHeartbeat:
		if a, direct := n.handleHeartbeat(m, noTime); direct {
			n.outbox = append(n.outbox, a)
		}
	case MsgHeartbeatResp:
		n.handleHeartbeatResp(m, noTime)
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

// handleHeartbeat acts on a heartbeat stepped at now (noTime: the
// wheel's time). If the node accepts it while nothing is queued to
// deliver (outbox and events empty), it counts the answer as sent and
// returns it with direct set, not queued: the caller sends it after
// unlocking (Step) or queues it. Otherwise it queues what it sends.
func (n *Node) handleHeartbeat(m Message, now time.Duration) (answer Message, direct bool) {
	if m.Term < n.term {
		// Tell the stale leader about our term so that it steps down.
		n.ignore(m, &n.stats.IgnoredStale, ReasonStale)
		n.send(Message{Type: MsgHeartbeatResp, To: m.From, Term: n.term})
		return Message{}, false
	}
	if m.Term == n.term && n.role == Leader {
		n.anomaly(m, ReasonAnomalyLeaders)
		return Message{}, false
	}
	if m.Term > n.term || n.role != Follower {
		reason := ReasonLeaderHB
		if m.Term > n.term {
			reason = ReasonHigherTerm
		}
		if !n.stepDown(m.Term, reason, m.From) {
			return Message{}, false
		}
	}
	if n.leader != m.From {
		if n.leader != None {
			n.anomaly(m, ReasonAnomalyLeaders)
			return Message{}, false
		}
		n.leader = m.From
		n.resetPriority()
		n.voteJ.leaderKnown()
		n.logger.Debug("leader known", "leader", m.From, "term", n.term)
		n.emit(EventLeaderKnown, m.From, "")
	}
	if now == noTime {
		now = n.w.Now()
	}
	n.lastContact, n.hasContact = now, true
	n.promise(now, m.From)
	n.heardLeader(now)
	a := Message{Type: MsgHeartbeatResp, From: n.id, To: m.From, Term: n.term, Granted: true, Sent: m.Sent}
	if len(n.outbox) == 0 && len(n.events) == 0 && !n.holding {
		n.sent++
		n.openGate(now)
		return a, true
	}
	n.send(a)
	return Message{}, false
}

func (n *Node) anomaly(m Message, reason string) {
	n.logger.Error("anomaly", "msg", m.String(), "reason", reason, "term", n.term, "role", n.role, "leader", n.leader)
	n.ignore(m, &n.stats.Anomalies, reason)
}
