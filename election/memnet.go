package election

import (
	"slices"
	"sync"
	"time"

	"github.com/raftick/raftick/wheel"
)

// MemNetwork is an in-memory Transport connecting Nodes that share one
// wheel. Each message is delivered by a wheel timer after a delay, so on a
// virtual wheel a whole cluster, network included, runs deterministically
// on the goroutine advancing the wheel. It supports a fixed delay, a
// per-message routing function (delay, loss, duplication) and partitions.
// It is meant for tests and examples of code that embeds this package.
//
// A message is delivered only if its link is up both when it is sent and
// when it arrives, and if a node is attached under its To at arrival.
// Everything not delivered is counted in Stats. Safe for concurrent use.
type MemNetwork struct {
	w     *wheel.Wheel
	mu    sync.Mutex
	nodes map[ID]*Node
	delay time.Duration
	route func(m Message) []time.Duration
	cut   map[[2]ID]bool // directed links that are down
	stats MemNetworkStats
	free  []*inflight // fired message timers, for reuse
}

// MemNetworkStats counts a MemNetwork's traffic.
type MemNetworkStats struct {
	Sent       uint64 // messages passed to Send
	Delivered  uint64 // copies handed to a node's Step
	Dropped    uint64 // copies lost: by the route, a cut link, no node attached, or the wheel refused
	Duplicated uint64 // extra copies made by the route
}

// NewMemNetwork returns a network on w delivering every message after
// delay (>= 0; negative counts as 0).
func NewMemNetwork(w *wheel.Wheel, delay time.Duration) *MemNetwork {
	return &MemNetwork{w: w, nodes: make(map[ID]*Node), delay: max(delay, 0), cut: make(map[[2]ID]bool)}
}

// Attach connects node under node.ID(), replacing a node attached before
// under that ID (a restarted node).
func (n *MemNetwork) Attach(node *Node) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nodes[node.ID()] = node
}

// Detach disconnects the node attached under id; messages to it are
// dropped until a node is attached again.
func (n *MemNetwork) Detach(id ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.nodes, id)
}

// Node returns the node attached under id, or nil.
func (n *MemNetwork) Node(id ID) *Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodes[id]
}

// SetDelay sets the fixed delay used when no route is set.
func (n *MemNetwork) SetDelay(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.delay = max(d, 0)
}

// SetRoute sets a function deciding the fate of each sent message: it
// returns the delays after which copies are delivered (none: lost; two or
// more: duplicated; negative delays count as 0). It is called with the
// network's lock held, on the sender's goroutine, so it must not call the
// network; Send is done with the returned slice when it returns, so f may
// reuse one slice. nil restores the fixed delay.
func (n *MemNetwork) SetRoute(f func(m Message) []time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.route = f
}

// Cut takes the link from -> to down (one direction only).
func (n *MemNetwork) Cut(from, to ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[[2]ID{from, to}] = true
}

// Isolate cuts every link to and from id, among the given peers.
func (n *MemNetwork) Isolate(id ID, peers ...ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range peers {
		if p != id {
			n.cut[[2]ID{id, p}] = true
			n.cut[[2]ID{p, id}] = true
		}
	}
}

// Partition cuts every link between nodes of different groups (both
// directions). Links within a group are left as they are.
func (n *MemNetwork) Partition(groups ...[]ID) {
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
func (n *MemNetwork) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.cut)
}

// Connected reports whether the link from -> to is up.
func (n *MemNetwork) Connected(from, to ID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.cut[[2]ID{from, to}]
}

// Stats returns the traffic counters.
func (n *MemNetwork) Stats() MemNetworkStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// Send implements Transport: it schedules delivery of m and returns at once.
func (n *MemNetwork) Send(m Message) {
	n.mu.Lock()
	n.stats.Sent++
	if n.cut[[2]ID{m.From, m.To}] {
		n.stats.Dropped++
		n.mu.Unlock()
		return
	}
	if n.route == nil {
		n.scheduleLocked(m, n.delay)
		n.mu.Unlock()
		return
	}
	delays := n.route(m)
	if len(delays) == 0 {
		n.stats.Dropped++
	} else {
		n.stats.Duplicated += uint64(len(delays) - 1)
	}
	for _, d := range delays {
		n.scheduleLocked(m, d)
	}
	n.mu.Unlock()
}

// inflight is one message copy on its way; its wheel timer is reused for
// later messages once it has fired.
type inflight struct {
	t   wheel.Timer
	net *MemNetwork
	m   Message
}

func (n *MemNetwork) scheduleLocked(m Message, d time.Duration) {
	var f *inflight
	if k := len(n.free); k > 0 {
		f, n.free = n.free[k-1], n.free[:k-1]
	} else {
		f = &inflight{net: n}
		if err := f.t.Init(n.w, f.fire); err != nil {
			n.stats.Dropped++
			return
		}
	}
	f.m = m
	if _, err := f.t.TryReset(max(d, 0)); err != nil {
		n.stats.Dropped++
		n.free = append(n.free, f)
	}
}

func (f *inflight) fire() {
	n, m := f.net, f.m
	n.mu.Lock()
	n.free = append(n.free, f)
	node := n.nodes[m.To]
	if node == nil || n.cut[[2]ID{m.From, m.To}] {
		n.stats.Dropped++
		n.mu.Unlock()
		return
	}
	n.stats.Delivered++
	n.mu.Unlock()
	node.Step(m)
}
