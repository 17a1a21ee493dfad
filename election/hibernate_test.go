package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/wheel"
)

// dormantCluster is three nodes on a MemNetwork whose nodes can be
// hibernated and resumed on their storages.
type dormantCluster struct {
	v     *wheel.Virtual
	net   *election.MemNetwork
	st    map[election.ID]*election.MemoryStorage
	nodes map[election.ID]*election.Node
	rng   *rand.Rand
	check *electiontest.Checker
}

func newDormantCluster(t *testing.T) *dormantCluster {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	c := &dormantCluster{v: v, net: election.NewMemNetwork(v.Wheel, time.Millisecond),
		st: map[election.ID]*election.MemoryStorage{}, nodes: map[election.ID]*election.Node{},
		rng: rand.New(rand.NewPCG(1, 2)), check: electiontest.NewChecker(3)}
	for id := election.ID(1); id <= 3; id++ {
		c.st[id] = election.NewMemoryStorage()
	}
	return c
}

func (c *dormantCluster) node(t *testing.T, id election.ID) *election.Node {
	cfg := election.DefaultConfig()
	cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
	cfg.ID, cfg.Voters = id, []election.ID{1, 2, 3}
	cfg.ElectionTimeout = 150 * time.Millisecond
	cfg.Rand = c.rng
	cfg.Metrics = &metrics.BlackholeSink{}
	cfg.Observer = c.check.Observe
	n, err := election.NewNode(cfg, c.v.Wheel, c.net, c.st[id], election.StaticLog{})
	require.NoError(t, err)
	c.nodes[id] = n
	c.net.Attach(n)
	return n
}

func (c *dormantCluster) leader() election.ID {
	for id, n := range c.nodes {
		if st := n.Status(); st.Role == election.Leader && !st.Stopped {
			return id
		}
	}
	return election.None
}

// elect starts the three nodes and returns the leader they elect and its
// term.
func (c *dormantCluster) elect(t *testing.T) (election.ID, uint64) {
	for id := election.ID(1); id <= 3; id++ {
		require.NoError(t, c.node(t, id).Start())
	}
	c.v.AdvanceBy(time.Second)
	l := c.leader()
	require.NotEqual(t, election.None, l)
	return l, c.nodes[l].Status().Term
}

func TestHibernateResume(t *testing.T) {
	c := newDormantCluster(t)
	l, term := c.elect(t)
	require.True(t, c.nodes[l].QuorumContact())

	// Everyone hibernates: no timer of theirs stays on the wheel.
	dormant := map[election.ID]election.Dormant{}
	for id, n := range c.nodes {
		d, err := n.Hibernate()
		require.NoError(t, err)
		require.Equal(t, term, d.Term)
		require.Equal(t, l, d.Leader)
		if id == l {
			require.Zero(t, d.Contact, "a leader has no contact to keep")
		} else {
			require.Equal(t, n.Status().LastContact, d.Contact, "a follower keeps its last contact")
			require.NotZero(t, d.Contact)
		}
		dormant[id] = d
		_, err = n.Hibernate()
		require.ErrorIs(t, err, election.ErrStopped)
	}
	c.v.AdvanceBy(10 * time.Millisecond) // in-flight heartbeats
	require.Zero(t, c.v.Stats().Pending, "hibernated nodes hold no timers")
	c.v.AdvanceBy(10 * time.Second)

	// The leader resumes as leader without a lease; its heartbeats make
	// the resumed followers answer, and the lease comes back.
	ln := c.node(t, l)
	require.NoError(t, ln.Resume(dormant[l]))
	st := ln.Status()
	require.Equal(t, election.Leader, st.Role)
	require.Equal(t, term, st.Term)
	require.False(t, ln.QuorumContact(), "no lease before a quorum answered")
	for id := range c.nodes {
		if id != l {
			require.NoError(t, c.node(t, id).Resume(dormant[id]))
			require.Equal(t, election.Status{ID: id, Role: election.Follower, Term: term, Vote: c.nodes[id].Status().Vote,
				Leader: l, LastContact: dormant[id].Contact, HasContact: true, Started: true}, c.nodes[id].Status())
		}
	}
	c.v.AdvanceBy(5 * time.Millisecond)
	require.True(t, ln.QuorumContact())
	c.v.AdvanceBy(5 * time.Second)
	for _, n := range c.nodes {
		require.Equal(t, term, n.Status().Term, "no election after resuming")
	}
	require.NoError(t, c.check.Err())
}

func TestResumeWithoutLeaderElects(t *testing.T) {
	c := newDormantCluster(t)
	l, term := c.elect(t)
	var dormant []election.Dormant
	for id := election.ID(1); id <= 3; id++ {
		d, err := c.nodes[id].Hibernate()
		require.NoError(t, err)
		dormant = append(dormant, d)
	}
	// The leader's node is gone; the others forget it (as node liveness
	// does) and elect a new leader within their timeouts.
	start := c.v.Now()
	for id := election.ID(1); id <= 3; id++ {
		if id != l {
			require.NoError(t, c.node(t, id).Resume(election.Dormant{Term: dormant[id-1].Term}))
			require.Equal(t, election.None, c.nodes[id].Status().Leader)
		}
	}
	c.net.Detach(l)
	delete(c.nodes, l)
	c.v.AdvanceBy(time.Second)
	nl := c.leader()
	require.NotEqual(t, election.None, nl)
	require.Greater(t, c.nodes[nl].Status().Term, term)
	require.Less(t, c.v.Now()-start, 2*time.Second)
	require.NoError(t, c.check.Err())
}

