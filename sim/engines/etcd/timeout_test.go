package etcd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
)

// etcd re-draws the timeout on becoming follower, candidate or leader,
// never on a heartbeat: followers of a stable leader keep theirs.
func TestTimeoutNotRedrawnOnHeartbeat(t *testing.T) {
	seed := testSeed(t)
	c := newTestCluster(t, ClusterConfig{Nodes: 3, Node: fastConfig(), Rand: trialRand(seed, 0)})
	require.NoError(t, c.Start())
	leader := waitLeader(t, c, time.Second)
	draws := map[uint64]int64{}
	timeouts := map[uint64]int{}
	for _, id := range c.IDs() {
		draws[id] = c.Node(id).Stats().TimeoutDraws
		timeouts[id] = c.Node(id).Status().ElectionTimeout
	}
	c.Run(c.Now()+10*time.Second, func() bool { return false })
	l, _ := c.Leader()
	require.Equal(t, leader, l, "seed %d: leader changed in a stable cluster", seed)
	for _, id := range c.IDs() {
		require.Equal(t, draws[id], c.Node(id).Stats().TimeoutDraws, "seed %d: node %d re-drew its timeout", seed, id)
		require.Equal(t, timeouts[id], c.Node(id).Status().ElectionTimeout)
	}
}

// A pre-candidate that hears nothing retries its pre-vote every
// randomized timeout, with the same timeout: becomePreCandidate does not
// re-draw, and neither does the timeout firing.
func TestPreCandidateKeepsItsTimeout(t *testing.T) {
	seed := testSeed(t)
	isolated := uint64(3)
	cfg := fastConfig()
	cfg.CheckQuorum = false
	var starts []time.Duration
	c := newTestCluster(t, ClusterConfig{
		Nodes: 3, Node: cfg, Rand: trialRand(seed, 0), AlignedTicks: true,
		Drop: func(m *pb.Message) bool { return m.GetFrom() == isolated || m.GetTo() == isolated },
		Observer: func(e election.Event) {
			if uint64(e.Node) == isolated && e.Type == election.EventElectionStart {
				require.True(t, e.PreVote, "seed %d: the isolated node campaigned without a pre-vote", seed)
				starts = append(starts, e.At)
			}
		},
	})
	require.NoError(t, c.Start())
	n := c.Node(isolated)
	timeout := n.Status().ElectionTimeout
	draws := n.Stats().TimeoutDraws
	c.Run(20*time.Second, func() bool { return len(starts) >= 5 })
	require.Len(t, starts, 5, "seed %d", seed)
	tick := cfg.TickInterval
	require.Equal(t, time.Duration(timeout)*tick, starts[0])
	for i := 1; i < len(starts); i++ {
		require.Equal(t, time.Duration(timeout)*tick, starts[i]-starts[i-1], "seed %d: pre-vote round %d", seed, i)
	}
	require.Equal(t, draws, n.Stats().TimeoutDraws)
	st := n.Status()
	require.Equal(t, election.PreCandidate, st.Role)
	require.Equal(t, uint64(0), st.Term, "pre-votes do not raise the term")
}

// With PreVote, a candidate whose round times out goes back to pre-vote
// in the same term, keeping its timeout; a successful pre-vote then starts
// the next term with a fresh draw.
func TestCandidateTimeoutGoesBackToPreVote(t *testing.T) {
	seed := testSeed(t)
	cfg := fastConfig()
	cfg.CheckQuorum = false
	type start struct {
		at      time.Duration
		term    uint64
		preVote bool
	}
	var starts []start
	c := newTestCluster(t, ClusterConfig{
		Nodes: 3, Node: cfg, Rand: trialRand(seed, 0), AlignedTicks: true,
		// Node 1 wins its pre-votes but its vote requests are lost, and
		// nobody hears nodes 2 and 3 but their pre-vote answers.
		Drop: func(m *pb.Message) bool {
			if m.GetFrom() == 1 {
				return m.GetType() == pb.MsgVote
			}
			return m.GetType() != pb.MsgPreVoteResp
		},
		Observer: func(e election.Event) {
			if e.Node == 1 && e.Type == election.EventElectionStart {
				starts = append(starts, start{e.At, e.Term, e.PreVote})
			}
		},
	})
	require.NoError(t, c.Start())
	n := c.Node(1)
	require.NoError(t, n.Campaign())
	c.Run(0, func() bool { return false }) // the pre-vote answers, at instant 0
	require.Len(t, starts, 2)
	require.Equal(t, start{0, 1, true}, starts[0])
	require.Equal(t, start{0, 1, false}, starts[1])
	timeout, draws := n.Status().ElectionTimeout, n.Stats().TimeoutDraws
	c.Run(time.Duration(timeout)*cfg.TickInterval, func() bool { return len(starts) > 2 })
	require.Len(t, starts, 4, "seed %d", seed)
	// The round timed out after exactly its timeout: a pre-vote for term
	// 2 from term 1, no draw, and then the new term with one draw.
	require.Equal(t, start{time.Duration(timeout) * cfg.TickInterval, 2, true}, starts[2])
	require.Equal(t, start{starts[2].at, 2, false}, starts[3])
	require.Equal(t, draws+1, n.Stats().TimeoutDraws)
}

