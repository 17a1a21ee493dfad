package etcd

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/wheel"
)

// engine is the experiment.Engine of etcd nodes configured as nc.
type engine struct{ nc etcdadapter.Config }

// newEngine returns the engine that runs s under c; s must pass Check.
func newEngine(s experiment.Setup, c Config) (engine, error) {
	nc, err := NodeConfig(s, c)
	return engine{nc}, err
}

// NewCluster builds a Cluster of s.Nodes etcd nodes with s's network and
// disk models (s's timing is the engine's node configuration).
func (e engine) NewCluster(_ context.Context, s experiment.Setup, rng *rand.Rand, h experiment.Hooks) (experiment.Cluster, error) {
	ec := &etcdCluster{changed: h.Changed}
	cfg := ClusterConfig{
		Nodes: s.Nodes, Node: e.nc, Rand: rng, Loss: s.Loss, Duplicate: s.Duplicate,
		Drop: ec.drop, Observer: h.Observer, Trace: tracer(h.Trace),
	}
	if l := s.Latency; l != nil {
		cfg.Latency = func(_, _ uint64, rng *rand.Rand) time.Duration { return l.Sample(rng) }
	}
	if d := s.Disk; d != nil {
		cfg.Disk = func(_ etcdadapter.Write, rng *rand.Rand) time.Duration { return d.Sample(rng) }
	}
	if h.Heartbeat != nil {
		cfg.OnSend = func(m *pb.Message) {
			if m.GetType() == pb.MsgHeartbeat {
				h.Heartbeat(election.ID(m.GetFrom()))
			}
		}
	}
	c, err := NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	ec.Cluster = c
	for _, id := range c.IDs() {
		ec.ids = append(ec.ids, election.ID(id))
	}
	return ec, nil
}

// tracer adapts a trial's trace to a Cluster's.
func tracer(trace func(string)) func(time.Duration, uint64, string) {
	if trace == nil {
		return nil
	}
	return func(at time.Duration, node uint64, what string) {
		trace(sim.FormatEvent(at, election.ID(node), what))
	}
}

// etcdCluster is a Cluster as the trials of package experiment drive it.
// Its nodes report their state between instants: Run calls changed after
// each instant.
type etcdCluster struct {
	*Cluster
	ids     []election.ID
	changed func()
	// The appends of shortFrom to the nodes in short are dropped, so that
	// they miss its last entry.
	shortFrom uint64
	short     map[uint64]bool
}

func (c *etcdCluster) drop(m *pb.Message) bool {
	return c.shortFrom != 0 && m.GetFrom() == c.shortFrom && m.GetType() == pb.MsgApp && c.short[m.GetTo()]
}

func (c *etcdCluster) Wheel() *wheel.Wheel { return c.Cluster.Wheel().Wheel }

func (c *etcdCluster) IDs() []election.ID { return c.ids }

func (c *etcdCluster) Start() error { return c.Cluster.Start() }

func (c *etcdCluster) Campaign(id election.ID) error {
	n := c.Node(uint64(id))
	if n == nil {
		return ErrNoNode
	}
	return n.Campaign()
}

func (c *etcdCluster) Crash(id election.ID) { c.Cluster.Crash(uint64(id)) }

func (c *etcdCluster) Leader() (election.ID, uint64) {
	l, term := c.Cluster.Leader()
	return election.ID(l), term
}

func (c *etcdCluster) Accepted(leader election.ID, term uint64) (followers, others int) {
	return c.Cluster.Accepted(uint64(leader), term)
}

func (c *etcdCluster) Term(id election.ID) uint64 { return c.Node(uint64(id)).Status().Term }

// ShortenLogs makes leader propose an entry and drops its appends to
// short, so that they never get it, as long as leader runs; the logs are
// ready when leader and every other node stored it. It needs a running
// leader: short logs before the start (a bootstrap) are an error.
func (c *etcdCluster) ShortenLogs(leader election.ID, short []election.ID) (func() bool, error) {
	if leader == election.None {
		return nil, errors.New("etcd engine: short logs need a leader to replicate past them (not available in bootstrap)")
	}
	c.shortFrom, c.short = uint64(leader), make(map[uint64]bool, len(short))
	for _, id := range short {
		c.short[uint64(id)] = true
	}
	n := c.Node(uint64(leader))
	last, err := n.Storage().LastIndex()
	if err != nil {
		return nil, err
	}
	target := last + 1
	_ = n.Propose([]byte("failover")) // a proposal etcd drops shows as a trial that never gets ready
	return func() bool {
		for _, id := range c.Cluster.IDs() {
			if c.short[id] {
				continue
			}
			if last, _ := c.Node(id).Storage().LastIndex(); last < target {
				return false
			}
		}
		return true
	}, nil
}

func (c *etcdCluster) Sent() int { return int(c.Stats().Sent) }

func (c *etcdCluster) Run(limit time.Duration, done func() bool) bool {
	return c.Cluster.Run(limit, func() bool {
		if c.changed != nil {
			c.changed()
		}
		return done()
	})
}
