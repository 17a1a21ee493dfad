package election

import (
	"fmt"
	"time"
)

// ID identifies a node of a Raft group. The zero ID means "none".
type ID uint64

// None is the zero ID: no node, no leader, no vote.
const None ID = 0

// MsgType is the type of a Message. The zero MsgType is invalid, so a zero
// Message is always rejected as malformed.
type MsgType uint8

// Message types. Requests and their responses.
const (
	MsgPreVote       MsgType = iota + 1 // pre-vote request (does not change anyone's term)
	MsgPreVoteResp                      // answer to MsgPreVote
	MsgVote                             // vote request (RequestVote)
	MsgVoteResp                         // answer to MsgVote
	MsgHeartbeat                        // leader's heartbeat (empty AppendEntries)
	MsgHeartbeatResp                    // answer to MsgHeartbeat
	MsgTimeoutNow                       // leadership transfer: campaign now
)

// String returns the message type's name, e.g. "MsgVote".
func (t MsgType) String() string {
	switch t {
	case MsgPreVote:
		return "MsgPreVote"
	case MsgPreVoteResp:
		return "MsgPreVoteResp"
	case MsgVote:
		return "MsgVote"
	case MsgVoteResp:
		return "MsgVoteResp"
	case MsgHeartbeat:
		return "MsgHeartbeat"
	case MsgHeartbeatResp:
		return "MsgHeartbeatResp"
	case MsgTimeoutNow:
		return "MsgTimeoutNow"
	}
	return fmt.Sprintf("MsgType(%d)", uint8(t))
}

// IsResponse reports whether t is a response type.
func (t MsgType) IsResponse() bool {
	return t == MsgPreVoteResp || t == MsgVoteResp || t == MsgHeartbeatResp
}

// Message is one election message between two nodes of a group. It is a
// plain value: transports may copy, delay, duplicate, reorder or drop it.
type Message struct {
	Type     MsgType
	From, To ID
	// Term is the sender's term. For MsgPreVote it is the term the sender
	// would campaign in (its term + 1); a granted MsgPreVoteResp echoes it.
	Term uint64
	// LastLogIndex and LastLogTerm describe the candidate's log in
	// MsgPreVote and MsgVote requests (Raft's up-to-date rule).
	LastLogIndex, LastLogTerm uint64
	// Granted is the answer of MsgPreVoteResp and MsgVoteResp; for
	// MsgHeartbeatResp it reports that the heartbeat was accepted.
	Granted bool
	// Transfer marks a MsgVote sent because of a leadership transfer
	// (MsgTimeoutNow); such requests bypass leader stickiness.
	Transfer bool
	// Priority is the candidate's election priority (informational).
	Priority int
	// Sent is, in a MsgHeartbeat, the leader's wheel time when it sent
	// the heartbeat; a MsgHeartbeatResp echoes the Sent of the heartbeat
	// it answers. The leader's lease (Node.QuorumContact) runs from when
	// the heartbeats a quorum answered were sent, not from when the
	// answers arrived: a follower that answers promises to refuse
	// candidates for an election timeout from when it heard the
	// heartbeat, which is after it was sent but may be well before its
	// answer arrives (queues, batching). 0 means unknown: such an answer
	// counts for CheckQuorum but never extends the lease. A transport
	// must carry it unchanged.
	Sent time.Duration
}

// String formats the message compactly, e.g. "MsgVote 1->2 t5 log(3,2)".
func (m Message) String() string {
	s := fmt.Sprintf("%s %d->%d t%d", m.Type, m.From, m.To, m.Term)
	switch m.Type {
	case MsgPreVote, MsgVote:
		s += fmt.Sprintf(" log(%d,%d)", m.LastLogIndex, m.LastLogTerm)
		if m.Transfer {
			s += " transfer"
		}
	case MsgPreVoteResp, MsgVoteResp, MsgHeartbeatResp:
		if m.Granted {
			s += " granted"
		} else {
			s += " rejected"
		}
	}
	return s
}

// Transport carries a node's outbound messages. Send must never block the
// caller for long (queue or drop instead) and must not call back into the
// sending node synchronously while holding a lock of its own. A Node calls
// Send without holding any lock of its own, so a transport may deliver
// synchronously to another node. Send may drop messages: Raft tolerates
// loss.
type Transport interface {
	Send(m Message)
}

// TransportFunc adapts a function to the Transport interface.
type TransportFunc func(m Message)

// Send calls f(m).
func (f TransportFunc) Send(m Message) { f(m) }
