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
	Received         int64 // messages passed to Step
	Sent             int64 // messages handed to the Transport
	IgnoredUnknown   int64 // sender not among the voters, or from this node itself
	IgnoredWrongTo   int64 // To is not this node
	IgnoredMalformed int64 // refused by Message.Validate: invalid type, zero request term, term above MaxTerm
	IgnoredStale     int64 // term lower than ours (answered with our term where useful)
	IgnoredStopped   int64 // received before Start or after Stop
	IgnoredOther     int64 // e.g. a response that matches no outstanding request
	LeaseRejections  int64 // (pre-)vote requests refused because a leader is alive
	StorageErrors    int64 // Save or Load failed; the triggering action was abandoned
	Anomalies        int64 // impossible situations (e.g. two leaders in one term); logged
	PreVotes         int64 // pre-vote rounds started
	Elections        int64 // election rounds (terms) started
	PrioritySkips    int64 // election timeouts skipped because of priority
	LaggingSkips     int64 // election, vote and CheckQuorum timers that did not act while Config.Lagging
	TermExhausted    int64 // elections and pre-votes refused because the term reached MaxTerm
	LeaderElected    int64 // elections won
	StepDowns        int64 // EventStepDown count
	Snapshots        int64 // snapshot callbacks run
}
