package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

const ms = time.Millisecond

// testCluster builds a started cluster with fixed latency and the given
// network tweaks, recording events.
func testCluster(t *testing.T, n int, net Network, events *[]election.Event) *Cluster {
	t.Helper()
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * ms
	ec.HeartbeatInterval = 50 * ms
	ec.PreVote, ec.CheckQuorum = false, false
	if net.Latency == nil {
		net.Latency = Fixed(1 * ms)
	}
	c, err := NewCluster(ClusterConfig{
		Nodes:    n,
		Election: ec,
		Network:  net,
		Rand:     TrialRand(*seedFlag, 0),
		Observer: func(e election.Event) {
			if events != nil {
				*events = append(*events, e)
			}
		},
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.NoError(t, c.Start())
	return c
}

func leaderOf(c *Cluster) (election.ID, uint64) {
	var id election.ID
	var term uint64
	for _, n := range c.IDs() {
		if !c.Up(n) {
			continue
		}
		if st := c.Node(n).Status(); st.Role == election.Leader && st.Term >= term {
			id, term = n, st.Term
		}
	}
	return id, term
}

// conserved checks that every message is accounted for once the network
// is idle: sent (+ duplicates) = delivered + dropped.
func conserved(t *testing.T, s NetStats) {
	t.Helper()
	require.Equal(t, s.Sent+s.Duplicated, s.Delivered+s.DroppedLoss+s.DroppedPartition+s.DroppedDown, "%+v", s)
}

func TestClusterElectsAndDiskDelaysTheVote(t *testing.T) {
	var events []election.Event
	c := testCluster(t, 3, Network{Latency: Fixed(1 * ms), Disk: Fixed(4 * ms)}, &events)
	require.NoError(t, c.Node(1).Campaign())
	require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }))
	// Request 1ms, voter persists term and vote (two writes, 8ms), answer 1ms.
	require.Equal(t, 10*ms, c.Now())
	c.Run(c.Now()+20*ms, func() bool { return false })
	c.Crash(1)
	c.Crash(2)
	c.Crash(3)
	c.Run(c.Now()+time.Second, func() bool { return false })
	conserved(t, c.Stats())
	// n1 writes its term and self-vote at once; n2 and n3 write the new
	// term, then the vote.
	require.Equal(t, 5, c.Stats().DiskWrites)
}

func TestClusterPartitions(t *testing.T) {
	t.Run("full: the majority side elects, the minority cannot", func(t *testing.T) {
		c := testCluster(t, 5, Network{}, nil)
		c.Partition([]election.ID{1, 2}, []election.ID{3, 4, 5})
		require.NoError(t, c.Node(1).Campaign())
		c.Run(2*time.Second, func() bool { return false })
		id, _ := leaderOf(c)
		require.Contains(t, []election.ID{3, 4, 5}, id, "leader %d", id)
		require.NotEqual(t, election.Leader, c.Node(1).Status().Role)
		require.NotEqual(t, election.Leader, c.Node(2).Status().Role)
		require.Positive(t, c.Stats().DroppedPartition)
	})
	t.Run("asymmetric: n1 cannot send, so it cannot win", func(t *testing.T) {
		c := testCluster(t, 3, Network{}, nil)
		c.Cut(1, 2)
		c.Cut(1, 3)
		require.NoError(t, c.Node(1).Campaign())
		c.Run(100*ms, func() bool { return false })
		require.Equal(t, election.Candidate, c.Node(1).Status().Role)
		for _, id := range []election.ID{2, 3} {
			require.Zero(t, c.Node(id).Status().Term, "n%d heard nothing", id)
		}
		c.Heal()
		c.Run(2*time.Second, func() bool { id, _ := leaderOf(c); return id != election.None })
		id, _ := leaderOf(c)
		require.NotEqual(t, election.None, id)
	})
	t.Run("partial: n1 and n2 cannot talk, n3 reaches both", func(t *testing.T) {
		c := testCluster(t, 3, Network{}, nil)
		c.Cut(1, 2)
		c.Cut(2, 1)
		require.NoError(t, c.Node(1).Campaign())
		require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }), "n1 wins with n3's vote")
	})
}

