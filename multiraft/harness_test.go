package multiraft_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// gnode names one replica: a group on a host.
type gnode struct {
	g multiraft.GroupID
	n election.ID
}

// cluster is N hosts running G groups on one virtual wheel and a
// MemNetwork. Every group has every host as a voter unless replicas < N.
type cluster struct {
	t       testing.TB
	v       *wheel.Virtual
	net     *multiraft.MemNetwork
	cfg     multiraft.Config
	hosts   map[election.ID]*multiraft.Host
	ids     []election.ID
	groups  []groupDef
	st      map[gnode]*election.MemoryStorage
	rng     *rand.Rand
	check   *electiontest.Groups[multiraft.GroupID]
	trace   []string
	tracing bool
	// retired sums the Stats of crashed hosts.
	retired multiraft.Stats
	// faults, if set, lose, duplicate and misroute batches.
	faults *faults
	// drop, if set, loses the batches it returns true for.
	drop func(multiraft.Batch) bool
	// leases makes advance check the lease invariant every millisecond
	// (violations are check's).
	leases bool
}

// faults are the network faults of a cluster's batches, each a
// probability per batch: lost, delivered twice (each copy with its own
// delay), or delivered to a host it is not addressed to (which must
// ignore it); slow is the probability of a long delay (up to 100ms) that
// reorders a batch past several heartbeats. rng draws them.
type faults struct {
	loss, dup, misroute, slow float64
	rng                       *rand.Rand
}

type groupDef struct {
	id     multiraft.GroupID
	voters []election.ID
	leader election.ID
}

type clusterOpts struct {
	hosts, groups, replicas int
	seed                    uint64
	boot                    bool // bootstrap leaders, balanced
	config                  func(*multiraft.Config)
}

func newCluster(t testing.TB, o clusterOpts) *cluster {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	if o.replicas == 0 {
		o.replicas = o.hosts
	}
	cfg := multiraft.DefaultConfig()
	cfg.Election.ElectionTimeout = 150 * time.Millisecond
	cfg.Election.HeartbeatInterval = 15 * time.Millisecond
	cfg.Election.ElectionJitter = repeated.Proportional(1)
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.Logger = hclog.NewNullLogger() // CheckQuorum's warnings are expected here
	cfg.HibernateAfter = 300 * time.Millisecond
	if o.config != nil {
		o.config(&cfg)
	}
	c := &cluster{t: t, v: v, net: multiraft.NewMemNetwork(v.Wheel, time.Millisecond), cfg: cfg,
		hosts: map[election.ID]*multiraft.Host{}, st: map[gnode]*election.MemoryStorage{},
		rng: rand.New(rand.NewPCG(o.seed, 7)), check: electiontest.NewGroups(func(multiraft.GroupID) int { return o.replicas })}
	for i := 1; i <= o.hosts; i++ {
		c.ids = append(c.ids, election.ID(i))
	}
	for g := 0; g < o.groups; g++ {
		d := groupDef{id: multiraft.GroupID(g + 1)}
		for r := 0; r < o.replicas; r++ {
			d.voters = append(d.voters, c.ids[(g+r)%o.hosts])
		}
		slices.Sort(d.voters)
		if o.boot {
			d.leader = c.ids[g%o.hosts]
			c.check.Group(d.id).SetLeader(1, d.leader)
		}
		c.groups = append(c.groups, d)
	}
	for _, id := range c.ids {
		c.start(id)
	}
	return c
}

// start creates host id (again, after a crash) on its storages and adds
// its groups.
func (c *cluster) start(id election.ID) {
	cfg := c.cfg
	cfg.ID = id
	cfg.Rand = rand.New(rand.NewPCG(c.rng.Uint64(), uint64(id)))
	cfg.Observer = func(g multiraft.GroupID, e election.Event) {
		c.check.Observe(g, e)
		if c.tracing {
			c.traceEvent(g, e)
		}
	}
	h, err := multiraft.NewHost(cfg, c.v.Wheel, c.transport())
	require.NoError(c.t, err)
	c.hosts[id] = h
	c.net.Attach(h)
	for _, d := range c.groups {
		if !slices.Contains(d.voters, id) {
			continue
		}
		k := gnode{d.id, id}
		if c.st[k] == nil {
			c.st[k] = election.NewMemoryStorage()
		}
		require.NoError(c.t, h.AddGroup(multiraft.GroupConfig{ID: d.id, Voters: d.voters, Storage: c.st[k], Leader: d.leader}))
	}
}

