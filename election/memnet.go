package election

import (
	"time"

	"github.com/raftick/raftick/memnet"
	"github.com/raftick/raftick/wheel"
)

// MemNetwork is an in-memory Transport connecting Nodes that share one
// wheel, on the project's one message carrier (package memnet): each
// message is delivered by a wheel timer after a delay, so on a virtual
// wheel a whole cluster, network included, runs deterministically on the
// goroutine advancing the wheel. It supports a fixed delay, a
// per-message routing function (delay, loss, duplication), cut links,
// isolation and partitions. It is meant for tests and examples of code
// that embeds this package.
//
// A message is delivered only if its link is up both when it is sent and
// when it arrives, and if a node is attached under its To at arrival.
// Everything not delivered is counted in Stats. Safe for concurrent use.
type MemNetwork struct {
	net *memnet.Network[ID, Message, *Node]
}

// MemNetworkStats counts a MemNetwork's traffic.
type MemNetworkStats struct {
	Sent       int64 // messages passed to Send
	Delivered  int64 // copies handed to a node's Step
	Dropped    int64 // copies lost: by the route, a cut link, no node attached, or the wheel refused
	Duplicated int64 // extra copies made by the route
}

// NewMemNetwork returns a network on w delivering every message after
// delay (>= 0; negative counts as 0).
func NewMemNetwork(w *wheel.Wheel, delay time.Duration) *MemNetwork {
	return &MemNetwork{net: memnet.New(w, delay,
		func(m Message) (ID, ID) { return m.From, m.To },
		func(n *Node, m Message) { n.Step(m) })}
}

// Attach connects node under node.ID(), replacing a node attached before
// under that ID (a restarted node).
func (n *MemNetwork) Attach(node *Node) { n.net.Attach(node.ID(), node) }

// Detach disconnects the node attached under id; messages to it are
// dropped until a node is attached again.
func (n *MemNetwork) Detach(id ID) { n.net.Detach(id) }

// Node returns the node attached under id, or nil.
func (n *MemNetwork) Node(id ID) *Node {
	node, _ := n.net.Endpoint(id)
	return node
}

// SetDelay sets the fixed delay of every message and removes a route.
func (n *MemNetwork) SetDelay(d time.Duration) { n.net.SetDelay(d) }

// SetRoute sets a function deciding the fate of each sent message: it
// returns the delays after which copies are delivered (none: lost; two or
// more: duplicated; negative delays count as 0). It is called with the
// network's lock held, on the sender's goroutine, so it must not call the
// network; Send is done with the returned slice when it returns, so f may
// reuse one slice. nil restores the fixed delay.
func (n *MemNetwork) SetRoute(f func(m Message) []time.Duration) { n.net.SetRoute(f) }

// Cut takes the link from -> to down (one direction only).
func (n *MemNetwork) Cut(from, to ID) { n.net.Cut(from, to) }

// Isolate cuts every link to and from id, among the given peers.
func (n *MemNetwork) Isolate(id ID, peers ...ID) { n.net.Isolate(id, peers...) }

// Partition cuts every link between nodes of different groups (both
// directions). Links within a group are left as they are.
func (n *MemNetwork) Partition(groups ...[]ID) { n.net.Partition(groups...) }

// Heal brings every link up again.
func (n *MemNetwork) Heal() { n.net.Heal() }

// Connected reports whether the link from -> to is up.
func (n *MemNetwork) Connected(from, to ID) bool { return n.net.Connected(from, to) }

// Stats returns the traffic counters.
func (n *MemNetwork) Stats() MemNetworkStats {
	s := n.net.Stats()
	return MemNetworkStats{Sent: int64(s.Sent), Delivered: int64(s.Delivered), Dropped: int64(s.Dropped + s.Undelivered), Duplicated: int64(s.Duplicated)}
}

// Send implements Transport: it schedules delivery of m and returns at once.
func (n *MemNetwork) Send(m Message) { n.net.Send(m) }
