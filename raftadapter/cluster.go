package raftadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/raftick/raftick/internal/cfgerr"
)

// TransportKind selects the hashicorp transport a harness cluster runs on.
type TransportKind uint8

const (
	// TransportInmem is raft.InmemTransport: in-process channels.
	TransportInmem TransportKind = iota
	// TransportTCP is raft.NetworkTransport over TCP on 127.0.0.1, each
	// node on a free port chosen by the kernel (msgpack on the wire).
	TransportTCP
)

// String returns "inmem" or "tcp".
func (k TransportKind) String() string {
	switch k {
	case TransportInmem:
		return "inmem"
	case TransportTCP:
		return "tcp"
	}
	return "TransportKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseTransportKind parses "inmem" or "tcp".
func ParseTransportKind(s string) (TransportKind, error) {
	switch s {
	case "inmem":
		return TransportInmem, nil
	case "tcp":
		return TransportTCP, nil
	}
	return 0, fmt.Errorf("raftadapter: unknown transport %q (want inmem or tcp)", s)
}

// MaxClusterNodes is the largest ClusterConfig.Nodes accepted.
const MaxClusterNodes = 64

// DefaultRPCTimeout is the transport timeout used when
// ClusterConfig.RPCTimeout is 0 (InmemTransport's own default).
const DefaultRPCTimeout = 500 * time.Millisecond

// Harness errors.
var (
	// ErrNoLeader is returned by CrashLeader when the live nodes do not
	// agree on a leader.
	ErrNoLeader = errors.New("raftadapter: no agreed leader")
	// ErrUnknownNode is returned for a raft.ServerID not in the cluster.
	ErrUnknownNode = errors.New("raftadapter: unknown node")
	// ErrNodeDown is returned when crashing a node that is already down.
	ErrNodeDown = errors.New("raftadapter: node already down")
	// ErrClusterShutdown is returned by operations on a shut-down cluster.
	ErrClusterShutdown = errors.New("raftadapter: cluster shut down")
)

// ClusterConfig configures a harness cluster of real hashicorp/raft nodes in
// one process. Start from DefaultClusterConfig.
type ClusterConfig struct {
	// Nodes is the number of voters, in [1, MaxClusterNodes]. Default 3.
	// They are named "n1", "n2", ...
	Nodes int
	// Timing is mapped onto every node's raft.Config (Timing.RaftConfig).
	// Default DefaultTiming() (hashicorp's defaults: 1s timeouts).
	Timing Timing
	// Transport selects InmemTransport or TCP on loopback. Default inmem.
	Transport TransportKind
	// Latency, if not nil, delays every request and every response of
	// every RPC by an independent draw (one-way delay), on top of the
	// transport's own. nil means no added delay.
	Latency Latency
	// RPCTimeout is the transport timeout: InmemTransport's wait to
	// enqueue and to get a response, NetworkTransport's dial and I/O
	// deadline. 0 means DefaultRPCTimeout; negative is invalid.
	RPCTimeout time.Duration
	// Seed seeds the latency draws (one PCG stream per node). hashicorp's
	// own timers draw from math/rand's global source and cannot be seeded,
	// so runs are not reproducible, only the injected latencies are.
	Seed uint64
	// Logger receives hashicorp/raft's logs (one sub-logger per node,
	// named by its ID, transport logs under "<id>.net") and the harness's
	// own (named "harness"). nil means the module's default: warnings and
	// errors to standard error, named raftick.raftadapter (a failover
	// makes hashicorp/raft warn); hclog.NewNullLogger() discards them. Use
	// NewLogger for a logger with a level.
	Logger hclog.Logger
}

// DefaultClusterConfig returns 3 nodes on InmemTransport with
// DefaultTiming, no added latency and a null logger.
func DefaultClusterConfig() ClusterConfig {
	return ClusterConfig{Nodes: 3, Timing: DefaultTiming(), Transport: TransportInmem}
}

// Validate reports the first invalid field of c, or nil.
func (c ClusterConfig) Validate() error {
	if c.Nodes < 1 || c.Nodes > MaxClusterNodes {
		return fieldErr("ClusterConfig.Nodes", c.Nodes, "must be in [1, %d]", MaxClusterNodes)
	}
	if err := c.Timing.Validate(); err != nil {
		return err
	}
	if c.Transport != TransportInmem && c.Transport != TransportTCP {
		return fieldErr("ClusterConfig.Transport", c.Transport, "must be TransportInmem or TransportTCP")
	}
	if c.RPCTimeout < 0 {
		return fieldErr("ClusterConfig.RPCTimeout", c.RPCTimeout, "must not be negative (0 means %v)", DefaultRPCTimeout)
	}
	if c.RPCTimeout != 0 && c.RPCTimeout < MinCommitTimeout {
		return fieldErr("ClusterConfig.RPCTimeout", c.RPCTimeout, "is below the floor of %v: no RPC is answered sooner (time.Duration counts nanoseconds: did you forget a unit?)", MinCommitTimeout)
	}
	return nil
}

func (c ClusterConfig) rpcTimeout() time.Duration {
	if c.RPCTimeout == 0 {
		return DefaultRPCTimeout
	}
	return c.RPCTimeout
}

// Cluster is a running cluster of real hashicorp/raft nodes in one process,
// with in-memory log, stable and snapshot stores, bootstrapped with all
// nodes as voters. It watches every node through a raft.Observer (leader
// observations and state changes, timestamped synchronously on raft's own
// goroutine) and its LeaderCh, and injects faults: crashes and partitions.
//
// Methods are safe for concurrent use; Wait* and CrashLeader block and
// honour their context.
type Cluster struct {
	cfg    ClusterConfig
	logger hclog.Logger
	net    *network
	nodes  []*node
	byID   map[raft.ServerID]*node

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every observation (broadcast)
	watch    *failoverWatch
	shutdown bool
}

type node struct {
	id    raft.ServerID
	addr  raft.ServerAddress
	raft  *raft.Raft
	trans *linkTransport
	stop  chan struct{} // stops the LeaderCh reader
	done  chan struct{} // closed when the LeaderCh reader returned

	// Guarded by Cluster.mu.
	alive    bool
	leader   raft.ServerID // last LeaderObservation
	isLeader bool          // last LeaderCh value
}

// failoverWatch follows one CrashLeader: what the survivors observe after
// the crash instant.
type failoverWatch struct {
	crashed  raft.ServerID
	at       time.Time
	detected time.Time                   // first survivor cleared its leader
	selfAt   map[raft.ServerID]time.Time // last self-observation as leader after at
	leader   raft.ServerID
	conv     time.Time
	done     chan struct{}
}

// NewCluster starts a bootstrapped cluster as configured. Nodes start as
// followers and elect a leader on their own; use WaitLeader. The caller
// must call Shutdown.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = defaultLogger()
	}
	c := &Cluster{
		cfg:     cfg,
		logger:  logger,
		net:     newNetwork(),
		byID:    map[raft.ServerID]*node{},
		changed: make(chan struct{}),
	}

	// Transports first: TCP addresses are known only once bound.
	inners := make([]innerTransport, cfg.Nodes)
	closeInners := func() {
		for _, in := range inners {
			if in != nil {
				_ = in.Close()
			}
		}
	}
	var servers []raft.Server
	for i := range cfg.Nodes {
		id := raft.ServerID("n" + strconv.Itoa(i+1))
		nodeLog := logger.Named(string(id))
		switch cfg.Transport {
		case TransportInmem:
			_, in := raft.NewInmemTransportWithTimeout(raft.ServerAddress(id), cfg.rpcTimeout())
			inners[i] = in
		case TransportTCP:
			in, err := raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 3, cfg.rpcTimeout(), nodeLog.Named("net"))
			if err != nil {
				closeInners()
				return nil, fmt.Errorf("raftadapter: TCP transport for %s: %w", id, err)
			}
			inners[i] = in
		}
		n := &node{id: id, addr: inners[i].LocalAddr(), alive: true,
			stop: make(chan struct{}), done: make(chan struct{})}
		n.trans = newLinkTransport(inners[i], c.net, cfg.Latency, rand.New(rand.NewPCG(cfg.Seed, uint64(i))))
		c.nodes = append(c.nodes, n)
		c.byID[id] = n
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: id, Address: n.addr})
	}
	if cfg.Transport == TransportInmem {
		for i, a := range inners {
			for j, b := range inners {
				if i != j {
					a.(*raft.InmemTransport).Connect(b.LocalAddr(), b)
				}
			}
		}
	}

	for _, n := range c.nodes {
		conf, err := cfg.Timing.RaftConfig(n.id, logger.Named(string(n.id)))
		if err != nil {
			closeInners()
			_ = c.Shutdown()
			return nil, err
		}
		logs, stable, snaps := raft.NewInmemStore(), raft.NewInmemStore(), raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(conf, logs, stable, snaps, n.trans, raft.Configuration{Servers: servers}); err != nil {
			closeInners()
			_ = c.Shutdown()
			return nil, fmt.Errorf("raftadapter: bootstrap %s: %w", n.id, err)
		}
		r, err := raft.NewRaft(conf, nopFSM{}, logs, stable, snaps, n.trans)
		if err != nil {
			closeInners()
			_ = c.Shutdown()
			return nil, fmt.Errorf("raftadapter: NewRaft %s: %w", n.id, err)
		}
		c.mu.Lock()
		n.raft = r
		_, n.leader = r.LeaderWithID()
		c.mu.Unlock()
		r.RegisterObserver(raft.NewObserver(nil, false, c.observer(n)))
		go c.readLeaderCh(n)
	}
	c.logger.Named("harness").Info("cluster started", "nodes", cfg.Nodes, "transport", cfg.Transport,
		"latency", latencyName(cfg.Latency), "heartbeat-timeout", cfg.Timing.ElectionTimeout,
		"election-timeout", cfg.Timing.voteTimeout(), "prevote", cfg.Timing.PreVote)
	return c, nil
}

