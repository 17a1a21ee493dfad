package etcd

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/sim"
)

func newTestCluster(t *testing.T, cfg ClusterConfig) *Cluster {
	t.Helper()
	c, err := NewCluster(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// waitLeader runs c until a leader is accepted by every other running node
// and returns it.
func waitLeader(t *testing.T, c *Cluster, within time.Duration) uint64 {
	t.Helper()
	var leader uint64
	ok := c.Run(c.Now()+within, func() bool {
		l, term := c.Leader()
		if l == 0 {
			return false
		}
		fol, others := c.Accepted(l, term)
		leader = l
		return fol == others
	})
	require.True(t, ok, "no leader accepted by all within %v", within)
	return leader
}

func TestClusterConfigValidate(t *testing.T) {
	ok := ClusterConfig{Nodes: 3, Node: fastConfig(), Rand: rand.New(rand.NewPCG(1, 1))}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name   string
		change func(*ClusterConfig)
		field  string
		reason string
	}{
		{"no nodes", func(c *ClusterConfig) { c.Nodes = 0 }, "Nodes", "[1, 1000]"},
		{"too many", func(c *ClusterConfig) { c.Nodes = 1001 }, "Nodes", "[1, 1000]"},
		{"no rand", func(c *ClusterConfig) { c.Rand = nil }, "Rand", "is required"},
		{"loss 1", func(c *ClusterConfig) { c.Loss = 1 }, "Loss", "[0, 1)"},
		{"duplicate", func(c *ClusterConfig) { c.Duplicate = 1.5 }, "Duplicate", "[0, 1]"},
		{"bad timing", func(c *ClusterConfig) { c.Node.HeartbeatTick = 10 }, "Node.ElectionTick", "greater than HeartbeatTick (10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			requireFieldError(t, c.Validate(), tc.field, tc.reason)
			_, err := NewCluster(c)
			requireFieldError(t, err, tc.field, tc.reason)
		})
	}
}

func TestClusterUnknownNode(t *testing.T) {
	c, err := NewCluster(ClusterConfig{Nodes: 3, Node: fastConfig(), Rand: rand.New(rand.NewPCG(1, 1))})
	require.NoError(t, err)
	defer c.Close()
	require.ErrorIs(t, c.Start(4), ErrNoNode)
	require.ErrorIs(t, c.Restart(0), ErrNoNode)
	require.NoError(t, c.Start(1))
	require.ErrorIs(t, c.Start(1), etcdadapter.ErrRunning)
}

// Every combination of size and options elects exactly one leader per
// term, under latency, loss and disk delay, and keeps the safety
// invariants.
func TestClusterElectsLeader(t *testing.T) {
	seed := testSeed(t)
	for _, nodes := range []int{1, 3, 5} {
		for _, preVote := range []bool{false, true} {
			for _, checkQuorum := range []bool{false, true} {
				cfg := fastConfig()
				cfg.PreVote, cfg.CheckQuorum = preVote, checkQuorum
				inv := checked(t, seed, nodes)
				elected := map[uint64]election.ID{}
				c := newTestCluster(t, ClusterConfig{
					Nodes: nodes, Node: cfg, Rand: trialRand(seed, nodes), Loss: 0.01, Duplicate: 0.05,
					Latency: func(_, _ uint64, r *rand.Rand) time.Duration {
						return time.Duration(r.Int64N(int64(3 * time.Millisecond)))
					},
					Disk: func(etcdadapter.Write, *rand.Rand) time.Duration { return time.Millisecond },
					Observer: func(e election.Event) {
						inv.Observe(e)
						if e.Type == election.EventLeaderElected {
							elected[e.Term] = e.Node
						}
					},
				})
				require.NoError(t, c.Start())
				leader := waitLeader(t, c, 30*time.Second)
				_, term := c.Leader()
				require.Equal(t, elected[term], election.ID(leader))
				// Keep running: a stable cluster with a live leader.
				c.Run(c.Now()+5*time.Second, func() bool { return false })
				require.NotZero(t, inv.Elected())
				if nodes > 1 {
					st := c.Stats()
					require.Positive(t, st.Duplicated)
					require.Positive(t, st.DroppedLoss)
				}
			}
		}
	}
}

// With CheckQuorum a leader cut off from every follower steps down after
// ElectionTick ticks without hearing from a quorum; without it, it stays
// leader.
func TestCheckQuorumStepsDownIsolatedLeader(t *testing.T) {
	seed := testSeed(t)
	for _, checkQuorum := range []bool{false, true} {
		cfg := fastConfig()
		cfg.CheckQuorum = checkQuorum
		var cut uint64
		var steppedDown []election.Event
		c := newTestCluster(t, ClusterConfig{
			Nodes: 3, Node: cfg, Rand: trialRand(seed, 0),
			Drop: func(m *pb.Message) bool { return cut != 0 && (m.GetFrom() == cut || m.GetTo() == cut) },
			Observer: func(e election.Event) {
				if uint64(e.Node) == cut && e.Type == election.EventStepDown {
					steppedDown = append(steppedDown, e)
				}
			},
		})
		require.NoError(t, c.Start())
		cut = waitLeader(t, c, 10*time.Second)
		at := c.Now()
		c.Run(at+time.Second, func() bool { return len(steppedDown) > 0 })
		if !checkQuorum {
			require.Empty(t, steppedDown, "seed %d: leader stepped down without CheckQuorum", seed)
			require.Equal(t, election.Leader, c.Node(cut).Status().Role)
			continue
		}
		require.NotEmpty(t, steppedDown, "seed %d: isolated leader did not step down", seed)
		require.Equal(t, election.ReasonCheckQuorum, steppedDown[0].Reason)
		// The quorum check runs every ElectionTick ticks; the first one
		// that sees no answers at all comes within two periods.
		et := time.Duration(cfg.ElectionTick) * cfg.TickInterval
		require.LessOrEqual(t, steppedDown[0].At-at, 2*et, "seed %d", seed)
	}
}

