package multiraft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestBusyFollowerRefusesToHibernate: a follower touched within
// HibernateAfter refuses the idle leader's Hibernate, which wakes the
// leader again; once the activity stops, the group sleeps.
func TestBusyFollowerRefusesToHibernate(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 5})
	touchAwake(t, c, 3, election.Follower)
	require.NotZero(t, c.hosts[1].Stats().HibernateRefused, "the idle leader tried and was refused")
	requireAsleepInTerm1(t, c)
}

// TestBusyLeaderStaysAwake: a leader touched within HibernateAfter does
// not hibernate (its sweep reads the touches), though its followers see
// no activity of their own; once the activity stops, the group sleeps.
func TestBusyLeaderStaysAwake(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 5})
	require.NoError(t, c.hosts[1].Touch(1)) // wakes the group
	c.v.AdvanceBy(100 * time.Millisecond)
	hibernations := c.hosts[1].Stats().Hibernations
	touchAwake(t, c, 1, election.Leader)
	require.Equal(t, hibernations, c.hosts[1].Stats().Hibernations, "no hibernation while touched")
	requireAsleepInTerm1(t, c)
}

// touchAwake touches group 1 on host id every 100ms for 2s, and checks
// that the replica stays awake in role.
func touchAwake(t *testing.T, c *cluster, id election.ID, role election.Role) {
	t.Helper()
	for range 20 {
		require.NoError(t, c.hosts[id].Touch(1))
		c.v.AdvanceBy(100 * time.Millisecond)
		st, err := c.hosts[id].Status(1)
		require.NoError(t, err)
		require.False(t, st.Hibernating, "a busy replica stays awake")
		require.Equal(t, role, st.Status.Role)
	}
}

// requireAsleepInTerm1 checks that group 1 sleeps on every host 2s on,
// in term 1, and that the cluster kept election safety.
func requireAsleepInTerm1(t *testing.T, c *cluster) {
	t.Helper()
	c.v.AdvanceBy(2 * time.Second)
	for _, id := range c.ids {
		st, err := c.hosts[id].Status(1)
		require.NoError(t, err)
		require.True(t, st.Hibernating, "n%d", id)
		require.EqualValues(t, 1, st.Status.Term, "no election")
	}
	require.NoError(t, c.check.Err())
}
