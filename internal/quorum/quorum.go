// Package quorum decides by majority: how many of a configuration's
// voters make a quorum, the tally of one round of answers (who answered,
// who granted, is the round won or lost), and since when each voter has
// answered a leader (Ack: its last answer, its unanswered heartbeats, its
// lease), from which a leader's CheckQuorum and lease are judged. Every
// majority of the project is derived here: the election package's vote
// counting, Config.Quorum, CheckQuorum and QuorumContact, the invariant
// checker, and the simulator's experiments (how many servers may crash,
// when a majority knows the leader). multiraft's per-replica answer
// record (a term and a time, written lock-free, read to decide
// hibernation) is not a quorum's and stays its own.
//
// etcd raft's quorum.MajorityConfig and tracker.ProgressTracker's
// RecordVote and TallyVotes (and tracker.Progress's RecentActive) are the model: one definition of a majority,
// one place that counts.
package quorum

// Majority is a configuration of that many voters deciding by majority.
// A Majority of 0 or fewer voters has a quorum of 1 (the candidate's
// own), as a lone server decides alone.
type Majority int

// Size returns the number of voters a quorum needs: Voters/2+1.
func (m Majority) Size() int { return max(int(m), 0)/2 + 1 }

// Reached reports whether yes voters make a quorum.
func (m Majority) Reached(yes int) bool { return yes >= m.Size() }

// Spare returns how many voters may be missing (crashed, cut off or
// rejecting) with a quorum left among the others: Voters - Size, at
// least 0.
func (m Majority) Spare() int { return max(int(m)-m.Size(), 0) }

// Lost reports whether no voters rule a quorum out: more than Spare of
// them refused.
func (m Majority) Lost(no int) bool { return no > m.Spare() }

// A Result is the state of a round of answers.
type Result int

// The results of a round.
const (
	Pending Result = iota // neither a quorum of grants nor of refusals yet
	Won                   // a quorum granted
	Lost                  // so many refused that a quorum cannot grant
)

// String returns "pending", "won" or "lost".
func (r Result) String() string {
	switch r {
	case Won:
		return "won"
	case Lost:
		return "lost"
	}
	return "pending"
}

// Result returns the state of a round with yes grants and no refusals.
func (m Majority) Result(yes, no int) Result {
	switch {
	case m.Reached(yes):
		return Won
	case m.Lost(no):
		return Lost
	}
	return Pending
}

// Votes is one round of answers of a Majority: who answered and whether
// they granted. The first answer of a voter counts; a repeat changes
// nothing. The zero Votes is an empty round of a lone server; Reset
// starts a round. Not safe for concurrent use.
type Votes[ID comparable] struct {
	m       Majority
	answers map[ID]bool
	granted int
}

// Reset starts a new round of m with self's grant recorded.
func (v *Votes[ID]) Reset(m Majority, self ID) {
	v.m = m
	v.answers = map[ID]bool{self: true}
	v.granted = 1
}

// Clear ends the round: every voter counts as not having answered, and
// Active reports false until the next Reset.
func (v *Votes[ID]) Clear() { v.answers, v.granted = nil, 0 }

// Active reports whether a round is open (Reset since the last Clear).
func (v *Votes[ID]) Active() bool { return v.answers != nil }

// Answered reports whether id answered in this round.
func (v *Votes[ID]) Answered(id ID) bool {
	_, ok := v.answers[id]
	return ok
}

// Record records id's answer and reports whether it was the voter's
// first in this round (false: it is ignored). Outside a round it records
// nothing.
func (v *Votes[ID]) Record(id ID, granted bool) (fresh bool) {
	if v.answers == nil {
		return false
	}
	if _, dup := v.answers[id]; dup {
		return false
	}
	v.answers[id] = granted
	if granted {
		v.granted++
	}
	return true
}

// Tally returns the grants and refusals recorded in this round.
func (v *Votes[ID]) Tally() (granted, rejected int) {
	return v.granted, len(v.answers) - v.granted
}

// Result returns the round's state.
func (v *Votes[ID]) Result() Result { return v.m.Result(v.Tally()) }
