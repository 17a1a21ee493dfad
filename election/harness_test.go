package election_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// mutableLog is a LogView the tests can change while the node runs.
type mutableLog struct{ index, term uint64 }

func (l *mutableLog) Last() (uint64, uint64) { return l.index, l.term }

// checker verifies Raft's election safety properties from the events of
// every node, across restarts:
//   - at most one leader per term;
//   - a node grants at most one vote per term;
//   - a node's term never decreases;
//   - a leader was elected with votes from a majority of the voters;
//   - no term exceeds election.MaxTerm;
//
// and, unless forgedLeaders is set (messages forged in the name of other
// nodes are injected), that a follower follows the leader of its term.
type checker struct {
	quorum     int
	leaders    map[uint64]election.ID
	voteOf     map[voteKey]election.ID
	grants     map[uint64]map[election.ID]map[election.ID]bool // term -> candidate -> voters
	term       map[election.ID]uint64
	violations []string
	elected    int
	// forgedLeaders turns off the follower check: an injected heartbeat
	// can make a follower believe any voter leads.
	forgedLeaders bool
}

type voteKey struct {
	node election.ID
	term uint64
}

func newChecker(voters int) *checker {
	return &checker{
		quorum:  voters/2 + 1,
		leaders: make(map[uint64]election.ID),
		voteOf:  make(map[voteKey]election.ID),
		grants:  make(map[uint64]map[election.ID]map[election.ID]bool),
		term:    make(map[election.ID]uint64),
	}
}

func (c *checker) fail(e election.Event, format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf("%v: %s", e, fmt.Sprintf(format, args...)))
}

func (c *checker) observe(e election.Event) {
	// Vote events carry the request's term and pre-vote events a future
	// term; all others carry the node's current term.
	if e.Type != election.EventVoteGranted && e.Type != election.EventVoteDenied && !e.PreVote &&
		e.Type != election.EventIgnored {
		if e.Term < c.term[e.Node] {
			c.fail(e, "term went back from %d", c.term[e.Node])
		}
		c.term[e.Node] = e.Term
	}
	if e.Term > election.MaxTerm {
		c.fail(e, "term above MaxTerm")
	}
	switch e.Type {
	case election.EventVoteGranted:
		if e.PreVote {
			return
		}
		k := voteKey{e.Node, e.Term}
		if prev, ok := c.voteOf[k]; ok && prev != e.Peer {
			c.fail(e, "second vote in term %d: first for %d, now for %d", e.Term, prev, e.Peer)
		}
		c.voteOf[k] = e.Peer
		if c.grants[e.Term] == nil {
			c.grants[e.Term] = make(map[election.ID]map[election.ID]bool)
		}
		if c.grants[e.Term][e.Peer] == nil {
			c.grants[e.Term][e.Peer] = make(map[election.ID]bool)
		}
		c.grants[e.Term][e.Peer][e.Node] = true
	case election.EventLeaderElected:
		c.elected++
		if l, ok := c.leaders[e.Term]; ok && l != e.Node {
			c.fail(e, "two leaders in term %d: %d and %d", e.Term, l, e.Node)
		}
		c.leaders[e.Term] = e.Node
		if got := len(c.grants[e.Term][e.Node]); got < c.quorum {
			c.fail(e, "leader with %d votes, quorum is %d", got, c.quorum)
		}
	case election.EventLeaderKnown:
		if l, ok := c.leaders[e.Term]; ok && l != e.Leader && !c.forgedLeaders {
			c.fail(e, "follows %d but %d leads term %d", e.Leader, l, e.Term)
		}
	}
}

func (c *checker) err() error {
	if len(c.violations) == 0 {
		return nil
	}
	return fmt.Errorf("%d safety violations:\n%s", len(c.violations), strings.Join(c.violations, "\n"))
}

// cluster is a group of nodes on one virtual wheel and a MemNetwork.
type cluster struct {
	v       *wheel.Virtual
	net     *election.MemNetwork
	ids     []election.ID
	cfgs    map[election.ID]election.Config
	nodes   map[election.ID]*election.Node
	stores  map[election.ID]*election.MemoryStorage
	logs    map[election.ID]*mutableLog
	check   *checker
	trace   []election.Event
	tracing bool
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
		check:  newChecker(o.n),
	}
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x5eed))
	for i := 1; i <= o.n; i++ {
		c.ids = append(c.ids, election.ID(i))
	}
	for _, id := range c.ids {
		cfg := election.DefaultConfig()
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
	c.check.observe(e)
	if c.tracing {
		c.trace = append(c.trace, e)
	}
}

// start creates (or re-creates after a crash) and starts node id.
func (c *cluster) start(tb testing.TB, id election.ID) {
	tb.Helper()
	n, err := election.NewNode(c.cfgs[id], c.v.Wheel, c.net, c.stores[id], c.logs[id])
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

// runUntil advances virtual time until cond holds or limit passes; it
// reports whether cond held.
func (c *cluster) runUntil(limit time.Duration, cond func() bool) bool {
	for !cond() {
		next, ok := c.v.NextDeadline()
		if !ok || next > limit {
			c.v.AdvanceTo(max(limit, c.v.Now()))
			return cond()
		}
		c.v.AdvanceToNext()
	}
	return true
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
