// Package memnet carries messages between the endpoints of an in-memory
// network on a timing wheel: the one carrier behind election.MemNetwork,
// multiraft.MemNetwork and the simulators' couriers. Each message in
// flight rides a wheel timer of its own (reused once it fired), so on a
// virtual wheel a whole cluster, network included, runs deterministically
// on the goroutine advancing the wheel.
//
// One vocabulary for every network: a delay model (SetDelay: one fixed
// delay; SetRoute: a function giving the delays of a message's copies,
// none for a loss, several for duplicates), Cut (one direction of a
// link), Isolate, Partition and Heal, and Stats (Sent, Delivered,
// Dropped, Duplicated, Undelivered).
//
// The simulators' clusters (sim.Cluster and the etcd engine's Cluster)
// carry their messages on a Courier but keep their own cuts and counters
// rather than use a Network, because a Network's rules are not theirs and
// their outputs, reproduced byte for byte from a seed, depend on theirs:
//
//   - A Network drops a message sent over a cut link at once, without
//     asking its route; sim.Cluster checks a cut only when the message
//     arrives (it is delivered if the link healed meanwhile), and draws
//     its loss, duplication and latency when it is sent, cut or not.
//     Checking at the send would skip draws and shift every later random
//     number. The etcd engine cuts links with a drop rule (its
//     ClusterConfig.Drop, any function of the message) asked at the send
//     before the loss draw, which Cut cannot express.
//   - Between a node's send and the carrier, and between the arrival and
//     the node's Step, sim.Cluster applies its servers' state: a paused
//     server holds what it sends and what arrives for it, a response
//     leaves only after its server's pending disk writes, a sender's sends
//     are spaced by its send gap, and an RPC cancelled by a backoff is
//     held or discarded (Network.CancelBackoff). A route sees only the
//     message, under the Network's lock.
//   - They count each drop by its cause (loss, partition, node down, the
//     etcd engine's drop rule, a cancelled RPC) and the held messages and
//     disk writes; raftsim's outputs and the scenarios print them. Stats
//     has one Dropped and one Undelivered.
//   - The etcd engine clones a duplicated message before it sends the
//     second copy (etcd changes a message it steps), and counts a copy
//     whose Step fails as dropped; a Network hands the same message to
//     every copy and counts it delivered before its endpoint sees it.
//
// Both run on one goroutine advancing a virtual wheel, where a Courier
// needs no lock; what they share with every network is the carrier.
package memnet

import (
	"slices"
	"sync"
	"time"

	"github.com/raftick/raftick/wheel"
)

// Stats counts a Network's traffic. Every message sent is either dropped
// at once or becomes one or more copies, each of which is delivered or
// undelivered: Sent - Dropped + Duplicated = Delivered + Undelivered +
// copies in flight.
type Stats struct {
	Sent        int64 // messages passed to Send
	Delivered   int64 // copies handed to their endpoint
	Dropped     int64 // messages or copies lost when sent: a cut link, the route, the wheel refused
	Duplicated  int64 // extra copies made by the route
	Undelivered int64 // copies lost on arrival: the link cut meanwhile, no endpoint attached
}

// A Network carries messages of type M between endpoints of type E
// attached under IDs: ends names a message's sender and receiver, and
// deliver hands a copy that arrived to its receiver's endpoint. A copy
// is delivered only if its link is up both when it is sent and when it
// arrives, and if an endpoint is attached under its receiver then. Safe
// for concurrent use: deliver runs with no lock held, on the wheel's
// goroutine.
type Network[ID comparable, M, E any] struct {
	w       *wheel.Wheel
	ends    func(M) (from, to ID)
	deliver func(E, M)

	mu       sync.Mutex
	attached map[ID]E // attached endpoints
	delay    time.Duration
	route    func(M) []time.Duration
	cut      map[[2]ID]bool // directed links that are down
	stats    Stats
	mail     *Courier[M] // Send and the free list under mu
}

