package election

import (
	"errors"
	"fmt"
)

// ErrTermOutOfRange is returned by ObserveTerm for a term the node cannot
// adopt.
var ErrTermOutOfRange = errors.New("election: term out of range")

// ObserveTerm tells the node about a term seen outside its election
// messages, typically on the replication path of a full Raft: an
// AppendEntries request or response, or an InstallSnapshot, that carries a
// higher term than the node's. Raft's rule applies as for any election
// message: if term is higher than the node's term, the node persists it
// (with no vote) and becomes a follower of that term with no known leader,
// stepping down if it was leader, candidate or pre-candidate; it reports
// EventTermChange (and EventStepDown) with reason "higher term" and Peer
// from (None if unknown), and LeaderCh turns false on a leader. A term not
// higher than the node's changes nothing.
//
// ObserveTerm returns ErrNotStarted or ErrStopped, ErrTermOutOfRange
// (wrapped) for a term above MaxTerm (see Hostile and corrupted messages), and an error if
// the term could not be persisted (the node is then unchanged; the storage
// error is logged, reported as EventIgnored and counted in
// Stats.StorageErrors).
func (n *Node) ObserveTerm(term uint64, from ID) error {
	if err := n.lockUsable(); err != nil {
		return err
	}
	if term > MaxTerm {
		n.mu.Unlock()
		return fmt.Errorf("%w: ObserveTerm(%d) exceeds the largest term %d", ErrTermOutOfRange, term, uint64(MaxTerm))
	}
	var err error
	if term > n.term && !n.stepDown(term, ReasonHigherTerm, from) {
		err = fmt.Errorf("election: ObserveTerm(%d): cannot persist the term; the node stays in term %d", term, n.term)
	}
	n.unlockAndFlush()
	return err
}
