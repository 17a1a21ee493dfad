package etcd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/memnet"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/internal/vnet"
)

// LatencyFunc returns the one-way delay of a message from one node to
// another, drawn from rng; a negative result counts as 0. A package sim
// Latency l plugs in as
//
//	func(_, _ uint64, rng *rand.Rand) time.Duration { return l.Sample(rng) }
type LatencyFunc func(from, to uint64, rng *rand.Rand) time.Duration

// DiskFunc returns how long a node's storage write takes (see
// Config.Disk), drawn from rng.
type DiskFunc func(w etcdadapter.Write, rng *rand.Rand) time.Duration

// ClusterConfig configures a Cluster.
type ClusterConfig struct {
	// Nodes is the number of nodes, with IDs 1..Nodes; in [1, 1000].
	Nodes int
	// Node is the template of every node's configuration: timing and
	// options. NewCluster sets ID, Peers (every node), Rand (the
	// cluster's), Disk (from Disk below) and Observer (from Observer
	// below) per node; what the template has in those fields is ignored.
	Node etcdadapter.Config
	// Rand drives everything random in the cluster: message latencies and
	// loss, disk times, tick phases and every node's randomized election
	// timeout. Required. The cluster is deterministic for a given Rand
	// state.
	Rand *rand.Rand
	// Latency is the network's one-way delay; nil means none (messages
	// still arrive through the wheel, after the sender's work at that
	// instant).
	Latency LatencyFunc
	// Loss is the probability that a message is lost; in [0, 1).
	// Duplicate is the probability that a message is delivered twice
	// (two independent latency draws); in [0, 1].
	Loss, Duplicate float64
	// Drop, if set, drops every message it returns true for, before the
	// loss draw: partitions, one-way cuts, or an experiment's filter.
	Drop func(m *pb.Message) bool
	// Disk models each node's storage writes; nil means instantaneous.
	Disk DiskFunc
	// AlignedTicks makes every node tick at the same instants (first tick
	// one TickInterval after its start). By default each start draws the
	// node's first tick uniformly from (0, TickInterval], so tickers have
	// independent phases, as separate processes do.
	AlignedTicks bool
	// Observer, if set, receives every node's events, in order.
	Observer func(election.Event)
	// OnSend, if set, sees every message a node sends, before the network
	// touches it. It must not modify the message.
	OnSend func(m *pb.Message)
	// Trace, if set, receives one line per event and per fault (crash,
	// restart) for debugging and --trace output.
	Trace func(at time.Duration, node uint64, what string)
}

// Validate reports the first invalid field of c, or nil: a
// *sim.FieldError wrapping ErrInvalidConfig, whose Field is a field of
// ClusterConfig ("Nodes") or of its node template ("Node.ElectionTick").
func (c ClusterConfig) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fieldErr("Nodes", c.Nodes, "must be in [1, %d]", MaxNodes)
	case c.Rand == nil:
		return fieldErr("Rand", "nil", "is required (seed it for reproducible runs)")
	case math.IsNaN(c.Loss) || c.Loss < 0 || c.Loss >= 1:
		return fieldErr("Loss", c.Loss, "must be in [0, 1)")
	case math.IsNaN(c.Duplicate) || c.Duplicate < 0 || c.Duplicate > 1:
		return fieldErr("Duplicate", c.Duplicate, "must be in [0, 1]")
	}
	return nodeField(c.Node.ValidateTiming())
}

// nodeField returns an etcdadapter error about the node template as this
// package's, its field under "Node." ("Node.ElectionTick").
func nodeField(err error) error {
	var fe *etcdadapter.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	return &sim.FieldError{Field: "Node." + fe.Field, Value: fe.Value, Reason: fe.Reason, Err: ErrInvalidConfig, Cause: err}
}

// NetStats counts the cluster network's messages.
type NetStats struct {
	Sent        int64 // handed to the network by a node
	Delivered   int64 // stepped into a running node
	Duplicated  int64 // sent twice by the Duplicate draw
	DroppedLoss int64 // lost by the Loss draw
	DroppedRule int64 // dropped by ClusterConfig.Drop
	DroppedDown int64 // addressed to a node that was down on arrival
}

