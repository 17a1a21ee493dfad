package election

import (
	"fmt"
	"time"
)

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
	// EventSnapshot: the snapshot timer fired and OnSnapshot is about to
	// be called.
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
	return fmt.Sprintf("%v n%d ", e.At, e.Node) + e.text(true)
}

// Text formats the event without its time, node and message type, e.g.
// "LeaderElected t1 Leader leader=1", for traces that print time and node
// in their own columns.
func (e Event) Text() string { return e.text(false) }

func (e Event) text(withMsg bool) string {
	s := fmt.Sprintf("%s t%d %s", e.Type, e.Term, e.Role)
	if e.Leader != None {
		s += fmt.Sprintf(" leader=%d", e.Leader)
	}
	if e.Peer != None {
		s += fmt.Sprintf(" peer=%d", e.Peer)
	}
	if e.PreVote {
		s += " prevote"
	}
	if withMsg && e.Msg != 0 {
		s += " " + e.Msg.String()
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}
