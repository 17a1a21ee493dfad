package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/memnet"
	"github.com/raftick/raftick/wheel"
)

// MemNetwork is an in-memory network of Hosts sharing one wheel, on the
// project's one message carrier (package memnet): each batch is
// delivered by a wheel timer after a delay, so on a virtual wheel a
// whole multi-raft cluster runs deterministically on the goroutine
// advancing the wheel. It supports a fixed delay or a per-batch route
// (delays, loss, duplication), cut links, isolation, partitions and
// detached (crashed) hosts, and is meant for tests, examples and
// simulations. Safe for concurrent use.
type MemNetwork struct {
	net   *memnet.Network[election.ID, Batch, *Host]
	delay []time.Duration // SetDelay's one-copy route, reused under the network's lock
}

// MemNetworkStats counts batches: sent; delivered; dropped when sent (a
// cut link, the route, a stopped wheel); and undelivered, dropped on
// arrival (the host detached or the link cut meanwhile).
type MemNetworkStats struct {
	Sent, Delivered, Dropped, Undelivered int64
}

// NewMemNetwork returns a network on w delivering every batch after delay.
func NewMemNetwork(w *wheel.Wheel, delay time.Duration) *MemNetwork {
	return &MemNetwork{net: memnet.New(w, delay,
		func(b Batch) (election.ID, election.ID) { return b.From, b.To },
		func(h *Host, b Batch) { h.Step(b) })}
}

// SetDelay makes f choose each batch's delay.
//
// Deprecated: use SetRoute, the vocabulary of every in-memory network
// (election.MemNetwork's too); SetDelay(f) is SetRoute of one copy
// after f(b).
func (n *MemNetwork) SetDelay(f func(Batch) time.Duration) {
	n.net.SetRoute(func(b Batch) []time.Duration {
		n.delay = append(n.delay[:0], f(b))
		return n.delay
	})
}

// SetRoute sets a function deciding the fate of each batch sent: the
// delays after which copies are delivered (none: lost; two or more:
// duplicated). It is called with the network's lock held, in the order
// of the sends, and must not call the network. nil restores the fixed
// delay.
func (n *MemNetwork) SetRoute(f func(Batch) []time.Duration) { n.net.SetRoute(f) }

// Attach connects h under its ID, replacing a host attached before.
func (n *MemNetwork) Attach(h *Host) { n.net.Attach(h.ID(), h) }

// Detach disconnects the host id: batches to it are dropped.
func (n *MemNetwork) Detach(id election.ID) { n.net.Detach(id) }

// Cut takes the link from -> to down (one direction).
func (n *MemNetwork) Cut(from, to election.ID) { n.net.Cut(from, to) }

// Isolate cuts every link to and from id, among the given peers.
func (n *MemNetwork) Isolate(id election.ID, peers ...election.ID) { n.net.Isolate(id, peers...) }

// Partition cuts every link between hosts of different groups (both
// directions).
func (n *MemNetwork) Partition(groups ...[]election.ID) { n.net.Partition(groups...) }

// Heal brings every link up.
func (n *MemNetwork) Heal() { n.net.Heal() }

// Stats returns the network's counters.
func (n *MemNetwork) Stats() MemNetworkStats {
	s := n.net.Stats()
	return MemNetworkStats{Sent: s.Sent, Delivered: s.Delivered, Dropped: s.Dropped, Undelivered: s.Undelivered}
}

// Transport returns the Transport of host from: batches it sends travel
// through the network.
func (n *MemNetwork) Transport() Transport { return TransportFunc(n.net.Send) }