// Cluster is a group of etcd Nodes on one virtual wheel that carries every
// node's ticker, every disk write and every message in flight, so the
// whole group runs as "jump to the next deadline, fire it" on one
// goroutine, reproducibly from the Rand seed. A Cluster is not safe for
// concurrent use.
type Cluster struct {
	cfg   ClusterConfig
	w     *sim.Wheel
	rng   *rand.Rand
	ids   []uint64
	nodes []*etcdadapter.Node
	stats NetStats
	mail  *memnet.Courier[*pb.Message]
	check *electiontest.Checker // fed every event of every node
}

// NewCluster builds a cluster of cfg.Nodes nodes, none started.
func NewCluster(cfg ClusterConfig) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := sim.NewWheel()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, w: w, rng: cfg.Rand, check: electiontest.NewChecker(cfg.Nodes)}
	c.mail = memnet.NewCourier(w.Wheel, c.deliver)
	for i := range cfg.Nodes {
		c.ids = append(c.ids, uint64(i+1))
	}
	obs := func(e election.Event) {
		c.check.Observe(e)
		if cfg.Trace != nil {
			cfg.Trace(e.At, uint64(e.Node), e.Text())
		}
		if cfg.Observer != nil {
			cfg.Observer(e)
		}
	}
	for _, id := range c.ids {
		nc := cfg.Node
		nc.ID, nc.Peers, nc.Rand, nc.Disk, nc.Observer = id, c.ids, c.rng, nil, obs
		if cfg.Disk != nil {
			nc.Disk = func(wr etcdadapter.Write) time.Duration { return cfg.Disk(wr, c.rng) }
		}
		n, err := etcdadapter.NewNode(nc, w.Wheel, etcdadapter.TransportFunc(c.send))
		if err != nil {
			w.Stop()
			return nil, nodeField(err)
		}
		c.nodes = append(c.nodes, n)
	}
	return c, nil
}

// Wheel returns the cluster's virtual wheel.
func (c *Cluster) Wheel() *sim.Wheel { return c.w }

// Now returns the cluster's virtual time.
func (c *Cluster) Now() time.Duration { return c.w.Now() }

// Rand returns the cluster's random source, for experiments that draw
// their own choices from the same stream.
func (c *Cluster) Rand() *rand.Rand { return c.rng }

// IDs returns the node IDs, 1..Nodes. The slice must not be modified.
func (c *Cluster) IDs() []uint64 { return c.ids }

// Node returns node id, or nil for an unknown id.
func (c *Cluster) Node(id uint64) *etcdadapter.Node {
	if id < 1 || id > uint64(len(c.nodes)) {
		return nil
	}
	return c.nodes[id-1]
}

// Err reports why the cluster's run is not to be trusted: a
// *sim.PanicError if a callback on its wheel panicked, else a
// *sim.SafetyError if the nodes' events broke election safety
// (electiontest.Checker), else nil.
func (c *Cluster) Err() error {
	if err := c.w.Err(); err != nil {
		return err
	}
	if err := c.check.Err(); err != nil {
		return &sim.SafetyError{Err: err}
	}
	return nil
}

// Stats returns the network counters.
func (c *Cluster) Stats() NetStats { return c.stats }

func (c *Cluster) trace(id uint64, what string) {
	if c.cfg.Trace != nil {
		c.cfg.Trace(c.w.Now(), id, what)
	}
}

// firstTick draws a start's tick phase.
func (c *Cluster) firstTick() time.Duration {
	tick := c.cfg.Node.TickInterval
	if c.cfg.AlignedTicks {
		return tick
	}
	return 1 + time.Duration(c.rng.Int64N(int64(tick)))
}

// Start starts the given nodes (every node if none is given), in order.
// It returns ErrNoNode for an unknown ID and Node.Start's error (ErrRunning
// for a running node) for a node that does not start.
func (c *Cluster) Start(ids ...uint64) error {
	if len(ids) == 0 {
		ids = c.ids
	}
	for _, id := range ids {
		n := c.Node(id)
		if n == nil {
			return fmt.Errorf("%w: %d", ErrNoNode, id)
		}
		if err := n.Start(c.firstTick()); err != nil {
			return err
		}
	}
	return nil
}