func latencyName(l Latency) string {
	if l == nil {
		return "none"
	}
	return l.String()
}

// observer returns a raft.Observer filter that records n's leader
// observations. It runs synchronously on raft's goroutine at the moment of
// the change (raft.go setLeader) and always returns false: nothing is ever
// queued, so nothing can be dropped.
func (c *Cluster) observer(n *node) raft.FilterFn {
	return func(o *raft.Observation) bool {
		if lo, ok := o.Data.(raft.LeaderObservation); ok {
			now := time.Now()
			c.mu.Lock()
			n.leader = lo.LeaderID
			if w := c.watch; w != nil && n.alive && w.conv.IsZero() {
				if lo.LeaderID == "" && w.detected.IsZero() {
					w.detected = now
				}
				if lo.LeaderID == n.id {
					w.selfAt[n.id] = now
				}
				c.checkWatchLocked(now)
			}
			c.broadcastLocked()
			c.mu.Unlock()
		}
		return false
	}
}

// readLeaderCh follows n's LeaderCh until n is stopped.
func (c *Cluster) readLeaderCh(n *node) {
	defer close(n.done)
	ch := n.raft.LeaderCh()
	for {
		select {
		case v := <-ch:
			c.mu.Lock()
			n.isLeader = v
			c.broadcastLocked()
			c.mu.Unlock()
		case <-n.stop:
			return
		}
	}
}

