package multiraft_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// failoverCluster is a cluster whose groups all sleep under bootstrapped,
// balanced leaders, with at most limit groups in flight per host.
func failoverCluster(t *testing.T, hosts, groups, replicas, limit int) *cluster {
	c := newCluster(t, clusterOpts{hosts: hosts, groups: groups, replicas: replicas, seed: 3, boot: true,
		config: func(cfg *multiraft.Config) { cfg.FailoverInFlight = limit }})
	c.tracing = true
	c.advance(500 * time.Millisecond)
	for _, h := range c.hosts {
		require.EqualValues(t, h.Stats().Groups, h.Stats().Hibernating)
	}
	c.flush()
	return c
}

// threeHosts is failoverCluster on three hosts, all voters of every
// group; it returns the groups host 1 leads and host 2, their first
// voter after host 1.
func threeHosts(t *testing.T, groups, limit int) (*cluster, []groupDef, *multiraft.Host) {
	c := failoverCluster(t, 3, groups, 3, limit)
	return c, c.bootLedBy(1), c.hosts[2]
}

// bootLedBy returns the groups bootstrapped with leader id.
func (c *cluster) bootLedBy(id election.ID) []groupDef {
	var out []groupDef
	for _, d := range c.groups {
		if d.leader == id {
			out = append(out, d)
		}
	}
	return out
}

// orphans counts the groups of gs that are awake on host h with no live
// leader known: neither leading nor following a leader other than dead.
func (c *cluster) orphans(h *multiraft.Host, gs []groupDef, dead election.ID) int {
	n := 0
	for _, d := range gs {
		st, err := h.Status(d.id)
		if err != nil || st.Hibernating || st.Status.Role == election.Leader {
			continue
		}
		if l := st.Status.Leader; l == election.None || l == dead {
			n++
		}
	}
	return n
}

// newLeaders reports whether every group of gs has a leader other than
// dead.
func (c *cluster) newLeaders(gs []groupDef, dead election.ID) bool {
	for _, d := range gs {
		if l, _ := c.leaderOf(d.id); l == election.None || l == dead {
			return false
		}
	}
	return true
}

// until advances c a millisecond at a time until done reports true.
func (c *cluster) until(done func() bool) {
	for !done() {
		c.advance(time.Millisecond)
	}
}

// elections returns, per host, the elections (pre-votes and campaigns)
// the trace saw start.
func (c *cluster) elections() map[election.ID]int {
	out := map[election.ID]int{}
	for _, line := range c.trace {
		var at string
		var g, n, term int
		if _, err := fmt.Sscanf(line, "%s g%d n%d t%d", &at, &g, &n, &term); err == nil && strings.Contains(line, "pre-votes") {
			out[election.ID(n)]++
		}
	}
	return out
}

// A verdict over many hibernating groups wakes at most FailoverInFlight
// of them at a time on the host that campaigns for them, and every one
// ends with a leader.
func TestFailoverBoundedFlight(t *testing.T) {
	const limit = 8
	c, dead, h2 := threeHosts(t, 600, limit)
	c.crash(1)
	h3 := c.hosts[3]
	most, mostStat := 0, int64(0)
	for range 3000 {
		c.advance(time.Millisecond)
		n := c.orphans(h2, dead, 1)
		require.LessOrEqual(t, n, limit, "at %v", c.v.Now())
		most = max(most, n)
		mostStat = max(mostStat, h2.Stats().FailoverInFlight)
		if c.newLeaders(dead, 1) {
			break
		}
	}
	require.True(t, c.newLeaders(dead, 1), "every group host 1 led has a new leader")
	require.Equal(t, limit, most, "the flight was full")
	require.EqualValues(t, limit, mostStat)
	s2, s3 := h2.Stats(), h3.Stats()
	require.EqualValues(t, len(dead), s2.LivenessWakes, "host 2 is first alive in every group")
	require.Zero(t, s2.FailoverQueued)
	require.Zero(t, s2.FailoverInFlight)
	require.Zero(t, s3.LivenessWakes)
	require.NoError(t, c.err())
	t.Logf("%d groups failed over %v after the crash", len(dead), c.v.Now()-500*time.Millisecond)
}

