package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
)

// blockingCluster is 3 servers with exact 150ms timeouts, 1ms links and
// 5ms blocking writes; n1 has the longest log, n3 an empty one.
func blockingCluster(t *testing.T, net Network, events *[]election.Event) *Cluster {
	t.Helper()
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * ms
	ec.HeartbeatInterval = 50 * ms
	ec.ElectionJitter = repeated.None()
	ec.PreVote, ec.CheckQuorum = false, false
	ec.Emulate.WaitForVoteTimeout = true
	net.Latency, net.Disk, net.DiskBlocks = Fixed(ms), Fixed(5*ms), true
	c, err := NewCluster(Config{
		Nodes: 3, Election: ec, Network: net, Rand: TrialRand(testseed.Seed(t), 0),
		Observer: func(e election.Event) { *events = append(*events, e) },
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	c.Log(1).Set(6, 1)
	c.Log(2).Set(5, 1)
	require.NoError(t, c.Start())
	return c
}

func firstOf(events []election.Event, typ election.EventType, node election.ID, after time.Duration) time.Duration {
	for _, e := range events {
		if e.Type == typ && e.Node == node && e.At > after {
			return e.At
		}
	}
	return -1
}

// TestTimersWaitForTheWrite: n2 campaigns at 140ms; its request reaches
// n1 at 146ms, which refuses (its log is longer) but adopts the term: a
// write that blocks it until 151ms. n1's own timer comes due at 150ms,
// inside the write: with TimersWait it acts at 151ms, without at 150ms.
func TestTimersWaitForTheWrite(t *testing.T) {
	for _, wait := range []bool{false, true} {
		var events []election.Event
		c := blockingCluster(t, Network{TimersWait: wait}, &events)
		c.Wheel().AdvanceTo(140 * ms)
		require.NoError(t, c.Node(2).Campaign())
		c.Run(200*ms, func() bool { return false })
		want := 150 * ms
		if wait {
			want = 151 * ms
		}
		require.Equal(t, want, firstOf(events, election.EventElectionStart, 1, 0), "TimersWait %v", wait)
	}
}

// TestRearmAfterTermWrite: n3 grants n2's vote at a new term at 146ms,
// writing the term (until 151ms) and then the vote (until 156ms); with
// RearmAfterTermWrite its timer counts from 151ms, else from 146ms.
func TestRearmAfterTermWrite(t *testing.T) {
	for _, rearm := range []bool{false, true} {
		var events []election.Event
		c := blockingCluster(t, Network{RearmAfterTermWrite: rearm}, &events)
		c.Wheel().AdvanceTo(140 * ms)
		require.NoError(t, c.Node(2).Campaign())
		c.Crash(1) // keep n1 out of it
		// Crash n2 before n3's vote reaches it (at 157ms).
		c.Run(156*ms, func() bool { return false })
		c.Crash(2)
		c.Run(time.Second, func() bool { return firstOf(events, election.EventElectionStart, 3, 0) >= 0 })
		want := 146*ms + 150*ms
		if rearm {
			want += 5 * ms
		}
		require.Equal(t, want, firstOf(events, election.EventElectionStart, 3, 0), "RearmAfterTermWrite %v", rearm)
	}
}

func TestLeaderWrites(t *testing.T) {
	for _, n := range []int{0, 1, 2} {
		var events []election.Event
		c := blockingCluster(t, Network{LeaderWrite: true, LeaderWrites: n}, &events)
		require.NoError(t, c.Node(1).Campaign())
		c.Run(time.Second, func() bool { return firstOf(events, election.EventLeaderKnown, 2, 0) >= 0 })
		elected := firstOf(events, election.EventLeaderElected, 1, 0)
		// The first heartbeat leaves after max(n, 1) writes and takes 1ms.
		require.Equal(t, elected+time.Duration(max(n, 1))*5*ms+ms, firstOf(events, election.EventLeaderKnown, 2, 0), "LeaderWrites %d", n)
	}
	_, err := NewCluster(Config{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{LeaderWrites: -1}})
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "LeaderWrites", fe.Field)
}
