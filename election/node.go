package election

import (
	"sync"

	"github.com/raftick/raftick/wheel"
)

// Node is one member of a Raft group, doing leader election. (Stub: the
// logic is being written; the API is final.)
type Node struct {
	mu  sync.Mutex
	cfg Config
	w   *wheel.Wheel
	tr  Transport
	st  Storage
	log LogView
}

// NewNode returns a stopped Node; call Start.
func NewNode(cfg Config, w *wheel.Wheel, tr Transport, st Storage, log LogView) (*Node, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	if w == nil || tr == nil || st == nil || log == nil {
		return nil, ErrNilArgument
	}
	return &Node{cfg: c, w: w, tr: tr, st: st, log: log}, nil
}

// Start loads the HardState, becomes follower and arms the timers.
func (n *Node) Start() error { return nil }

// Stop crashes or shuts down the node.
func (n *Node) Stop() {}

// Step delivers an inbound message.
func (n *Node) Step(m Message) {}

// Campaign starts an election now.
func (n *Node) Campaign() error { return nil }

// TransferLeadership hands leadership to another voter.
func (n *Node) TransferLeadership(to ID) error { return nil }

// Status returns the node's election state.
func (n *Node) Status() Status { return Status{} }

// Stats returns the node's counters.
func (n *Node) Stats() Stats { return Stats{} }
