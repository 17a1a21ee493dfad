package multiraft

import (
	"sync"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// MemNetwork is an in-memory network of Hosts sharing one wheel: each
// batch is delivered by a wheel timer after a delay, so on a virtual wheel
// a whole multi-raft cluster runs deterministically on the goroutine
// advancing the wheel. It supports a per-batch delay function, cut links
// and detached (crashed) hosts, and is meant for tests, examples and
// simulations. Safe for concurrent use.
type MemNetwork struct {
	w *wheel.Wheel

	mu    sync.Mutex
	delay func(Batch) time.Duration
	hosts map[election.ID]*Host
	cut   map[[2]election.ID]bool
	stats MemNetworkStats
}

// MemNetworkStats counts batches: sent; delivered; dropped when sent (a
// cut link, a stopped wheel); and undelivered, dropped on arrival (the
// host detached or the link cut meanwhile).
type MemNetworkStats struct {
	Sent, Delivered, Dropped, Undelivered uint64
}

// NewMemNetwork returns a network on w delivering every batch after delay.
func NewMemNetwork(w *wheel.Wheel, delay time.Duration) *MemNetwork {
	return &MemNetwork{w: w, delay: func(Batch) time.Duration { return delay },
		hosts: make(map[election.ID]*Host), cut: make(map[[2]election.ID]bool)}
}

// SetDelay makes f choose each batch's delay.
func (n *MemNetwork) SetDelay(f func(Batch) time.Duration) {
	n.mu.Lock()
	n.delay = f
	n.mu.Unlock()
}

// Attach connects h under its ID, replacing a host attached before.
func (n *MemNetwork) Attach(h *Host) {
	n.mu.Lock()
	n.hosts[h.ID()] = h
	n.mu.Unlock()
}

// Detach disconnects the host id: batches to it are dropped.
func (n *MemNetwork) Detach(id election.ID) {
	n.mu.Lock()
	delete(n.hosts, id)
	n.mu.Unlock()
}

// Cut takes the link from -> to down (one direction).
func (n *MemNetwork) Cut(from, to election.ID) {
	n.mu.Lock()
	n.cut[[2]election.ID{from, to}] = true
	n.mu.Unlock()
}

// Heal brings every link up.
func (n *MemNetwork) Heal() {
	n.mu.Lock()
	clear(n.cut)
	n.mu.Unlock()
}

// Stats returns the network's counters.
func (n *MemNetwork) Stats() MemNetworkStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// Transport returns the Transport of host from: batches it sends travel
// through the network.
func (n *MemNetwork) Transport() Transport { return TransportFunc(n.send) }

func (n *MemNetwork) send(b Batch) {
	n.mu.Lock()
	n.stats.Sent++
	if n.cut[[2]election.ID{b.From, b.To}] {
		n.stats.Dropped++
		n.mu.Unlock()
		return
	}
	d := n.delay(b)
	n.mu.Unlock()
	if _, err := n.w.AfterFunc(d, func() { n.deliver(b) }); err != nil {
		n.mu.Lock()
		n.stats.Dropped++
		n.mu.Unlock()
	}
}

func (n *MemNetwork) deliver(b Batch) {
	n.mu.Lock()
	h := n.hosts[b.To]
	if h == nil || n.cut[[2]election.ID{b.From, b.To}] {
		n.stats.Undelivered++
		n.mu.Unlock()
		return
	}
	n.stats.Delivered++
	n.mu.Unlock()
	h.Step(b)
}