// Only the first voter alive of a group campaigns: the other survivors'
// replicas wake by its requests, not by liveness, and start no election,
// even when their wake comes long (here up to a second) after the verdict;
// hosts with no replica of the dead host's groups do nothing. One group
// flies at a time.
func TestFailoverFirstAliveCampaigns(t *testing.T) {
	c := failoverCluster(t, 5, 1000, 3, 1)
	dead := c.bootLedBy(1)
	first := map[election.ID]int{} // host -> groups it is first alive in
	for _, d := range dead {
		first[firstAlive(d, 1)]++
	}
	wakes := map[election.ID]int64{}
	for id, h := range c.hosts {
		wakes[id] = h.Stats().Wakes
	}
	c.crash(1)
	for range 300 {
		c.advance(10 * time.Millisecond)
		if c.newLeaders(dead, 1) {
			break
		}
	}
	require.True(t, c.newLeaders(dead, 1))
	t.Logf("%d groups failed over one at a time by %v after the crash", len(dead), c.v.Now()-500*time.Millisecond)
	c.advance(time.Second) // they all sleep again, and nothing more happens
	el := c.elections()
	for _, id := range []election.ID{2, 3, 4, 5} {
		s := c.hosts[id].Stats()
		require.EqualValues(t, first[id], s.LivenessWakes, "host %d", id)
		require.Equal(t, first[id], el[id], "host %d: elections", id)
		followed := 0 // replicas here that another voter campaigns for
		for _, d := range dead {
			if slices.Contains(d.voters, id) && firstAlive(d, 1) != id {
				followed++
			}
		}
		require.EqualValues(t, first[id]+followed, s.Wakes-wakes[id], "host %d: wakes", id)
		for _, d := range dead {
			if st, err := c.hosts[id].Status(d.id); err == nil && st.Status.Role == election.Leader {
				require.Equal(t, id, firstAlive(d, 1), "g%d led by its first voter alive", d.id)
			}
		}
	}
	require.NoError(t, c.err())
}

// firstAlive returns d's first voter other than dead.
func firstAlive(d groupDef, dead election.ID) election.ID {
	for _, v := range d.voters {
		if v != dead {
			return v
		}
	}
	return election.None
}

// A wrong verdict: host 1's batches are lost for a while, and the others
// take it for dead. Once host 2 hears it again, what is left of its
// queue stays asleep under host 1.
func TestFailoverStopsWhenHeard(t *testing.T) {
	const limit = 4
	c, dead, h2 := threeHosts(t, 300, limit)
	lost := true
	c.drop = func(b multiraft.Batch) bool { return lost && b.From == 1 }
	c.until(func() bool { return h2.Stats().FailoverQueued != 0 })
	c.advance(20 * time.Millisecond)
	lost = false
	c.until(func() bool { return h2.Stats().PeersUp != 0 })
	s := h2.Stats()
	require.Zero(t, s.FailoverQueued)
	require.Positive(t, s.LivenessWakes)
	require.EqualValues(t, len(dead), s.LivenessWakes+s.FailoverDropped)
	require.Greater(t, s.FailoverDropped, int64(len(dead)/2))
	c.advance(2 * time.Second)
	asleep := 0
	for _, d := range dead {
		st, err := h2.Status(d.id)
		require.NoError(t, err)
		if st.Hibernating && st.Status.Term == 1 && st.Status.Leader == 1 {
			asleep++
		}
	}
	require.EqualValues(t, s.FailoverDropped, asleep, "the dropped groups sleep on under host 1")
	require.Equal(t, s.LivenessWakes, h2.Stats().LivenessWakes, "no wake by liveness after host 1 was heard")
	require.NoError(t, c.err())
}

