package multiraft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// TestStickinessAsleep: a follower that answers its leader's heartbeats
// while hibernating keeps LeaderStickiness's promise. The leader wakes
// and gains its lease from answers made asleep; another replica then
// campaigns in a higher term. The vote request wakes the sleeping
// follower, which must refuse it inside the lease it renewed, as an awake
// follower would: no node may lead term 2 while the leader holds its
// lease in term 1.
func TestStickinessAsleep(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 1,
		config: func(cfg *multiraft.Config) {
			cfg.Election.PreVote = false
			cfg.Election.CheckQuorum = true
			cfg.Election.LeaderStickiness = true
		}})
	const g = multiraft.GroupID(1)
	require.NoError(t, c.hosts[1].Touch(g)) // the leader wakes; the followers sleep on
	c.v.AdvanceBy(20 * time.Millisecond)
	st, err := c.hosts[1].Status(g)
	require.NoError(t, err)
	require.True(t, st.Lease, "the leader's lease from answers made asleep")
	st2, err := c.hosts[2].Status(g)
	require.NoError(t, err)
	require.True(t, st2.Hibernating, "follower 2 answered asleep")
	require.NotZero(t, c.hosts[2].Stats().AnsweredAsleep)

	require.NoError(t, c.hosts[3].Campaign(g))
	for range 50 {
		c.v.AdvanceBy(time.Millisecond)
		require.NoError(t, c.leaseErr())
	}
	st2, err = c.hosts[2].Status(g)
	require.NoError(t, err)
	require.Equal(t, election.ID(1), st2.Status.Leader, "follower 2 stays loyal to the leader")
	require.NoError(t, c.check.Err())
}