func (c *Cluster) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// checkWatchLocked completes the failover watch once every live node
// observes the same leader, other than the crashed one.
func (c *Cluster) checkWatchLocked(now time.Time) {
	w := c.watch
	var leader raft.ServerID
	for _, n := range c.nodes {
		if !n.alive {
			continue
		}
		if n.leader == "" || n.leader == w.crashed || (leader != "" && n.leader != leader) {
			return
		}
		leader = n.leader
	}
	if leader == "" {
		return
	}
	w.leader, w.conv = leader, now
	close(w.done)
}

// IDs returns the node IDs in order ("n1", "n2", ...).
func (c *Cluster) IDs() []raft.ServerID {
	ids := make([]raft.ServerID, len(c.nodes))
	for i, n := range c.nodes {
		ids[i] = n.id
	}
	return ids
}

// Raft returns the hashicorp node id, or nil if there is none. The node
// may have been shut down (see Alive).
func (c *Cluster) Raft(id raft.ServerID) *raft.Raft {
	if n := c.byID[id]; n != nil {
		return n.raft
	}
	return nil
}

// Alive reports whether node id is running (not crashed, cluster not shut
// down).
func (c *Cluster) Alive(id raft.ServerID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.byID[id]
	return n != nil && n.alive
}

// Leader returns the leader every live node agrees on right now: each
// reports it through LeaderWithID and the leader's LeaderCh said true.
func (c *Cluster) Leader() (raft.ServerID, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agreedLeaderLocked()
}

func (c *Cluster) agreedLeaderLocked() (raft.ServerID, bool) {
	var leader raft.ServerID
	for _, n := range c.nodes {
		if !n.alive {
			continue
		}
		// LeaderWithID takes only raft's leaderLock, never held while
		// raft calls an observer, so calling it under c.mu is safe.
		_, id := n.raft.LeaderWithID()
		if id == "" || (leader != "" && id != leader) {
			return "", false
		}
		leader = id
	}
	l := c.byID[leader]
	if l == nil || !l.alive || !l.isLeader {
		return "", false
	}
	return leader, true
}

// pollInterval bounds how long a waiter can miss a change that no
// observation announced (there is none it should miss; this is a safety net).
func (c *Cluster) pollInterval() time.Duration {
	return max(c.cfg.Timing.ElectionTimeout/10, time.Millisecond)
}