// Without PreVote an isolated follower raises its term at every timeout
// and disrupts the leader when it returns; with PreVote its term stays.
func TestPreVoteKeepsIsolatedTermStable(t *testing.T) {
	seed := testSeed(t)
	for _, preVote := range []bool{false, true} {
		cfg := fastConfig()
		cfg.PreVote, cfg.CheckQuorum = preVote, false
		var cut uint64
		c := newTestCluster(t, ClusterConfig{
			Nodes: 3, Node: cfg, Rand: trialRand(seed, 1),
			Drop: func(m *pb.Message) bool { return cut != 0 && (m.GetFrom() == cut || m.GetTo() == cut) },
		})
		require.NoError(t, c.Start())
		leader := waitLeader(t, c, 10*time.Second)
		_, term := c.Leader()
		cut = sortedOthers(c.IDs(), leader)[0]
		c.Run(c.Now()+3*time.Second, func() bool { return false })
		got := c.Node(cut).Status().Term
		if preVote {
			require.Equal(t, term, got, "seed %d: pre-vote let the isolated node raise its term", seed)
		} else {
			require.Greater(t, got, term+5, "seed %d: the isolated node did not campaign", seed)
		}
	}
}

// A crashed node keeps its persisted HardState and log; restarted, it
// resumes from them as a follower and accepts the current leader.
func TestCrashRestartKeepsHardState(t *testing.T) {
	seed := testSeed(t)
	inv := checked(t, seed, 3)
	c := newTestCluster(t, ClusterConfig{Nodes: 3, Node: fastConfig(), Rand: trialRand(seed, 2), Observer: inv.Observe})
	require.NoError(t, c.Start())
	leader := waitLeader(t, c, 10*time.Second)
	require.NoError(t, c.Node(leader).Propose([]byte("x")))
	c.Run(c.Now()+100*time.Millisecond, func() bool { return false })
	follower := sortedOthers(c.IDs(), leader)[0]
	n := c.Node(follower)
	st := n.Status()
	term, vote, commit := n.HardState()
	require.Equal(t, st.Term, term)
	require.Equal(t, st.Vote, vote)
	require.Equal(t, st.Commit, commit)
	last, err := n.Storage().LastIndex()
	require.NoError(t, err)
	require.GreaterOrEqual(t, last, uint64(3)) // bootstrap snapshot, leader's empty entry, "x"

	c.Crash(follower)
	require.False(t, n.Status().Running)
	require.False(t, n.Accepted(leader, term))
	require.ErrorIs(t, n.Step(&pb.Message{To: new(follower), From: new(leader), Type: pb.MsgHeartbeat.Enum(), Term: new(term)}), etcdadapter.ErrNotRunning)
	require.ErrorIs(t, n.Campaign(), etcdadapter.ErrNotRunning)
	drawsAtCrash := n.Stats().TimeoutDraws
	require.Positive(t, drawsAtCrash)
	t2, v2, c2 := n.HardState()
	require.Equal(t, [3]uint64{term, vote, commit}, [3]uint64{t2, v2, c2})
	require.ErrorIs(t, c.Restart(leader), etcdadapter.ErrRunning)

	c.Run(c.Now()+50*time.Millisecond, func() bool { return false })
	require.NoError(t, c.Restart(follower))
	st = n.Status()
	require.True(t, st.Running)
	require.Equal(t, election.Follower, st.Role)
	require.Equal(t, term, st.Term)
	require.Equal(t, vote, st.Vote)
	require.Equal(t, commit, st.Commit)
	last2, _ := n.Storage().LastIndex()
	require.Equal(t, last, last2)
	require.Equal(t, drawsAtCrash+1, n.Stats().TimeoutDraws, "counters survive the crash; the restart drew once")
	ok := c.Run(c.Now()+time.Second, func() bool { return n.Accepted(leader, term) })
	require.True(t, ok, "seed %d: restarted node did not accept the leader", seed)
}

// sortedOthers returns ids without skip, in order.
func sortedOthers(ids []uint64, skip uint64) []uint64 {
	out := slices.DeleteFunc(slices.Clone(ids), func(id uint64) bool { return id == skip })
	slices.Sort(out)
	return out
}

// TestClusterChecksSafety: a cluster checks every event of its nodes for
// election safety, and Err reports a violation: here a heartbeat forged
// in the name of a follower makes another follower follow it in the term
// a third node leads.
func TestClusterChecksSafety(t *testing.T) {
	seed := testSeed(t)
	c := newTestCluster(t, ClusterConfig{Nodes: 3, Node: fastConfig(), Rand: trialRand(seed, 0)})
	require.NoError(t, c.Start())
	leader := waitLeader(t, c, 10*time.Second)
	require.NoError(t, c.Err())
	_, term := c.Leader()
	others := sortedOthers(c.IDs(), leader)
	require.NoError(t, c.Node(others[0]).Step(&pb.Message{Type: pb.MsgHeartbeat.Enum(), From: new(others[1]), To: new(others[0]), Term: new(term)}))
	var se *sim.SafetyError
	require.ErrorAs(t, c.Err(), &se, "seed %d", seed)
}