// Touch wakes a queued group at once, and it leaves the queue.
func TestFailoverTouchWakesQueued(t *testing.T) {
	c, dead, h2 := threeHosts(t, 300, 1)
	c.crash(1)
	c.until(func() bool { return h2.Stats().FailoverQueued != 0 })
	last := dead[len(dead)-1].id
	st, err := h2.Status(last)
	require.NoError(t, err)
	require.True(t, st.Hibernating)
	q := h2.Stats().FailoverQueued
	require.NoError(t, h2.Touch(last))
	st, err = h2.Status(last)
	require.NoError(t, err)
	require.False(t, st.Hibernating, "woken at once")
	require.Equal(t, q-1, h2.Stats().FailoverQueued)
	for !c.newLeaders(dead[len(dead)-1:], 1) {
		c.advance(10 * time.Millisecond)
	}
	require.Positive(t, h2.Stats().FailoverQueued, "the touched group did not wait for its turn")
	require.NoError(t, c.err())
}

// A group that cannot win its election (here its third voter's answers
// are lost, though its host is alive) gives up its place after three
// election timeouts, and the queue moves on.
func TestFailoverExpires(t *testing.T) {
	const limit = 4
	c, _, h2 := threeHosts(t, 60, limit)
	c.drop = func(b multiraft.Batch) bool { return b.From == 3 && len(b.Msgs) > 0 }
	c.crash(1)
	c.advance(1500 * time.Millisecond)
	s := h2.Stats()
	require.GreaterOrEqual(t, s.FailoverExpired, int64(limit), "the first flight gave up its places")
	require.Greater(t, s.LivenessWakes, int64(limit), "and the queue moved on")
	require.LessOrEqual(t, s.FailoverInFlight, int64(limit))
	require.NoError(t, c.err())
}

// A group with no quorum alive stays asleep; when a voter's host is heard
// again, the group fails over.
func TestFailoverWaitsForQuorum(t *testing.T) {
	c, dead, h2 := threeHosts(t, 60, 4)
	c.crash(3)
	c.until(func() bool { return h2.Stats().PeersDown != 0 })
	c.crash(1)
	c.until(func() bool { return h2.Stats().PeersDown >= 2 })
	c.advance(time.Second)
	s := h2.Stats()
	require.Zero(t, s.LivenessWakes, "no group can elect with host 2 alone")
	require.Zero(t, s.FailoverQueued)
	require.EqualValues(t, s.Groups, s.Hibernating)
	c.start(3)
	for range 200 {
		c.advance(10 * time.Millisecond)
		if c.newLeaders(dead, 1) {
			break
		}
	}
	require.True(t, c.newLeaders(dead, 1), "host 3 back: host 1's groups elect")
	// Host 3 restarts awake (its groups' states are stored), so its own
	// timers elect some of them too.
	require.Positive(t, h2.Stats().LivenessWakes, "host 2 failed over the groups when host 3 came back")
	require.NoError(t, c.err())
}

func TestFailoverInFlightDefault(t *testing.T) {
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	v := newTestWheel(t)
	h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(multiraft.Batch) {}))
	require.NoError(t, err)
	t.Cleanup(h.Stop)
	require.Equal(t, multiraft.DefaultFailoverInFlight, h.Config().FailoverInFlight)
}

// A replica woken long after the verdict (its group's turn came late)
// gives the first voter alive its two election timeouts from the wake,
// not from the verdict: here the candidate's first vote requests are
// lost, and the other survivor's election timer comes due before the
// candidate's second round, which still wins alone.
func TestFailoverLateWakeDefersToFirst(t *testing.T) {
	c, dead, h2 := threeHosts(t, 300, 1)
	late := dead[len(dead)-1].id // woken last, about half a second after the verdict
	lost := false
	c.drop = func(b multiraft.Batch) bool {
		for _, gm := range b.Msgs {
			if b.From == 2 && b.To == 3 && gm.Group == late && gm.Msg.Type == election.MsgVote && !lost {
				lost = true
				return true
			}
		}
		return false
	}
	c.crash(1)
	c.until(func() bool { return h2.Stats().PeersDown != 0 })
	verdict := c.v.Now()
	c.until(func() bool { return c.newLeaders(dead, 1) })
	require.True(t, lost, "the first vote requests of the last group were lost")
	t.Logf("all %d groups led again %v after the verdict", len(dead), c.v.Now()-verdict)
	el := c.elections()
	require.Zero(t, el[3], "host 3 started no election")
	require.Equal(t, len(dead)+1, el[2], "host 2 pre-voted once per group, twice for the last")
	require.NoError(t, c.err())
}