func TestClusterLossAndDuplication(t *testing.T) {
	c := testCluster(t, 5, Network{Latency: Uniform(1*ms, 3*ms), Loss: 0.2, Duplicate: 0.3}, nil)
	c.Run(3*time.Second, func() bool { return false })
	for _, id := range c.IDs() {
		c.Crash(id)
	}
	c.Run(4*time.Second, func() bool { return false })
	s := c.Stats()
	require.Positive(t, s.DroppedLoss)
	require.Positive(t, s.Duplicated)
	require.InDelta(t, 0.2, float64(s.DroppedLoss)/float64(s.Sent), 0.05)
	conserved(t, s)
}

func TestClusterCrashRestartKeepsTermAndVote(t *testing.T) {
	c := testCluster(t, 3, Network{}, nil)
	require.NoError(t, c.Node(2).Campaign())
	require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 2 }))
	before := c.Node(3).Status()
	require.Equal(t, election.ID(2), before.Vote)
	c.Crash(3)
	require.False(t, c.Up(3))
	require.Error(t, c.Restart(2), "restarting a running server is an error")
	require.NoError(t, c.Restart(3))
	after := c.Node(3).Status()
	require.Equal(t, before.Term, after.Term)
	require.Equal(t, before.Vote, after.Vote)
	require.Equal(t, election.Follower, after.Role)
	// It rejoins: the leader's heartbeats reach it.
	require.True(t, c.Run(c.Now()+time.Second, func() bool { return c.Node(3).Status().Leader == 2 }))
}

func TestClusterPauseHoldsMessages(t *testing.T) {
	c := testCluster(t, 3, Network{}, nil)
	require.NoError(t, c.Node(1).Campaign())
	require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }))
	start := c.Now()
	require.NoError(t, c.Pause(1, 400*ms)) // longer than any election timeout
	require.Error(t, c.Pause(9, ms))
	// The others elect a new leader while n1 is frozen.
	require.True(t, c.Run(start+400*ms, func() bool {
		for _, id := range []election.ID{2, 3} {
			if c.Node(id).Status().Role == election.Leader {
				return true
			}
		}
		return false
	}))
	require.Positive(t, c.Stats().Held)
	// After the pause n1 learns the higher term and follows.
	require.True(t, c.Run(start+2*time.Second, func() bool {
		st := c.Node(1).Status()
		return st.Role == election.Follower && st.Leader != election.None
	}))
}

func TestClusterBlockingDiskAndCandidatesWait(t *testing.T) {
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * ms
	ec.HeartbeatInterval = 50 * ms
	ec.ElectionJitter = timeoutJitter(150*ms, 150*ms, 0, nil) // no randomness
	ec.PreVote, ec.CheckQuorum = false, false
	ec.WaitForVoteTimeout = true // Setup.CandidatesWait
	c, err := NewCluster(ClusterConfig{
		Nodes:    3,
		Election: ec,
		Network:  Network{Latency: Fixed(1 * ms), Disk: Fixed(5 * ms), DiskBlocks: true},
		Rand:     TrialRand(*seedFlag, 1),
	})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Start())
	// Identical timeouts: all three become candidates at 150ms and reject
	// each other; the candidates ignore the rejections and nobody steps
	// down early.
	c.Run(200*ms, func() bool { return false })
	for _, id := range c.IDs() {
		st := c.Node(id).Status()
		require.Equal(t, election.Candidate, st.Role, "n%d", id)
		require.Equal(t, uint64(1), st.Term)
	}
	require.Equal(t, 12, c.Stats().Delivered, "6 requests and their 6 rejections")
	// With blocking writes the vote requests left only after each
	// candidate's write: 150ms + 5ms, arriving at 156ms.
	require.Equal(t, 3, c.Stats().DiskWrites)
}

func TestNewClusterErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  ClusterConfig
		want string
	}{
		{ClusterConfig{Nodes: 0, Rand: TrialRand(1, 1)}, "ClusterConfig.Nodes"},
		{ClusterConfig{Nodes: 3}, "ClusterConfig.Rand"},
		{ClusterConfig{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Loss: 2}}, "Network.Loss"},
		{ClusterConfig{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Duplicate: -1}}, "Network.Duplicate"},
		{ClusterConfig{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Links: map[Link]Latency{{1, 2}: nil}}}, "Network.Links[1->2]"},
		{ClusterConfig{Nodes: 3, Rand: TrialRand(1, 1)}, "ElectionTimeout"},
	} {
		_, err := NewCluster(tc.cfg)
		require.Error(t, err)
		require.Contains(t, err.Error(), tc.want)
	}
}