// WaitLeader waits until every live node agrees on a live leader (see
// Leader) and returns it, or returns ctx's error.
func (c *Cluster) WaitLeader(ctx context.Context) (raft.ServerID, error) {
	tick := time.NewTicker(c.pollInterval())
	defer tick.Stop()
	for {
		c.mu.Lock()
		if c.shutdown {
			c.mu.Unlock()
			return "", ErrClusterShutdown
		}
		id, ok := c.agreedLeaderLocked()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return id, nil
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-ctx.Done():
			return "", fmt.Errorf("raftadapter: waiting for a leader: %w", ctx.Err())
		}
	}
}

// Crash stops node id abruptly, as a process crash would: it is marked down
// (RPCs to it fail at once with ErrPartitioned, as to a closed port), then
// (*raft.Raft).Shutdown is called and awaited. Its stores are kept but it
// is not restarted.
func (c *Cluster) Crash(id raft.ServerID) error {
	c.mu.Lock()
	n := c.byID[id]
	switch {
	case c.shutdown:
		c.mu.Unlock()
		return ErrClusterShutdown
	case n == nil:
		c.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownNode, id)
	case !n.alive:
		c.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNodeDown, id)
	}
	n.alive = false
	c.mu.Unlock()
	c.stopNode(n)
	return nil
}

// stopNode shuts n down; n must already be marked not alive.
func (c *Cluster) stopNode(n *node) {
	c.net.setDown(n.addr)
	f := n.raft.Shutdown()
	n.trans.abort()
	_ = f.Error() // always nil; waits for raft's goroutines and closes the transport
	close(n.stop)
	<-n.done
	c.logger.Named("harness").Debug("node stopped", "id", n.id)
}

// Trial is one measured failover.
type Trial struct {
	// OldLeader is the crashed leader, OldTerm its term at the crash.
	OldLeader raft.ServerID
	OldTerm   uint64
	// NewLeader is the leader the survivors agreed on; NewTerm is its term
	// read right after they agreed.
	NewLeader raft.ServerID
	NewTerm   uint64
	// Detected is the time from the crash until the first survivor's
	// heartbeat timer found the leader silent and cleared it (a
	// LeaderObservation with no leader, raft.go runFollower); 0 if no
	// survivor did (e.g. a survivor won before another's timer fired).
	Detected time.Duration
	// Elected is the time from the crash until NewLeader won its election
	// (its own LeaderObservation naming itself).
	Elected time.Duration
	// Failover is the time from the crash until every surviving node
	// observed NewLeader: the last survivor's LeaderObservation, which a
	// follower makes on accepting the new leader's first AppendEntries.
	Failover time.Duration
}

// CrashLeader crashes the agreed leader (as Crash) and measures the
// failover: from the instant just before (*raft.Raft).Shutdown closes the
// leader down until every surviving node has observed the same new leader
// through its raft.Observer (LeaderObservation, timestamped on raft's own
// goroutine when the node changes its leader). It returns once that has
// happened and the new leader's LeaderCh has reported true, or with ctx's
// error. It fails with ErrNoLeader if the live nodes do not agree on a
// leader when called.
func (c *Cluster) CrashLeader(ctx context.Context) (Trial, error) {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return Trial{}, ErrClusterShutdown
	}
	if c.watch != nil {
		c.mu.Unlock()
		return Trial{}, errors.New("raftadapter: CrashLeader already in progress")
	}
	leader, ok := c.agreedLeaderLocked()
	if !ok {
		c.mu.Unlock()
		return Trial{}, ErrNoLeader
	}
	ln := c.byID[leader]
	tr := Trial{OldLeader: leader, OldTerm: ln.raft.CurrentTerm()}
	w := &failoverWatch{crashed: leader, selfAt: map[raft.ServerID]time.Time{}, done: make(chan struct{})}
	c.watch = w
	ln.alive = false
	w.at = time.Now()
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.watch = nil
		c.mu.Unlock()
	}()

	c.stopNode(ln)

	select {
	case <-w.done:
	case <-ctx.Done():
		return tr, fmt.Errorf("raftadapter: waiting for failover from %s: %w", leader, ctx.Err())
	}
	// The survivors agree; wait for the winner's LeaderCh too.
	c.mu.Lock()
	nl := c.byID[w.leader]
	for !nl.isLeader {
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return tr, fmt.Errorf("raftadapter: waiting for %s's LeaderCh: %w", w.leader, ctx.Err())
		}
		c.mu.Lock()
	}
	tr.NewLeader = w.leader
	tr.Failover = w.conv.Sub(w.at)
	if !w.detected.IsZero() {
		tr.Detected = w.detected.Sub(w.at)
	}
	if t, ok := w.selfAt[w.leader]; ok {
		tr.Elected = t.Sub(w.at)
	}
	c.mu.Unlock()
	tr.NewTerm = nl.raft.CurrentTerm()
	c.logger.Named("harness").Info("failover", "old", tr.OldLeader, "new", tr.NewLeader,
		"detected", tr.Detected, "elected", tr.Elected, "failover", tr.Failover, "terms", tr.NewTerm-tr.OldTerm)
	return tr, nil
}

