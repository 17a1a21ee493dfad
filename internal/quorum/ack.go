package quorum

import "time"

// Ack is what a leader knows of one voter's answers to its heartbeats:
// since when the voter has answered (At), since when a heartbeat has gone
// unanswered (Since), and since when the voter has promised not to vote
// for anyone else (Lease: the send time of the latest heartbeat it
// answered). Times are a wheel's (never negative); None marks one unset.
type Ack struct {
	At    time.Duration // the last answer; None if none in this term (or the grace of an election)
	Since time.Duration // the first heartbeat sent after At, still unanswered; None if none
	Lease time.Duration // the latest send time of an answered heartbeat; None if none
}

// None marks an unset Ack time.
const None time.Duration = -1

// NoAck is a voter's Ack before it answered anything.
var NoAck = Ack{At: None, Since: None, Lease: None}

// Answered records an answer received at now to a heartbeat sent at sent
// (0: unknown). Answers may arrive out of order: the lease keeps the
// latest send time.
func (a *Ack) Answered(now, sent time.Duration) {
	a.At, a.Since = now, None
	if sent > 0 && sent <= now && sent > a.Lease {
		a.Lease = sent
	}
}

// Sent records a heartbeat sent at now: the first one since the last
// answer starts the wait Since measures.
func (a *Ack) Sent(now time.Duration) {
	if a.Since == None {
		a.Since = now
	}
}

// Within reports whether the voter answered within d before now.
func (a *Ack) Within(now, d time.Duration) bool { return a.At != None && now-a.At <= d }

// Leased reports whether the voter answered a heartbeat sent less than
// lease before now. The bound is strict: a voter refuses candidates until
// the send time plus its election timeout, and no longer, so a lease of a
// whole election timeout must end before the voter's promise does.
func (a *Ack) Leased(now, lease time.Duration) bool {
	return a.Lease != None && now-a.Lease < lease
}

// Silent reports whether the voter is silent: it has not answered within
// lease before now, and a heartbeat has gone unanswered for patience. A
// voter that answered every heartbeat sent to it is not silent, however
// long ago that was: nothing was sent to answer, which says nothing
// about the voter.
func (a *Ack) Silent(now, lease, patience time.Duration) bool {
	return !a.Within(now, lease) && a.Since != None && now-a.Since >= patience
}

// Leased reports whether the leader (counted as one) and the voters of
// acks whose lease holds at now make a majority of m: the quorum whose
// promises back a leader's lease.
func (m Majority) Leased(acks []Ack, now, lease time.Duration) bool {
	alive := 1
	for i := range acks {
		if acks[i].Leased(now, lease) {
			alive++
		}
	}
	return m.Reached(alive)
}

// Silent counts the voters of acks that are Silent at now.
func Silent(acks []Ack, now, lease, patience time.Duration) (n int) {
	for i := range acks {
		if acks[i].Silent(now, lease, patience) {
			n++
		}
	}
	return n
}
