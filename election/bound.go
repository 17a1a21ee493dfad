package election

import (
	"errors"
	"fmt"
)

// MaxTerm is the largest term a node accepts or campaigns in: 2^62. A
// message carrying a larger Term or LastLogTerm is malformed (ignored and
// counted in Stats.IgnoredMalformed); a node whose term has reached
// MaxTerm refuses to start another election or pre-vote (ErrTermExhausted,
// counted in Stats.TermExhausted). The bound keeps every term computation
// (term+1 of a new round or pre-vote) far from wrapping around, and a
// legitimate group never gets near it: at one election per microsecond it
// takes about 146,000 years.
const MaxTerm uint64 = 1 << 62

// Errors about terms and messages.
var (
	// ErrMalformed is the error of Message.Validate (wrapped, with what
	// was wrong).
	ErrMalformed = errors.New("election: malformed message")
	// ErrTermExhausted is returned by Campaign and TransferLeadership when
	// the node's term has reached MaxTerm, and by Start when the stored
	// term is above it (wrapped).
	ErrTermExhausted = errors.New("election: term bound MaxTerm reached")
)

// Validate reports whether m is well-formed, independently of any node's
// state: a known type, a non-zero Term for requests, and Term and
// LastLogTerm at most MaxTerm. Step ignores (and counts in
// Stats.IgnoredMalformed) exactly the messages Validate refuses; a
// transport may call it to reject such messages at once. The error wraps
// ErrMalformed.
func (m Message) Validate() error {
	switch {
	case m.Type < MsgPreVote || m.Type > MsgTimeoutNow:
		return fmt.Errorf("%w: unknown type %v", ErrMalformed, m.Type)
	case !m.Type.IsResponse() && m.Term == 0:
		return fmt.Errorf("%w: %v with term 0", ErrMalformed, m.Type)
	case m.Term > MaxTerm:
		return fmt.Errorf("%w: term %d above MaxTerm (%d)", ErrMalformed, m.Term, MaxTerm)
	case m.LastLogTerm > MaxTerm:
		return fmt.Errorf("%w: last log term %d above MaxTerm (%d)", ErrMalformed, m.LastLogTerm, MaxTerm)
	}
	return nil
}

// termExhausted reports whether the node's term has reached MaxTerm, so
// that it cannot start a round in a next term. If so it refuses the round
// (refuseRound), and a (pre-)candidate steps down: the node stays a
// follower of MaxTerm, which can still follow a leader of that term.
func (n *Node) termExhausted(reason string) bool {
	if n.term < MaxTerm {
		return false
	}
	n.refuseRound(reason)
	if n.role == PreCandidate || n.role == Candidate {
		n.stepDown(n.term, ReasonTermExhausted, None)
	}
	return true
}

// refuseRound counts, logs and reports a round refused at MaxTerm.
func (n *Node) refuseRound(reason string) {
	n.stats.TermExhausted++
	n.logger.Error("cannot campaign: term bound reached", "term", n.term, "max-term", MaxTerm, "trigger", reason)
	n.emit(EventIgnored, None, fmt.Sprintf("%s: %s", ReasonTermExhausted, reason))
}