// Partition cuts the links between groups of nodes: nodes in different
// groups cannot exchange RPCs (they fail at once with ErrPartitioned, and a
// response still in flight when the cut happens is lost). Nodes named in no
// group form one more group together. It replaces any earlier partition.
// Every ID must be known and appear at most once.
func (c *Cluster) Partition(groups ...[]raft.ServerID) error {
	group := map[raft.ServerID]int{}
	for g, ids := range groups {
		for _, id := range ids {
			if c.byID[id] == nil {
				return fmt.Errorf("%w: %q", ErrUnknownNode, id)
			}
			if _, dup := group[id]; dup {
				return fmt.Errorf("raftadapter: Partition: node %q in more than one group", id)
			}
			group[id] = g
		}
	}
	rest := len(groups)
	gOf := func(id raft.ServerID) int {
		if g, ok := group[id]; ok {
			return g
		}
		return rest
	}
	cut := map[[2]raft.ServerAddress]bool{}
	for _, a := range c.nodes {
		for _, b := range c.nodes {
			if a != b && gOf(a.id) != gOf(b.id) {
				cut[pairOf(a.addr, b.addr)] = true
			}
		}
	}
	c.net.setCuts(cut)
	c.logger.Named("harness").Info("partition", "groups", fmt.Sprint(groups))
	return nil
}

// Heal removes every cut link. Crashed nodes stay down.
func (c *Cluster) Heal() {
	c.net.setCuts(map[[2]raft.ServerAddress]bool{})
	c.logger.Named("harness").Info("partition healed")
}

// Stats sums the network counters of all nodes.
func (c *Cluster) Stats() NetStats {
	var s NetStats
	for _, n := range c.nodes {
		ns := n.trans.stats()
		s.RPCs += ns.RPCs
		s.Dropped += ns.Dropped
		s.Aborted += ns.Aborted
		s.Failed += ns.Failed
		s.Delayed += ns.Delayed
		s.MaxDelay = max(s.MaxDelay, ns.MaxDelay)
	}
	return s
}

// Shutdown stops every live node and waits until all of hashicorp/raft's
// goroutines, the harness's LeaderCh readers and the transports' listeners
// and connection handlers have finished. Idempotent.
func (c *Cluster) Shutdown() error {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil
	}
	c.shutdown = true
	var live []*node
	for _, n := range c.nodes {
		if n.alive && n.raft != nil {
			live = append(live, n)
		}
		n.alive = false
	}
	c.broadcastLocked()
	c.mu.Unlock()

	// Stop all nodes concurrently: a node blocked in an RPC to a peer that
	// is shutting down finishes sooner.
	var wg sync.WaitGroup
	for _, n := range live {
		wg.Go(func() { c.stopNode(n) })
	}
	wg.Wait()
	// Nodes that never started (NewCluster failed half-way) still own a
	// transport; crashed ones were closed already (Close is idempotent).
	for _, n := range c.nodes {
		if n.raft == nil {
			_ = n.trans.Close()
		}
	}
	// Close every transport's pooled connections again now that no node
	// sends: a crashed node's peers may have dialled it before it died,
	// and their pooled connections would keep its handlers alive.
	for _, n := range c.nodes {
		_ = n.trans.Close()
	}
	return nil
}

// nopFSM is a state machine that ignores everything: the harness measures
// elections, not replication.
type nopFSM struct{}

func (nopFSM) Apply(*raft.Log) any                 { return nil }
func (nopFSM) Snapshot() (raft.FSMSnapshot, error) { return nopSnapshot{}, nil }
func (nopFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }

type nopSnapshot struct{}

func (nopSnapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (nopSnapshot) Release()                             {}

// ErrInvalidConfig is wrapped by the errors of BridgeConfig.Validate,
// ClusterConfig.Validate and FailoverConfig.Validate: *election.FieldError
// values whose Field names the field with its type
// ("ClusterConfig.Nodes"). Timing's errors are *TimingError values
// wrapping ErrInvalidTiming.
var ErrInvalidConfig = errors.New("raftadapter: invalid config")

// fieldErr returns a *election.FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}
