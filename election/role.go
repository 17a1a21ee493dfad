package election

import (
	"fmt"
	"time"
)

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
	LaggingSkips     uint64 // election, vote and CheckQuorum timers that did not act while Config.Lagging
	TermExhausted    uint64 // elections and pre-votes refused because the term reached MaxTerm
	LeaderElected    uint64 // elections won
	StepDowns        uint64 // EventStepDown count
	Snapshots        uint64 // snapshot callbacks run
}
