package multiraft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestRestartDisturbsNoLiveLeader: a host that crashes and comes back
// before liveness notices starts its replicas as followers without a
// leader, and they pre-vote. A hibernating follower that such a pre-vote
// wakes, while liveness holds its leader's host alive, counts the wake as
// contact: its leader is silent because it sleeps, not because it failed,
// so it refuses the pre-vote and asks the leader to wake. Groups led by
// the other hosts keep their leader and term. (Before, the follower
// resumed with the contact of its last answered heartbeat, long past, and
// granted: the restarted replica won the pre-vote with it and deposed the
// live leader of all 20 of these groups; raftick-host's kill test saw
// storms of such elections after a restart.)
func TestRestartDisturbsNoLiveLeader(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 30, seed: 5, boot: true})
	c.advance(2 * time.Second)
	// Activity at each leader wakes the leader alone: its followers
	// answer its heartbeats asleep (Dormant.Contact), then all sleep again.
	for _, d := range c.groups {
		require.NoError(t, c.hosts[d.leader].Touch(d.id))
	}
	c.advance(2 * time.Second)
	require.EqualValues(t, 30, c.hosts[1].Stats().Hibernating, "every group sleeps before the restart")
	require.NotZero(t, c.hosts[1].Stats().AnsweredAsleep, "followers answered heartbeats asleep")
	type lt struct {
		leader election.ID
		term   uint64
	}
	before := map[int]lt{}
	for _, d := range c.groups {
		l, term := c.leaderOf(d.id)
		before[int(d.id)] = lt{l, term}
	}
	c.crash(3)
	c.start(3)
	c.advance(3 * time.Second)
	moved := 0
	for _, d := range c.groups {
		if d.leader == 3 {
			continue // its leader's replica lost its role in the crash
		}
		l, term := c.leaderOf(d.id)
		if (lt{l, term}) != before[int(d.id)] {
			moved++
			t.Logf("group %d: leader %d term %d, was %+v", d.id, l, term, before[int(d.id)])
		}
	}
	require.Zero(t, moved, "groups led by live hosts changed leader or term after host 3's restart")
	require.NoError(t, c.check.Err())
}