func (c *cluster) crash(id election.ID) {
	s := c.hosts[id].Stats()
	c.retired.Hibernations += s.Hibernations
	c.retired.Wakes += s.Wakes
	c.retired.LivenessWakes += s.LivenessWakes
	c.hosts[id].Stop()
	c.net.Detach(id)
	delete(c.hosts, id)
	// What the host had not written is lost, and was never seen.
	for _, d := range c.groups {
		if st := c.st[gnode{d.id, id}]; st != nil {
			hs, _ := st.Load()
			c.check.Group(d.id).Crashed(id, hs)
		}
	}
}

func (c *cluster) traceEvent(g multiraft.GroupID, e election.Event) {
	var s string
	switch {
	case e.Type == election.EventLeaderElected:
		s = "elected"
	case e.Type == election.EventElectionStart && e.PreVote:
		s = "pre-votes (" + e.Reason + ")"
	case e.Type == election.EventElectionStart:
		s = "campaigns (" + e.Reason + ")"
	case e.Type == election.EventStepDown:
		s = "steps down (" + e.Reason + ")"
	case e.Type == election.EventRoleChange && e.Reason == election.ReasonResume:
		s = "wakes as " + e.Role.String()
		if e.Role == election.Follower {
			s += fmt.Sprintf(" (leader %d)", e.Leader)
		}
	default:
		return
	}
	c.trace = append(c.trace, fmt.Sprintf("%10s g%d n%d t%d %s\n", e.At.Round(time.Microsecond), g, e.Node, e.Term, s))
}

// leaders returns, per group, the awake replica leading with the highest
// term, or the hibernating one that believes it leads.
func (c *cluster) leaderOf(g multiraft.GroupID) (election.ID, uint64) {
	var l election.ID
	var term uint64
	for _, id := range c.ids {
		h := c.hosts[id]
		if h == nil {
			continue
		}
		st, err := h.Status(g)
		if err != nil {
			continue
		}
		if st.Status.Role == election.Leader && st.Status.Term >= term {
			l, term = id, st.Status.Term
		}
	}
	return l, term
}

// totals sums the Stats of every host that ever ran.
func (c *cluster) totals() multiraft.Stats {
	s := c.retired
	for _, h := range c.hosts {
		hs := h.Stats()
		s.Hibernations += hs.Hibernations
		s.Wakes += hs.Wakes
		s.LivenessWakes += hs.LivenessWakes
	}
	return s
}

type testWheel = wheel.Virtual

func newTestWheel(t testing.TB) *testWheel {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	return v
}

// checkLeases checks the lease invariant over every group at the current
// time (electiontest.Groups.Leases): no replica holds a lease
// (Host.Status's Lease) in term t while another leads a term above t, or
// was elected in one. A hibernating leader counts as the leader of its
// term; it holds no lease.
func (c *cluster) checkLeases() {
	views := make([]electiontest.LeaseView, 0, 5)
	for _, d := range c.groups {
		views = views[:0]
		for _, id := range d.voters {
			h := c.hosts[id]
			if h == nil {
				continue
			}
			st, err := h.Status(d.id)
			if err != nil {
				continue
			}
			views = append(views, electiontest.LeaseView{ID: id, Term: st.Status.Term,
				Leader: st.Status.Role == election.Leader, Lease: st.Lease})
		}
		c.check.Leases(d.id, views)
	}
}

// transport returns a host's Transport: the MemNetwork, through the
// cluster's faults if it has any.
func (c *cluster) transport() multiraft.Transport {
	base := c.net.Transport()
	return multiraft.TransportFunc(func(b multiraft.Batch) {
		if c.drop != nil && c.drop(b) {
			return
		}
		f := c.faults
		if f == nil {
			base.Send(b)
			return
		}
		switch r := f.rng.Float64(); {
		case r < f.loss:
			return
		case r < f.loss+f.misroute:
			to := c.ids[f.rng.IntN(len(c.ids))]
			_, _ = c.v.AfterFunc(time.Duration(1+f.rng.IntN(4))*time.Millisecond, func() {
				if h := c.hosts[to]; h != nil {
					h.Step(b) // addressed to b.To: ignored unless to is b.To
				}
			})
			return
		case r < f.loss+f.misroute+f.dup:
			base.Send(b)
		}
		if f.rng.Float64() < f.slow {
			_, _ = c.v.AfterFunc(time.Duration(f.rng.IntN(100))*time.Millisecond, func() { base.Send(b) })
			return
		}
		base.Send(b)
	})
}

// advance moves virtual time on by d, checking the lease invariant every
// millisecond if c.leases is set.
func (c *cluster) advance(d time.Duration) {
	if !c.leases {
		c.v.AdvanceBy(d)
		return
	}
	for d > 0 {
		step := min(d, time.Millisecond)
		c.v.AdvanceBy(step)
		d -= step
		c.checkLeases()
	}
}
