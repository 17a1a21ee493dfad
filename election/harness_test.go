package election_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/wheel"
)

// mutableLog is a LogView the tests can change while the node runs.
type mutableLog struct{ index, term uint64 }

func (l *mutableLog) Last() (uint64, uint64) { return l.index, l.term }

// cluster is a group of nodes on one virtual wheel and a MemNetwork.
type cluster struct {
	v       *wheel.Virtual
	net     *election.MemNetwork
	ids     []election.ID
	cfgs    map[election.ID]election.Config
	nodes   map[election.ID]*election.Node
	stores  map[election.ID]*election.MemoryStorage
	logs    map[election.ID]*mutableLog
	check   *electiontest.Checker
	trace   []election.Event
	tracing bool
	// leases makes runUntil check the lease invariant after every
	// advance; a test turns it off once it forged what the lease cannot
	// survive (see noteForgery).
	leases bool
	// forgedTransfer records that a forged transfer was injected.
	forgedTransfer bool
	// misroute, if set, decides for each sent message whether a copy goes
	// to another node than its To (which must ignore it), and after which
	// delay.
	misroute func(m election.Message) (to election.ID, after time.Duration, ok bool)
	// deferred, if set, runs every node with NewDeferredNode on a
	// lagStorage; c.send then checks that nothing leaves before the state
	// it depends on is durable (violations are check's).
	deferred map[election.ID]*lagStorage
	// durableErr is the first violation checkDurable found.
	durableErr error
}

type clusterOpts struct {
	n      int
	delay  time.Duration
	seed   uint64
	config func(c *election.Config) // applied to every node's config
}

func newCluster(tb testing.TB, o clusterOpts) *cluster {
	tb.Helper()
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(tb, err)
	c := &cluster{
		v:      v,
		net:    election.NewMemNetwork(v.Wheel, o.delay),
		cfgs:   make(map[election.ID]election.Config),
		nodes:  make(map[election.ID]*election.Node),
		stores: make(map[election.ID]*election.MemoryStorage),
		logs:   make(map[election.ID]*mutableLog),
		check:  electiontest.NewChecker(o.n),
	}
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x5eed))
	for i := 1; i <= o.n; i++ {
		c.ids = append(c.ids, election.ID(i))
	}
	for _, id := range c.ids {
		cfg := election.DefaultConfig()
		cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
		cfg.ID, cfg.Voters = id, c.ids
		cfg.PreVote, cfg.CheckQuorum = false, false
		cfg.Rand = rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
		if o.config != nil {
			o.config(&cfg)
		}
		cfg.Observer = c.observe
		c.cfgs[id] = cfg
		c.stores[id] = election.NewMemoryStorage()
		c.logs[id] = &mutableLog{}
	}
	return c
}

func (c *cluster) observe(e election.Event) {
	c.check.Observe(e)
	if c.tracing {
		c.trace = append(c.trace, e)
	}
}

// start creates (or re-creates after a crash) and starts node id.
func (c *cluster) start(tb testing.TB, id election.ID) {
	tb.Helper()
	var n *election.Node
	var err error
	if ls := c.deferred[id]; ls != nil {
		n, err = election.NewDeferredNode(c.cfgs[id], c.v.Wheel, election.TransportFunc(c.send), ls, c.logs[id])
		ls.node = n
	} else {
		n, err = election.NewNode(c.cfgs[id], c.v.Wheel, election.TransportFunc(c.send), c.stores[id], c.logs[id])
	}
	require.NoError(tb, err)
	c.nodes[id] = n
	c.net.Attach(n)
	require.NoError(tb, n.Start())
}

func (c *cluster) startAll(tb testing.TB) {
	for _, id := range c.ids {
		c.start(tb, id)
	}
}

// crash stops node id and disconnects it.
func (c *cluster) crash(id election.ID) {
	if n := c.nodes[id]; n != nil {
		n.Stop()
		if ls := c.deferred[id]; ls != nil {
			ls.crashed()
			hs, _ := c.stores[id].Load()
			c.check.Crashed(id, hs)
		}
		c.net.Detach(id)
		delete(c.nodes, id)
	}
}

// leaders returns the nodes that currently think they lead.
func (c *cluster) leaders() []election.ID {
	var out []election.ID
	for _, id := range c.ids {
		if n := c.nodes[id]; n != nil && n.Status().Role == election.Leader {
			out = append(out, id)
		}
	}
	return out
}

// send is the nodes' transport: the MemNetwork, plus a misrouted copy
// when c.misroute says so.
func (c *cluster) send(m election.Message) {
	if c.deferred != nil && c.durableErr == nil {
		c.durableErr = c.checkDurable(m)
	}
	c.net.Send(m)
	if c.misroute == nil {
		return
	}
	if to, after, ok := c.misroute(m); ok {
		_, err := c.v.Wheel.AfterFunc(max(after, 1), func() {
			if n := c.nodes[to]; n != nil {
				n.Step(m)
			}
		})
		if err != nil {
			panic(err) // a virtual wheel that is not stopped accepts timers
		}
	}
}

// runUntil advances virtual time until cond holds or limit passes; it
// reports whether cond held. With c.leases it checks the lease invariant
// after every advance.
func (c *cluster) runUntil(limit time.Duration, cond func() bool) bool {
	for !cond() {
		next, ok := c.v.NextDeadline()
		if !ok || next > limit {
			c.v.AdvanceTo(max(limit, c.v.Now()))
			c.maybeCheckLeases()
			return cond()
		}
		c.v.AdvanceToNext()
		c.maybeCheckLeases()
	}
	return true
}

func (c *cluster) maybeCheckLeases() {
	if c.leases {
		c.checkLeases()
	}
}

// stableLeader reports a leader all live nodes follow, in one term.
func (c *cluster) stableLeader() (election.ID, bool) {
	var leader election.ID
	var term uint64
	for _, id := range c.ids {
		n := c.nodes[id]
		if n == nil {
			continue
		}
		st := n.Status()
		if st.Leader == election.None || (leader != election.None && (st.Leader != leader || st.Term != term)) {
			return election.None, false
		}
		leader, term = st.Leader, st.Term
	}
	return leader, leader != election.None && slices.Contains(c.leaders(), leader)
}

// leaseViews returns the lease views of the live nodes, at this instant.
func (c *cluster) leaseViews() []electiontest.LeaseView {
	var views []electiontest.LeaseView
	for _, id := range c.ids {
		n := c.nodes[id]
		if n == nil {
			continue
		}
		st := n.Status()
		views = append(views, electiontest.LeaseView{ID: id, Term: st.Term, Leader: st.Role == election.Leader, Lease: n.QuorumContact()})
	}
	return views
}

// checkLeases checks the lease invariant on the live nodes now.
func (c *cluster) checkLeases() { c.check.Leases(c.leaseViews()) }
