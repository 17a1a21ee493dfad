package raftadapter

import (
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Latency is a model of one-way message delay. Package sim's latency models
// (sim.Fixed, sim.Uniform, sim.Normal, sim.LogNormal, sim.Empirical)
// satisfy it; raftadapter does not import sim.
type Latency interface {
	// Sample draws one delay. Negative results are treated as 0. rng is
	// never shared between goroutines while Sample runs.
	Sample(rng *rand.Rand) time.Duration
	// String describes the model, e.g. "uniform:1ms,5ms".
	String() string
}

// Errors of the harness network.
var (
	// ErrPartitioned is returned by an RPC across a cut link (Partition)
	// or to a crashed node. The request may or may not have been processed
	// by the target when the cut happened while it was in flight.
	ErrPartitioned = errors.New("raftadapter: link cut (partition or crashed peer)")
	// ErrTransportClosed is returned by an RPC whose sender's transport was
	// closed while the message was being delayed.
	ErrTransportClosed = errors.New("raftadapter: transport closed")
)

// NetStats counts what the harness network did with RPCs. Counters only
// grow.
type NetStats struct {
	RPCs     int64 // RPCs attempted through the harness network
	Dropped  int64 // failed with ErrPartitioned (cut link or crashed peer)
	Aborted  int64 // failed with ErrTransportClosed (sender shut down mid-delay)
	Failed   int64 // failed inside the underlying transport (timeouts, I/O)
	Delayed  int64 // messages (requests and responses) given a non-zero delay
	MaxDelay time.Duration
}

// network is the shared state of a harness cluster's links: which links are
// cut and which nodes are down. All methods are safe for concurrent use.
type network struct {
	mu   sync.RWMutex
	cut  map[[2]raft.ServerAddress]bool // unordered pairs, smaller address first
	down map[raft.ServerAddress]bool
}

func newNetwork() *network {
	return &network{cut: map[[2]raft.ServerAddress]bool{}, down: map[raft.ServerAddress]bool{}}
}

func pairOf(a, b raft.ServerAddress) [2]raft.ServerAddress {
	if b < a {
		a, b = b, a
	}
	return [2]raft.ServerAddress{a, b}
}

// reachable reports whether an RPC from -> to can pass.
func (n *network) reachable(from, to raft.ServerAddress) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return !n.down[to] && !n.down[from] && !n.cut[pairOf(from, to)]
}

func (n *network) setDown(a raft.ServerAddress) {
	n.mu.Lock()
	n.down[a] = true
	n.mu.Unlock()
}

// setCuts replaces the set of cut links.
func (n *network) setCuts(cut map[[2]raft.ServerAddress]bool) {
	n.mu.Lock()
	n.cut = cut
	n.mu.Unlock()
}

// linkTransport wraps a hashicorp transport (InmemTransport or
// NetworkTransport) for the harness: every RPC passes the cluster's
// network (cut links and crashed peers fail fast with ErrPartitioned) and
// both its request and its response are delayed by a draw from the latency
// model. The delay is spent in the calling goroutine, as a slow link would
// hold a synchronous RPC; hashicorp makes every RPC from a goroutine of its
// own per peer and purpose, so this never blocks raft's main loop.
//
// Pipelined replication is reported as unsupported
// (raft.ErrPipelineReplicationNotSupported) so every AppendEntries is one
// delayed RPC; this changes log-replication throughput only, not timing of
// heartbeats or elections.
type linkTransport struct {
	inner   raft.Transport
	prevote raft.WithPreVote
	local   raft.ServerAddress
	net     *network
	latency Latency

	rngMu sync.Mutex
	rng   *rand.Rand

	closeOnce sync.Once
	closeCh   chan struct{}

	rpcs, dropped, aborted, failed, delayed atomic.Int64
	maxDelay                                atomic.Int64
}

// innerTransport is what linkTransport needs from the wrapped transport.
type innerTransport interface {
	raft.Transport
	raft.WithPreVote
	raft.WithClose
}

func newLinkTransport(inner innerTransport, nw *network, lat Latency, rng *rand.Rand) *linkTransport {
	return &linkTransport{
		inner:   inner,
		prevote: inner,
		local:   inner.LocalAddr(),
		net:     nw,
		latency: lat,
		rng:     rng,
		closeCh: make(chan struct{}),
	}
}

