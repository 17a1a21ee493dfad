package multiraft_test

import (
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
	moved := time.Duration(-1)
	for c.v.Now() < from+13*et {
		c.advance(10 * time.Millisecond)
		if c.movedFrom(led, 2, 1) && c.movedFrom(led, 3, 1) {
			moved = c.v.Now() - from
			break
		}
	}
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
	var down time.Duration
	for c.v.Now() < from+13*et {
		c.advance(10 * time.Millisecond)
		if len(c.ledBy(1)) == 0 {
			down = c.v.Now() - from
			break
		}
	}
	require.Positive(t, down, "host 1's leaders stepped down within holdLimit + 3 ETs")
	t.Logf("host 1's %d leaders stepped down %v (%.1f ETs) after the answers stopped", len(led), down, float64(down)/float64(et))
	require.NoError(t, c.check.Err())
}