// New returns a network on w delivering every message after delay
// (negative counts as 0).
func New[ID comparable, M, E any](w *wheel.Wheel, delay time.Duration, ends func(M) (from, to ID), deliver func(E, M)) *Network[ID, M, E] {
	n := &Network[ID, M, E]{w: w, ends: ends, deliver: deliver, delay: max(delay, 0),
		attached: make(map[ID]E), cut: make(map[[2]ID]bool)}
	n.mail = NewCourier(w, n.arrive)
	n.mail.mu = &n.mu
	return n
}

// Attach connects e under id, replacing an endpoint attached before under
// that ID (a restarted node).
func (n *Network[ID, M, E]) Attach(id ID, e E) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.attached[id] = e
}

// Detach disconnects the endpoint attached under id; copies to it are
// undelivered until one is attached again.
func (n *Network[ID, M, E]) Detach(id ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.attached, id)
}

// Endpoint returns the endpoint attached under id, if any.
func (n *Network[ID, M, E]) Endpoint(id ID) (E, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.attached[id]
	return e, ok
}

// SetDelay sets the fixed delay of every message, and removes a route.
func (n *Network[ID, M, E]) SetDelay(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.delay, n.route = max(d, 0), nil
}

// SetRoute sets a function deciding the fate of each message sent: it
// returns the delays after which copies are delivered (none: lost; two
// or more: duplicated; negative delays count as 0). It is called with
// the network's lock held, on the sender's goroutine, in the order of
// the sends, so it must not call the network; Send is done with the
// returned slice when it returns, so f may reuse one slice. nil restores
// the fixed delay.
func (n *Network[ID, M, E]) SetRoute(f func(M) []time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.route = f
}

// Cut takes the link from -> to down (one direction only).
func (n *Network[ID, M, E]) Cut(from, to ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[[2]ID{from, to}] = true
}

// Isolate cuts every link to and from id, among the given peers.
func (n *Network[ID, M, E]) Isolate(id ID, peers ...ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range peers {
		if p != id {
			n.cut[[2]ID{id, p}] = true
			n.cut[[2]ID{p, id}] = true
		}
	}
}

// Partition cuts every link between endpoints of different groups (both
// directions). Links within a group are left as they are.
func (n *Network[ID, M, E]) Partition(groups ...[]ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, g := range groups {
		for j, h := range groups {
			if i == j {
				continue
			}
			for _, a := range g {
				for _, b := range h {
					if !slices.Contains(g, b) {
						n.cut[[2]ID{a, b}] = true
					}
				}
			}
		}
	}
}

// Heal brings every link up again.
func (n *Network[ID, M, E]) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
}

// Connected reports whether the link from -> to is up.
func (n *Network[ID, M, E]) Connected(from, to ID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.cut[[2]ID{from, to}]
}

// Stats returns the traffic counters.
func (n *Network[ID, M, E]) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// Send puts m in flight and returns at once.
func (n *Network[ID, M, E]) Send(m M) {
	from, to := n.ends(m)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stats.Sent++
	if n.cut[[2]ID{from, to}] {
		n.stats.Dropped++
		return
	}
	if n.route == nil {
		n.scheduleLocked(m, n.delay)
		return
	}
	delays := n.route(m)
	if len(delays) == 0 {
		n.stats.Dropped++
	} else {
		n.stats.Duplicated += int64(len(delays) - 1)
	}
	for _, d := range delays {
		n.scheduleLocked(m, d)
	}
}

func (n *Network[ID, M, E]) scheduleLocked(m M, d time.Duration) {
	if n.mail.Send(m, max(d, 0)) != nil {
		n.stats.Dropped++
	}
}

// arrive hands a copy that arrived to its endpoint, if it has one and the
// link is up.
func (n *Network[ID, M, E]) arrive(m M) {
	from, to := n.ends(m)
	n.mu.Lock()
	e, ok := n.attached[to]
	if !ok || n.cut[[2]ID{from, to}] {
		n.stats.Undelivered++
		n.mu.Unlock()
		return
	}
	n.stats.Delivered++
	n.mu.Unlock()
	n.deliver(e, m)
}