var (
	_ raft.Transport   = (*linkTransport)(nil)
	_ raft.WithPreVote = (*linkTransport)(nil)
	_ raft.WithClose   = (*linkTransport)(nil)
)

func (t *linkTransport) stats() NetStats {
	return NetStats{
		RPCs:     t.rpcs.Load(),
		Dropped:  t.dropped.Load(),
		Aborted:  t.aborted.Load(),
		Failed:   t.failed.Load(),
		Delayed:  t.delayed.Load(),
		MaxDelay: time.Duration(t.maxDelay.Load()),
	}
}

// delay sleeps for one latency draw, or until the transport is closed.
func (t *linkTransport) delay() error {
	if t.latency == nil {
		return nil
	}
	t.rngMu.Lock()
	d := t.latency.Sample(t.rng)
	t.rngMu.Unlock()
	if d <= 0 {
		return nil
	}
	t.delayed.Add(1)
	for {
		old := t.maxDelay.Load()
		if int64(d) <= old || t.maxDelay.CompareAndSwap(old, int64(d)) {
			break
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.closeCh:
		return ErrTransportClosed
	}
}

// rpc runs call as one RPC to target through the network.
func (t *linkTransport) rpc(target raft.ServerAddress, call func() error) error {
	t.rpcs.Add(1)
	pass := func() error {
		if !t.net.reachable(t.local, target) {
			t.dropped.Add(1)
			return ErrPartitioned
		}
		return nil
	}
	if err := pass(); err != nil {
		return err
	}
	if err := t.delay(); err != nil { // request in flight
		t.aborted.Add(1)
		return err
	}
	if err := pass(); err != nil { // cut while the request was in flight
		return err
	}
	if err := call(); err != nil {
		t.failed.Add(1)
		return err
	}
	if err := t.delay(); err != nil { // response in flight
		t.aborted.Add(1)
		return err
	}
	return pass() // cut while the response was in flight: response lost
}

// abort cuts short every delay in progress; later RPCs fail fast once the
// node is marked down. Idempotent.
func (t *linkTransport) abort() {
	t.closeOnce.Do(func() { close(t.closeCh) })
}

// Consumer implements raft.Transport.
func (t *linkTransport) Consumer() <-chan raft.RPC { return t.inner.Consumer() }

// LocalAddr implements raft.Transport.
func (t *linkTransport) LocalAddr() raft.ServerAddress { return t.local }

// AppendEntriesPipeline implements raft.Transport; pipelining is not
// offered (see linkTransport).
func (t *linkTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// AppendEntries implements raft.Transport.
func (t *linkTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return t.rpc(target, func() error { return t.inner.AppendEntries(id, target, args, resp) })
}

// RequestVote implements raft.Transport.
func (t *linkTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return t.rpc(target, func() error { return t.inner.RequestVote(id, target, args, resp) })
}

// RequestPreVote implements raft.WithPreVote.
func (t *linkTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return t.rpc(target, func() error { return t.prevote.RequestPreVote(id, target, args, resp) })
}

// InstallSnapshot implements raft.Transport.
func (t *linkTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	return t.rpc(target, func() error { return t.inner.InstallSnapshot(id, target, args, resp, data) })
}

// TimeoutNow implements raft.Transport.
func (t *linkTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return t.rpc(target, func() error { return t.inner.TimeoutNow(id, target, args, resp) })
}

// EncodePeer implements raft.Transport.
func (t *linkTransport) EncodePeer(id raft.ServerID, addr raft.ServerAddress) []byte {
	return t.inner.EncodePeer(id, addr)
}

// DecodePeer implements raft.Transport.
func (t *linkTransport) DecodePeer(b []byte) raft.ServerAddress { return t.inner.DecodePeer(b) }

// SetHeartbeatHandler implements raft.Transport.
func (t *linkTransport) SetHeartbeatHandler(cb func(rpc raft.RPC)) { t.inner.SetHeartbeatHandler(cb) }

// Close implements raft.WithClose: it aborts delays in progress, closes the
// pooled connections of a NetworkTransport (CloseStreams; without it the
// peers' connection handlers would linger) and closes the inner transport.
// hashicorp calls it from (*raft.Raft).Shutdown's future. Idempotent.
func (t *linkTransport) Close() error {
	t.abort()
	if cs, ok := t.inner.(interface{ CloseStreams() }); ok {
		cs.CloseStreams()
	}
	return t.inner.(raft.WithClose).Close()
}