// Crash crashes node id (see Node.Crash); its storage survives. Crashing
// a node that is down does nothing.
func (c *Cluster) Crash(id uint64) {
	if n := c.Node(id); n != nil {
		if !n.Status().Running {
			return
		}
		c.trace(id, "crash")
		n.Crash()
	}
}

// Restart starts a crashed node again from its storage, with a fresh tick
// phase. It returns ErrNoNode for an unknown ID, ErrRunning for a running
// node (Crash it first) and Node.Start's error for a node that does not
// start.
func (c *Cluster) Restart(id uint64) error {
	n := c.Node(id)
	if n == nil {
		return fmt.Errorf("%w: %d", ErrNoNode, id)
	}
	if n.Status().Running {
		return fmt.Errorf("%w: node %d (crash it before a restart)", etcdadapter.ErrRunning, id)
	}
	c.trace(id, "restart")
	return n.Start(c.firstTick())
}

// Leader returns the running leader with the highest term and that term,
// or 0, 0 if no running node leads.
func (c *Cluster) Leader() (id, term uint64) {
	for _, n := range c.nodes {
		if st := n.Status(); st.Running && st.Role == election.Leader && st.Term >= term {
			id, term = n.ID(), st.Term
		}
	}
	return id, term
}

// Accepted returns, for leader of term, how many other running nodes
// accepted it (Node.Accepted) and how many other nodes are running.
func (c *Cluster) Accepted(leader, term uint64) (followers, others int) {
	for _, n := range c.nodes {
		if n.ID() == leader {
			continue
		}
		if st := n.Status(); st.Running {
			others++
			if st.Term == term && st.Leader == leader {
				followers++
			}
		}
	}
	return followers, others
}

// MaxTerm returns the highest term of any running node.
func (c *Cluster) MaxTerm() uint64 {
	var t uint64
	for _, n := range c.nodes {
		if st := n.Status(); st.Running {
			t = max(t, st.Term)
		}
	}
	return t
}

// Run advances virtual time deadline by deadline until done returns true
// (checked before the first instant and after each instant is fully
// processed, so Now() is then the instant of the last change) or the next
// deadline lies beyond limit. It returns done().
func (c *Cluster) Run(limit time.Duration, done func() bool) bool {
	return vnet.Run(c.w.Virtual, limit, done, nil, 0)
}

// Close closes every node and stops the wheel; the cluster must not be
// used afterwards.
func (c *Cluster) Close() {
	for _, n := range c.nodes {
		n.Close()
	}
	c.w.Stop()
}

func (c *Cluster) send(m *pb.Message) {
	c.stats.Sent++
	if c.cfg.OnSend != nil {
		c.cfg.OnSend(m)
	}
	if c.cfg.Drop != nil && c.cfg.Drop(m) {
		c.stats.DroppedRule++
		return
	}
	switch vnet.Copies(c.rng, c.cfg.Loss, c.cfg.Duplicate) {
	case 0:
		c.stats.DroppedLoss++
		return
	case 2:
		c.stats.Duplicated++
		// etcd may modify a message it steps (it readdresses forwarded
		// proposals): each copy gets its own.
		c.transmit(proto.CloneOf(m))
	}
	c.transmit(m)
}

// transmit puts m in flight for one latency draw.
func (c *Cluster) transmit(m *pb.Message) {
	var d time.Duration
	if c.cfg.Latency != nil {
		d = max(c.cfg.Latency(m.GetFrom(), m.GetTo(), c.rng), 0)
	}
	if c.mail.Send(m, d) != nil {
		c.stats.DroppedDown++ // the wheel is stopped: nothing is delivered any more
	}
}

func (c *Cluster) deliver(m *pb.Message) {
	n := c.Node(m.GetTo())
	if n == nil || n.Step(m) != nil {
		c.stats.DroppedDown++
		return
	}
	c.stats.Delivered++
}