func TestHibernateRefusals(t *testing.T) {
	c := newDormantCluster(t)
	n := c.node(t, 1)
	_, err := n.Hibernate()
	require.ErrorIs(t, err, election.ErrNotStarted)
	require.NoError(t, n.Start())
	_, err = n.Hibernate()
	require.ErrorIs(t, err, election.ErrCannotHibernate, "a follower without a leader")
	require.False(t, n.QuorumContact())

	// A Dormant of another term, or a leader claim without the vote, is
	// a plain start.
	require.NoError(t, c.st[2].Save(election.HardState{Term: 4, Vote: 3}))
	n2 := c.node(t, 2)
	require.NoError(t, n2.Resume(election.Dormant{Term: 3, Leader: 3}))
	require.Equal(t, election.Status{ID: 2, Role: election.Follower, Term: 4, Vote: 3, Started: true}, n2.Status())
	n3 := c.node(t, 3)
	require.NoError(t, c.st[3].Save(election.HardState{Term: 4, Vote: 2}))
	require.NoError(t, n3.Resume(election.Dormant{Term: 4, Leader: 3}))
	require.Equal(t, election.Follower, n3.Status().Role)
	require.Equal(t, election.None, n3.Status().Leader)
	require.ErrorIs(t, n3.Resume(election.Dormant{}), election.ErrAlreadyStarted)
}

// TestLeadingMirrorsRole checks the lock-free Leading against Status
// through an election, a hibernation and resume, a step-down and a stop.
func TestLeadingMirrorsRole(t *testing.T) {
	c := newDormantCluster(t)
	agree := func(when string) {
		t.Helper()
		for id, n := range c.nodes {
			st := n.Status()
			require.Equal(t, st.Role == election.Leader && !st.Stopped, n.Leading(), "%s: node %d", when, id)
		}
	}
	l, _ := c.elect(t)
	agree("elected")
	require.True(t, c.nodes[l].Leading())

	d, err := c.nodes[l].Hibernate()
	require.NoError(t, err)
	require.False(t, c.nodes[l].Leading(), "hibernated")
	old := c.nodes[l]
	require.NoError(t, c.node(t, l).Resume(d))
	agree("resumed")
	require.True(t, c.nodes[l].Leading())
	require.False(t, old.Leading())

	// Cut off, the leader steps down at its CheckQuorum check; the
	// others elect another.
	c.net.Detach(l)
	c.v.AdvanceBy(2 * time.Second)
	agree("cut off")
	require.False(t, c.nodes[l].Leading())

	nl := c.leader()
	require.NotEqual(t, election.None, nl)
	c.nodes[nl].Stop()
	require.False(t, c.nodes[nl].Leading(), "stopped")
	agree("stopped")
}

// TestResumeKeepsContact checks that a follower resumed from a Dormant
// with Contact counts its loyalty from that contact, not from the resume:
// with LeaderStickiness it refuses a higher term's vote until an election
// timeout after the contact, then grants it.
func TestResumeKeepsContact(t *testing.T) {
	const et = 150 * time.Millisecond
	for _, tc := range []struct {
		name    string
		ago     time.Duration // Contact before the resume; -1: no Contact
		refused time.Duration // how long after the resume votes are refused
	}{
		{"recent", 100 * time.Millisecond, 50 * time.Millisecond},
		{"old", 200 * time.Millisecond, 0},
		{"unknown", -1, et},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := wheel.NewVirtual(wheel.DefaultConfig())
			require.NoError(t, err)
			t.Cleanup(func() { v.Stop() })
			v.AdvanceBy(time.Second)
			st := election.NewMemoryStorage()
			require.NoError(t, st.Save(election.HardState{Term: 1, Vote: 2}))
			cfg := election.DefaultConfig()
			cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
			cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
			cfg.ElectionTimeout = et
			cfg.PreVote, cfg.LeaderStickiness = false, true
			cfg.Rand = rand.New(rand.NewPCG(1, 2))
			cfg.Metrics = &metrics.BlackholeSink{}
			var answers []election.Message
			n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) { answers = append(answers, m) }),
				st, election.StaticLog{})
			require.NoError(t, err)
			d := election.Dormant{Term: 1, Leader: 2}
			if tc.ago >= 0 {
				d.Contact = v.Now() - tc.ago
			}
			require.NoError(t, n.Resume(d))
			vote := func() bool {
				answers = nil
				n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2})
				require.Len(t, answers, 1)
				return answers[0].Granted
			}
			if tc.refused > 0 {
				require.False(t, vote(), "refused within the loyalty")
				v.AdvanceBy(tc.refused - time.Millisecond)
				require.False(t, vote(), "refused just before the loyalty ends")
				v.AdvanceBy(2 * time.Millisecond)
			}
			require.True(t, vote(), "granted once the loyalty ended")
		})
	}
}
