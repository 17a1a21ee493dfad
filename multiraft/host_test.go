package multiraft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBusyFollowerRefusesToHibernate: a follower touched within
// HibernateAfter refuses the idle leader's Hibernate, which wakes the
// leader again; once the activity stops, the group sleeps.
func TestBusyFollowerRefusesToHibernate(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 5})
	for range 20 {
		require.NoError(t, c.hosts[3].Touch(1))
		c.v.AdvanceBy(100 * time.Millisecond)
		st, err := c.hosts[3].Status(1)
		require.NoError(t, err)
		require.False(t, st.Hibernating, "a busy replica stays awake")
	}
	require.NotZero(t, c.hosts[1].Stats().HibernateRefused, "the idle leader tried and was refused")
	c.v.AdvanceBy(2 * time.Second)
	for _, id := range c.ids {
		st, err := c.hosts[id].Status(1)
		require.NoError(t, err)
		require.True(t, st.Hibernating, "n%d", id)
		require.EqualValues(t, 1, st.Status.Term, "no election")
	}
	require.NoError(t, c.check.Err())
}
