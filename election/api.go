package election

import (
	"errors"
	"fmt"
	"time"
)

// ID identifies a node of a Raft group. The zero ID means "none".
type ID uint64

// None is the zero ID: no node, no leader, no vote.
const None ID = 0

// Role is the election role of a node.
type Role uint8

// The four roles of Raft leader election, with PreCandidate for the
// optional pre-vote phase (Ongaro's thesis, section 9.6).
const (
	Follower Role = iota
	PreCandidate
	Candidate
	Leader
)

// String returns the role's name, e.g. "Follower".
func (r Role) String() string {
	switch r {
	case Follower:
		return "Follower"
	case PreCandidate:
		return "PreCandidate"
	case Candidate:
		return "Candidate"
	case Leader:
		return "Leader"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

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

// HardState is the state a node must persist before answering a vote: its
// current term and the candidate it voted for in that term (None if none).
type HardState struct {
	Term uint64
	Vote ID
}

// Storage persists a node's HardState. Save must be durable when it returns
// nil: the node sends a vote reply (or its own vote requests) only after
// Save succeeded. Load returns the zero HardState for a fresh node.
type Storage interface {
	Load() (HardState, error)
	Save(HardState) error
}

// LogView is the part of the replicated log leader election needs: the
// index and term of the last entry (0, 0 for an empty log). Last is called
// with the node's lock held; it must be quick and must not call the Node.
type LogView interface {
	Last() (index, term uint64)
}

// StaticLog is a LogView with a fixed last entry. Use it in tests and
// simulations to give nodes logs of different lengths.
type StaticLog struct{ Index, Term uint64 }

// Last returns l.Index, l.Term.
func (l StaticLog) Last() (index, term uint64) { return l.Index, l.Term }

// DetectionMode selects how a follower detects a dead leader.
type DetectionMode uint8

const (
	// ResetOnHeartbeat re-arms the election timer with a fresh random
	// timeout on every accepted heartbeat (and granted vote); the timer
	// firing starts an election. This is the Raft paper's and etcd's
	// behaviour.
	ResetOnHeartbeat DetectionMode = iota
	// CheckLastContact leaves the election timer free-running (each period
	// randomized by ElectionJitter); when it fires, the node starts an
	// election only if it has not heard from a leader (nor granted a vote)
	// within ElectionTimeout. This is SOFAJRaft's and hashicorp/raft's
	// behaviour; detection takes between ET and about 3 ET with [ET, 2ET)
	// jitter.
	CheckLastContact
)

// String returns the mode's name.
func (d DetectionMode) String() string {
	switch d {
	case ResetOnHeartbeat:
		return "ResetOnHeartbeat"
	case CheckLastContact:
		return "CheckLastContact"
	}
	return fmt.Sprintf("DetectionMode(%d)", uint8(d))
}

// StickinessMode decides how long a node stays loyal to a leader it knows:
// while it does, it refuses pre-votes (Config.PreVote) and, with
// Config.LeaderStickiness, votes (leadership transfers excepted).
type StickinessMode uint8

const (
	// StickyByContact: loyal while the node is leader or heard from its
	// leader within ElectionTimeout (Ongaro's thesis, section 9.6; etcd,
	// SOFAJRaft).
	StickyByContact StickinessMode = iota
	// StickyUntilTimeout: loyal while the node is leader or knows a
	// leader, whenever it last heard from it, towards every candidate but
	// that leader. A follower forgets its leader only when its own election
	// timer fires and finds no recent contact (it then campaigns), or when
	// it campaigns or moves to a higher term (hashicorp/raft, whose nodes
	// refuse every (pre-)vote while they know a leader).
	StickyUntilTimeout
)

// String returns the mode's name.
func (s StickinessMode) String() string {
	switch s {
	case StickyByContact:
		return "StickyByContact"
	case StickyUntilTimeout:
		return "StickyUntilTimeout"
	}
	return fmt.Sprintf("StickinessMode(%d)", uint8(s))
}

// EventType is the kind of an Event.
type EventType uint8

// Event types published to Config.Observer.
const (
	// EventRoleChange: the node's role changed; Event.Role is the new role
	// and Reason says why.
	EventRoleChange EventType = iota
	// EventTermChange: the node's term increased to Event.Term.
	EventTermChange
	// EventElectionStart: the node started a pre-vote (Role PreCandidate,
	// PreVote true, Term the term it would campaign in) or an election
	// (Role Candidate, Term the new term). Reason: "timeout",
	// "vote timeout", "campaign", "transfer", "pre-vote won".
	EventElectionStart
	// EventVoteGranted: this node granted its vote (or pre-vote, PreVote
	// true) for Term to Event.Peer. A candidate's vote for itself is
	// reported too, with Peer == Node.
	EventVoteGranted
	// EventVoteDenied: this node refused a (pre-)vote request of Event.Peer
	// for Term; Reason says why.
	EventVoteDenied
	// EventLeaderElected: this node won the election for Term.
	EventLeaderElected
	// EventLeaderKnown: a follower accepted the first heartbeat of a new
	// leader (Event.Leader) for Term.
	EventLeaderKnown
	// EventStepDown: a leader, candidate or pre-candidate became a follower;
	// Reason says why ("higher term", "check quorum", "vote timed out",
	// "lost election", "leader heartbeat", ...).
	EventStepDown
	// EventIgnored: an inbound message or request was ignored; Reason says
	// why and Peer is the sender. Every ignored message is also counted in
	// Stats.
	EventIgnored
	// EventSnapshot: the snapshot timer fired and OnSnapshot was called (or
	// handed to a goroutine when SnapshotAsync is set).
	EventSnapshot
)

// String returns the event type's name, e.g. "LeaderElected".
func (t EventType) String() string {
	switch t {
	case EventRoleChange:
		return "RoleChange"
	case EventTermChange:
		return "TermChange"
	case EventElectionStart:
		return "ElectionStart"
	case EventVoteGranted:
		return "VoteGranted"
	case EventVoteDenied:
		return "VoteDenied"
	case EventLeaderElected:
		return "LeaderElected"
	case EventLeaderKnown:
		return "LeaderKnown"
	case EventStepDown:
		return "StepDown"
	case EventIgnored:
		return "Ignored"
	case EventSnapshot:
		return "Snapshot"
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event reports a state change of a node to Config.Observer. Role and
// Leader describe the node right after the change; so does Term, except for
// EventVoteGranted and EventVoteDenied, where Term is the term of the
// request (the proposed term for pre-votes), and EventElectionStart of a
// pre-vote, where it is the term the node would campaign in.
type Event struct {
	At     time.Duration // wheel time of the change
	Node   ID            // the reporting node
	Type   EventType
	Term   uint64
	Role   Role
	Leader ID     // leader known to the node (None if none)
	Peer   ID     // other node involved (vote requester, ignored sender)
	Reason string // human-readable cause, may be empty
	// PreVote marks EventElectionStart, EventVoteGranted and
	// EventVoteDenied of the pre-vote phase: no term changed and no vote
	// was cast.
	PreVote bool
	// Msg is the type of the message that caused EventIgnored,
	// EventVoteGranted and EventVoteDenied (0 for a candidate's own vote).
	Msg MsgType
	// Seq numbers the node's events from 1 in the order they happened, so
	// an observer fed from several goroutines can restore the order.
	Seq uint64
}

// String formats the event on one line.
func (e Event) String() string {
	s := fmt.Sprintf("%v n%d %s t%d %s", e.At, e.Node, e.Type, e.Term, e.Role)
	if e.Leader != None {
		s += fmt.Sprintf(" leader=%d", e.Leader)
	}
	if e.Peer != None {
		s += fmt.Sprintf(" peer=%d", e.Peer)
	}
	if e.PreVote {
		s += " prevote"
	}
	if e.Msg != 0 {
		s += " " + e.Msg.String()
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// Status is a snapshot of a node's election state.
type Status struct {
	ID     ID
	Role   Role
	Term   uint64
	Vote   ID
	Leader ID
	// LastContact is the wheel time of the last heartbeat accepted from
	// the current leader (for a leader: when it became leader); HasContact
	// is false if there was none.
	LastContact time.Duration
	HasContact  bool
	Started     bool
	Stopped     bool
}

// Stats counts what a node did and, above all, what it ignored. Counters
// only grow.
type Stats struct {
	Received         uint64 // messages passed to Step
	Sent             uint64 // messages handed to the Transport
	IgnoredUnknown   uint64 // sender not among the voters, or from this node itself
	IgnoredWrongTo   uint64 // To is not this node
	IgnoredMalformed uint64 // refused by Message.Validate: invalid type, zero request term, term above MaxTerm
	IgnoredStale     uint64 // term lower than ours (answered with our term where useful)
	IgnoredStopped   uint64 // received before Start or after Stop
	IgnoredOther     uint64 // e.g. a response that matches no outstanding request
	LeaseRejections  uint64 // (pre-)vote requests refused because a leader is alive
	StorageErrors    uint64 // Save or Load failed; the triggering action was abandoned
	Anomalies        uint64 // impossible situations (e.g. two leaders in one term); logged
	PreVotes         uint64 // pre-vote rounds started
	Elections        uint64 // election rounds (terms) started
	PrioritySkips    uint64 // election timeouts skipped because of priority
	TermExhausted    uint64 // elections and pre-votes refused because the term reached MaxTerm
	LeaderElected    uint64 // elections won
	StepDowns        uint64 // EventStepDown count
	Snapshots        uint64 // snapshot callbacks run
	SnapshotsSkipped uint64 // async snapshot still running when the timer fired
}

// Sentinel errors.
var (
	ErrStopped        = errors.New("election: node stopped")
	ErrNotStarted     = errors.New("election: node not started")
	ErrAlreadyStarted = errors.New("election: node already started")
	ErrNotLeader      = errors.New("election: not the leader")
	ErrIsLeader       = errors.New("election: already the leader")
	ErrUnknownNode    = errors.New("election: unknown node")
	ErrNilArgument    = errors.New("election: nil argument")
)
