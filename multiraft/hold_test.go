package multiraft_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// ledBy returns the groups whose replica on host id leads.
func (c *cluster) ledBy(id election.ID) []multiraft.GroupID {
	var gs []multiraft.GroupID
	for _, d := range c.groups {
		if st, err := c.hosts[id].Status(d.id); err == nil && st.Status.Role == election.Leader {
			gs = append(gs, d.id)
		}
	}
	return gs
}

// movedFrom reports whether every group of gs has a leader other than
// old, as host id sees it.
func (c *cluster) movedFrom(gs []multiraft.GroupID, id, old election.ID) bool {
	for _, g := range gs {
		st, err := c.hosts[id].Status(g)
		if err != nil || st.Status.Leader == election.None || st.Status.Leader == old {
			return false
		}
	}
	return true
}

// within advances c in steps of 10ms until done reports true, and
// returns the time then; or, if until comes first, a time before now.
func (c *cluster) within(until time.Duration, done func() bool) time.Duration {
	for c.v.Now() < until {
		c.advance(10 * time.Millisecond)
		if done() {
			return c.v.Now()
		}
	}
	return -1
}

// TestHoldEndsWhenLeaderHostStopsTicking: every hold is bounded. Host 1
// stays alive (its answers, liveness messages and votes arrive) but its
// tick batches are lost, as if its heartbeat tick had died: the
// followers of its groups see its host alive and no tick since their
// last heartbeat, which is what a backlog looks like, and hold their
// leader's silence (overload.go); and they must stop holding once the
// last tick they stepped is holdLimit (10 election timeouts) old. The
// groups host 1 led have new leaders within holdLimit plus three
// election timeouts of the first lost tick, and not before the hold's
// bound minus an election timeout.
func TestHoldEndsWhenLeaderHostStopsTicking(t *testing.T) {
	const et = 150 * time.Millisecond
	c := newCluster(t, clusterOpts{hosts: 3, groups: 30, boot: true, seed: 1, config: func(cfg *multiraft.Config) {
		cfg.HibernateAfter = 0
	}})
	c.advance(time.Second)
	led := c.ledBy(1)
	require.NotEmpty(t, led)
	from := c.v.Now()
	c.drop = func(b multiraft.Batch) bool { return b.From == 1 && b.Tick }
	c.advance(9 * et)
	require.False(t, c.movedFrom(led, 2, 1), "the followers hold while host 1's last tick is recent")
	moved := c.within(from+13*et, func() bool { return c.movedFrom(led, 2, 1) && c.movedFrom(led, 3, 1) }) - from
	require.Positive(t, moved, "host 1's groups elected new leaders within holdLimit + 3 ETs")
	t.Logf("host 1's %d groups moved %v (%.1f ETs) after its ticks stopped", len(led), moved, float64(moved)/float64(et))
	require.NoError(t, c.check.Err())
}

// TestHoldEndsWhenPeerStopsAnswering: a leader whose followers' hosts
// stay alive but never answer its heartbeats (their coalesced answers are
// lost) holds their silence in CheckQuorum while their last answer is
// recent, and steps down once it is holdLimit old.
func TestHoldEndsWhenPeerStopsAnswering(t *testing.T) {
	const et = 150 * time.Millisecond
	c := newCluster(t, clusterOpts{hosts: 3, groups: 30, boot: true, seed: 1, config: func(cfg *multiraft.Config) {
		cfg.HibernateAfter = 0
		cfg.Election.CheckQuorum = true
	}})
	c.advance(time.Second)
	led := c.ledBy(1)
	require.NotEmpty(t, led)
	from := c.v.Now()
	c.drop = func(b multiraft.Batch) bool { return b.To == 1 && len(b.Responses) > 0 }
	c.advance(9 * et)
	require.Len(t, c.ledBy(1), len(led), "host 1 holds its followers' silence while their last answer is recent")
	down := c.within(from+13*et, func() bool { return len(c.ledBy(1)) == 0 }) - from
	require.Positive(t, down, "host 1's leaders stepped down within holdLimit + 3 ETs")
	t.Logf("host 1's %d leaders stepped down %v (%.1f ETs) after the answers stopped", len(led), down, float64(down)/float64(et))
	require.NoError(t, c.check.Err())
}

// TestWokenFollowerWaitsForItsWake: a follower woken from hibernation
// whose leader sleeps on until it processes the follower's Wake holds
// while the leader's host has not answered anything sent after the wake,
// even though that host's tick batches (for its other groups) arrive
// without the group. Host 1's inbound batches wait 400ms (its backlog);
// its ticks leave on time. Without the hold the woken follower campaigned
// one election timeout after it woke.
func TestWokenFollowerWaitsForItsWake(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 30, boot: true, seed: 1})
	var busy []multiraft.GroupID // groups host 1 leads, kept awake
	var sleeper multiraft.GroupID
	for _, d := range c.groups {
		switch {
		case d.leader != 1:
		case sleeper == 0:
			sleeper = d.id
		default:
			busy = append(busy, d.id)
		}
	}
	touch := func(d time.Duration) {
		for end := c.v.Now() + d; c.v.Now() < end; {
			for _, g := range busy {
				for _, id := range c.ids {
					require.NoError(t, c.hosts[id].Touch(g))
				}
			}
			c.advance(10 * time.Millisecond)
		}
	}
	touch(time.Second)
	st, err := c.hosts[2].Status(sleeper)
	require.NoError(t, err)
	require.True(t, st.Hibernating, "the sleeper sleeps")
	c.net.SetDelay(func(b multiraft.Batch) time.Duration {
		if b.To == 1 {
			return 400 * time.Millisecond
		}
		return time.Millisecond
	})
	c.tracing = true
	require.NoError(t, c.hosts[2].Touch(sleeper))
	touch(1500 * time.Millisecond)
	for _, line := range c.trace {
		require.NotRegexp(t, fmt.Sprintf(` g%d n\d+ t\d+ (pre-votes|campaigns)`, sleeper), line, "no election in the woken group")
	}
	st, err = c.hosts[2].Status(sleeper)
	require.NoError(t, err)
	require.Equal(t, election.ID(1), st.Status.Leader)
	require.NoError(t, c.check.Err())
}
