package election_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestLagging: while Config.Lagging reports the host behind, followers
// whose leader fell silent start no election and a leader cut off from
// its quorum does not step down (CheckQuorum) nor keep its lease; once
// the host has caught up, the followers elect a new leader and the old
// one steps down.
func TestLagging(t *testing.T) {
	c := newDormantCluster(t)
	lagging := false
	for id := election.ID(1); id <= 3; id++ {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, []election.ID{1, 2, 3}
		cfg.ElectionTimeout = 150 * time.Millisecond
		cfg.Rand = c.rng
		cfg.Observer = c.check.Observe
		cfg.Lagging = func(election.Silence) bool { return lagging }
		n, err := election.NewNode(cfg, c.v.Wheel, c.net, c.st[id], election.StaticLog{})
		require.NoError(t, err)
		c.nodes[id] = n
		c.net.Attach(n)
		require.NoError(t, n.Start())
	}
	c.v.AdvanceBy(time.Second)
	l := c.leader()
	require.NotEqual(t, election.None, l)
	term := c.nodes[l].Status().Term

	lagging = true
	c.net.Isolate(l, 1, 2, 3)
	c.v.AdvanceBy(2 * time.Second)
	for id, n := range c.nodes {
		st := n.Status()
		require.Equal(t, term, st.Term, "node %d: no election while lagging", id)
		require.NotZero(t, n.Stats().LaggingSkips, "node %d", id)
	}
	require.Equal(t, election.Leader, c.nodes[l].Status().Role, "no CheckQuorum step-down while lagging")
	require.False(t, c.nodes[l].QuorumContact(), "no lease without answers")

	lagging = false
	c.v.AdvanceBy(time.Second) // the isolated leader's check finds no quorum
	require.NotEqual(t, election.Leader, c.nodes[l].Status().Role, "the old leader stepped down")
	nl := c.leader()
	require.NotEqual(t, election.None, nl)
	require.Greater(t, c.nodes[nl].Status().Term, term)
	require.NoError(t, c.check.Err())
}
