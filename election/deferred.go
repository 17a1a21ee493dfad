package election

import (
	"errors"
	"fmt"

	"github.com/raftick/raftick/wheel"
)

// DeferredStorage persists a node's HardState without blocking the node
// (see NewDeferredNode): a host that runs many nodes writes the states
// that changed in one batch, with one sync (group commit), on a goroutine
// of its own.
//
// Load returns the durable HardState when the node starts or resumes (the
// zero HardState for a fresh node). Defer hands over a new HardState with
// its sequence number (1, 2, ... per Node); it is called with the node's
// lock held, so it must not block and must not call the Node. The caller
// writes the state, or a later one, durably and then calls the node's
// Persisted with that state's sequence number; until then the node sends
// nothing.
type DeferredStorage interface {
	Load() (HardState, error)
	Defer(hs HardState, seq uint64)
}

// ErrNotDurable is returned by Hibernate for a node whose last HardState
// is not durable yet (see NewDeferredNode).
var ErrNotDurable = errors.New("election: node cannot hibernate: its hard state is not durable yet")

// NewDeferredNode is NewNode for a node whose Storage never blocks it:
// when its HardState changes (a new term, a vote) the node hands it to
// st.Defer with a sequence number and goes on, but it holds back every
// message it sends from then on, in order, until Persisted reports that
// sequence number durable. So no message that depends on a state (a vote
// grant, a candidate's requests, a new leader's heartbeats) leaves before
// that state is durable, and Step never waits for a disk. Observer events
// are not held. A node whose state is not durable refuses to Hibernate
// (ErrNotDurable), and Stop drops the held messages: a crash loses nothing
// the node's peers have seen.
func NewDeferredNode(cfg Config, w *wheel.Wheel, tr Transport, st DeferredStorage, log LogView) (*Node, error) {
	if isNil(st) {
		return nil, fmt.Errorf("%w: deferred storage (%T)", ErrNilArgument, st)
	}
	n, err := NewNode(cfg, w, tr, deferredLoad{st}, log)
	if err != nil {
		return nil, err
	}
	n.dst = st
	return n, nil
}

// deferredLoad is the Storage of a deferred node: it only loads (persist
// calls Defer instead of Save).
type deferredLoad struct{ st DeferredStorage }

func (d deferredLoad) Load() (HardState, error) { return d.st.Load() }
func (d deferredLoad) Save(HardState) error {
	return errors.New("election: Save called on a deferred storage")
}

// heldMsg is a message held back until the state of sequence number seq
// is durable.
type heldMsg struct {
	seq uint64
	m   Message
}

// Persisted reports that the HardState handed to DeferredStorage.Defer with
// sequence number seq (and every earlier one) is durable: the messages
// held back for it leave, in the order they were sent. A number the node
// did not hand out yet, or one it was told before, changes nothing; so
// does a call after Stop.
func (n *Node) Persisted(seq uint64) {
	n.lock()
	if n.stopped || seq <= n.durableSeq || seq > n.deferSeq {
		n.mu.Unlock()
		return
	}
	n.durableSeq = seq
	n.holding = n.durableSeq < n.deferSeq
	i := 0
	for ; i < len(n.held) && n.held[i].seq <= seq; i++ {
		n.outbox = append(n.outbox, n.held[i].m)
	}
	rest := copy(n.held, n.held[i:])
	clear(n.held[rest:])
	n.held = n.held[:rest]
	n.unlockAndFlush()
}

// Durable reports whether the node's HardState is durable: always for a
// node made by NewNode, and for a deferred one when Persisted caught up
// with its last Defer.
func (n *Node) Durable() bool {
	n.lock()
	defer n.mu.Unlock()
	return !n.holding
}
