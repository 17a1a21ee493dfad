package experiment

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/wheel"
)

// An Engine builds the clusters the failover and bootstrap trials run on:
// raftick's own simulated servers (Raftick) or another implementation's
// real nodes in virtual time (package sim/engines/etcd). The trials are
// written once against Cluster; an engine only says how its servers are
// started, crashed, observed and given short logs.
type Engine interface {
	// NewCluster builds the cluster of one trial of s, no server started.
	// Everything random in it draws from rng, so that a trial is a
	// function of s and rng's state. ctx may interrupt Cluster.Run.
	NewCluster(ctx context.Context, s Setup, rng *rand.Rand, h Hooks) (Cluster, error)
}

// Hooks is how a trial follows its cluster. Every field may be nil.
type Hooks struct {
	// Changed is called whenever who leads or follows whom may have
	// changed, so that the trial re-evaluates its conditions: after each
	// node event, or (for an engine that reports no events mid-instant)
	// after each instant Run processes, before Run's done.
	Changed func()
	// Heartbeat is called for every heartbeat a server sends, before the
	// network takes it.
	Heartbeat func(from election.ID)
	// Observer receives every node event, in order.
	Observer func(election.Event)
	// Trace receives the trial's event log, one line per call.
	Trace func(string)
}

// A Cluster is one trial's servers, IDs 1..Nodes, on one virtual wheel
// that carries their timers and messages. It is not safe for concurrent
// use.
type Cluster interface {
	// Wheel is the virtual wheel the cluster runs on; a trial puts its own
	// timers (the crash) on it.
	Wheel() *wheel.Wheel
	// Now is the cluster's virtual time.
	Now() time.Duration
	// IDs returns the servers' IDs in increasing order.
	IDs() []election.ID
	// Start starts every server.
	Start() error
	// Campaign makes a running server start an election now.
	Campaign(id election.ID) error
	// Crash stops a server at once; its messages in flight stay in
	// flight.
	Crash(id election.ID)
	// Leader returns the running leader of the highest term and that
	// term, or election.None.
	Leader() (id election.ID, term uint64)
	// Accepted returns how many other running servers accepted leader as
	// the leader of term, and how many other servers run.
	Accepted(leader election.ID, term uint64) (followers, others int)
	// Term returns a server's current term.
	Term(id election.ID) uint64
	// MaxTerm returns the highest term the cluster reached.
	MaxTerm() uint64
	// ShortenLogs makes the logs of short miss the last entry that
	// leader and every other server hold, so that they cannot win an
	// election; ready reports when that holds (an engine may have to
	// replicate an entry first).
	ShortenLogs(leader election.ID, short []election.ID) (ready func() bool, err error)
	// Sent returns the number of messages servers sent so far.
	Sent() int
	// Run advances virtual time deadline by deadline until done returns
	// true or the next deadline lies beyond limit, and returns done().
	// It also returns false when ctx is cancelled.
	Run(limit time.Duration, done func() bool) bool
	// Err reports why the run is not to be trusted (a callback panicked,
	// the servers broke election safety: a *sim.SafetyError, ctx was
	// cancelled), or nil.
	Err() error
	// Close stops the cluster.
	Close()
}

// Raftick is the engine of raftick's own election nodes, simulated by
// package sim.
type Raftick struct {
	// Adjust, if not nil, changes each trial's sim.Config before the
	// cluster is built: the real-time engine (sim/engines/realtime) puts
	// the cluster on a real-time wheel and an on-time carrier with it.
	Adjust func(*sim.Config)
}

// NewCluster builds s's sim.Cluster.
func (e Raftick) NewCluster(ctx context.Context, s Setup, rng *rand.Rand, h Hooks) (Cluster, error) {
	rc := &raftickCluster{tr: newTracker(s.Nodes)}
	changed, obs := h.Changed, h.Observer
	cfg := s.clusterConfig(ctx, rng, h.Trace, rc.tr, func(e election.Event) {
		if obs != nil {
			obs(e)
		}
		if changed != nil {
			changed()
		}
	})
	if h.Heartbeat != nil {
		cfg.OnSend = func(m election.Message) {
			if m.Type == election.MsgHeartbeat {
				h.Heartbeat(m.From)
			}
		}
	}
	if e.Adjust != nil {
		e.Adjust(&cfg)
	}
	c, err := sim.NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	rc.Cluster = c
	return rc, nil
}

// raftickCluster is a sim.Cluster seen through the events of its nodes.
type raftickCluster struct {
	*sim.Cluster
	tr *tracker
}

func (c *raftickCluster) Wheel() *wheel.Wheel { return c.Cluster.Wheel().Wheel }

func (c *raftickCluster) Campaign(id election.ID) error {
	n := c.Node(id)
	if n == nil {
		return sim.ErrNoServer
	}
	return n.Campaign()
}

func (c *raftickCluster) Leader() (election.ID, uint64) {
	l, term, _, _ := c.tr.accepted(c.Cluster)
	return l, term
}

func (c *raftickCluster) Accepted(leader election.ID, term uint64) (followers, others int) {
	return c.tr.acceptedBy(c.Cluster, leader, term)
}

func (c *raftickCluster) Term(id election.ID) uint64 { return c.Node(id).Status().Term }

func (c *raftickCluster) MaxTerm() uint64 { return c.tr.maxTerm }

// ShortenLogs gives every server a log of 10 entries of term 1 and short
// 9 of them: at once.
func (c *raftickCluster) ShortenLogs(_ election.ID, short []election.ID) (func() bool, error) {
	for _, id := range c.IDs() {
		c.Log(id).Set(10, 1)
	}
	for _, id := range short {
		c.Log(id).Set(9, 1)
	}
	return func() bool { return true }, nil
}

func (c *raftickCluster) Sent() int { return int(c.Stats().Sent) }

func (c *raftickCluster) Start() error { return c.Cluster.Start() }

// addSat returns a+b, saturating at the largest duration.
func addSat(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}