// A follower detects a dead leader between (ElectionTick-1) and
// (2*ElectionTick-1) ticks after the last heartbeat: the drawn timeout T
// in [ElectionTick, 2*ElectionTick-1] ticks, minus the fraction of a tick
// between the heartbeat's arrival and the follower's next tick. Across
// trials the detection time is spread over that whole range.
func TestDetectionWindow(t *testing.T) {
	seed := testSeed(t)
	cfg := fastConfig()
	tick, et := cfg.TickInterval, time.Duration(cfg.ElectionTick)
	lo, hi := (et-1)*tick, (2*et-1)*tick
	var minSeen, maxSeen time.Duration = hi, lo
	for i := range 50 {
		var dead uint64
		lastHB := map[uint64]time.Duration{}
		detected := map[uint64]time.Duration{}
		var c *Cluster
		c = newTestCluster(t, ClusterConfig{
			Nodes: 5, Node: cfg, Rand: trialRand(seed, i),
			Drop: func(m *pb.Message) bool { return dead != 0 && m.GetFrom() == dead },
			OnSend: func(m *pb.Message) {
				if dead == 0 && (m.GetType() == pb.MsgHeartbeat || m.GetType() == pb.MsgApp) {
					lastHB[m.GetTo()] = c.Now() // no latency: it arrives now
				}
			},
			Observer: func(e election.Event) {
				if dead != 0 && e.Type == election.EventElectionStart {
					if _, ok := detected[uint64(e.Node)]; !ok {
						detected[uint64(e.Node)] = e.At
					}
				}
			},
		})
		require.NoError(t, c.Start())
		leader := waitLeader(t, c, 10*time.Second)
		c.Run(c.Now()+time.Second, func() bool { return false })
		dead = leader
		c.Run(c.Now()+3*hi, func() bool { return false })
		require.NotEmpty(t, detected, "seed %d trial %d", seed, i)
		for id, at := range detected {
			if at-lastHB[id] > hi {
				continue // not a detection: it heard a later candidate first
			}
			d := at - lastHB[id]
			require.Greater(t, d, lo, "seed %d trial %d node %d", seed, i, id)
			minSeen, maxSeen = min(minSeen, d), max(maxSeen, d)
		}
	}
	// 50 trials spread over most of the window.
	require.Less(t, minSeen, lo+(hi-lo)/4, "seed %d", seed)
	require.Greater(t, maxSeen, lo+(hi-lo)/4, "seed %d", seed)
}

// Adopting a higher term restarts the election timer with a new draw,
// even from a vote request the node rejects (a stale log).
func TestHigherTermRestartsTimer(t *testing.T) {
	seed := testSeed(t)
	cfg := fastConfig()
	cfg.HeartbeatTick, cfg.CheckQuorum = 5, false
	var denied int
	c := newTestCluster(t, ClusterConfig{Nodes: 3, Node: cfg, Rand: trialRand(seed, 0), Observer: func(e election.Event) {
		if e.Type == election.EventVoteDenied && !e.PreVote {
			denied++
		}
	}})
	require.NoError(t, c.Start())
	leader := waitLeader(t, c, 10*time.Second)
	follower := sortedOthers(c.IDs(), leader)[0]
	n := c.Node(follower)
	c.Run(c.Now()+time.Second, func() bool { return n.Status().ElectionElapsed >= 2 })
	st := n.Status()
	require.GreaterOrEqual(t, st.ElectionElapsed, 2)
	draws := n.Stats().TimeoutDraws
	other := sortedOthers(c.IDs(), follower)
	stale := &pb.Message{From: new(other[0]), To: new(follower), Type: pb.MsgVote.Enum(), Term: new(st.Term + 3), Index: new(uint64(0)), LogTerm: new(uint64(0))}
	require.NoError(t, n.Step(stale))
	st2 := n.Status()
	require.Equal(t, st.Term+3, st2.Term)
	require.Equal(t, 0, st2.ElectionElapsed)
	require.Equal(t, draws+1, n.Stats().TimeoutDraws)
	require.Equal(t, 1, denied)
}
