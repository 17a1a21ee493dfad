package sim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
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
	c, err := NewCluster(Config{
		Nodes:    n,
		Election: ec,
		Network:  net,
		Rand:     TrialRand(testseed.Seed(t), 0),
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
	require.Equal(t, s.Sent+s.Duplicated, s.Delivered+s.DroppedLoss+s.DroppedPartition+s.DroppedDown+s.Cancelled, "%+v", s)
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
	require.EqualValues(t, 5, c.Stats().DiskWrites)
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
	// Each of the ~470 sends is lost with probability 0.2, independently:
	// allow five standard deviations of the binomial proportion (about
	// 0.09 here; a fixed 0.05, 2.7 of them, failed in about one run in 150).
	sd := math.Sqrt(0.2 * 0.8 / float64(s.Sent))
	require.InDelta(t, 0.2, float64(s.DroppedLoss)/float64(s.Sent), 5*sd, "%+v", s)
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
	// Long enough for many election rounds (timeouts are 150-300ms), so
	// split votes between n2 and n3 cannot outlast it whatever the seed.
	const pause = 5 * time.Second
	require.NoError(t, c.Pause(1, pause))
	require.Error(t, c.Pause(9, ms))
	// The others elect a new leader while n1 is frozen.
	require.True(t, c.Run(start+pause, func() bool {
		for _, id := range []election.ID{2, 3} {
			if c.Node(id).Status().Role == election.Leader {
				return true
			}
		}
		return false
	}))
	require.True(t, c.Node(1).Status().Role == election.Leader, "n1 is still frozen: it cannot have stepped down yet")
	require.Positive(t, c.Stats().Held)
	// After the pause n1 learns the higher term and follows.
	require.True(t, c.Run(start+pause+2*time.Second, func() bool {
		st := c.Node(1).Status()
		return st.Role == election.Follower && st.Leader != election.None
	}))
}

func TestClusterBlockingDiskAndCandidatesWait(t *testing.T) {
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * ms
	ec.HeartbeatInterval = 50 * ms
	ec.ElectionJitter = repeated.None() // no randomness
	ec.PreVote, ec.CheckQuorum = false, false
	ec.Emulate.WaitForVoteTimeout = true // Setup.CandidatesWait
	c, err := NewCluster(Config{
		Nodes:    3,
		Election: ec,
		Network:  Network{Latency: Fixed(1 * ms), Disk: Fixed(5 * ms), DiskBlocks: true},
		Rand:     TrialRand(testseed.Seed(t), 1),
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
	require.EqualValues(t, 12, c.Stats().Delivered, "6 requests and their 6 rejections")
	// With blocking writes the vote requests left only after each
	// candidate's write: 150ms + 5ms, arriving at 156ms.
	require.EqualValues(t, 3, c.Stats().DiskWrites)
}

func TestNewClusterErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Nodes: 0, Rand: TrialRand(1, 1)}, "Nodes"},
		{Config{Nodes: 3}, "Rand"},
		{Config{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Loss: 2}}, "Loss"},
		{Config{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Duplicate: -1}}, "Duplicate"},
		{Config{Nodes: 3, Rand: TrialRand(1, 1), Network: Network{Links: map[Link]Latency{{1, 2}: nil}}}, "Links[1->2]"},
	} {
		_, err := NewCluster(tc.cfg)
		require.ErrorIs(t, err, ErrInvalidConfig)
		var fe *FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
		require.NotEmpty(t, fe.Reason)
		require.NotContains(t, fe.Reason, tc.field, "the reason names no Go field")
	}
	_, err := NewCluster(Config{Nodes: 3, Rand: TrialRand(1, 1)})
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Contains(t, err.Error(), "ElectionTimeout")
}

func TestFieldError(t *testing.T) {
	err := error(&FieldError{Field: "Nodes", Value: 0, Reason: "must be in [1, 1000]", Err: ErrInvalidConfig})
	require.Equal(t, "sim: invalid config: Nodes 0: must be in [1, 1000]", err.Error())
	require.ErrorIs(t, err, ErrInvalidConfig)
	other := errors.New("other: invalid config")
	err = &FieldError{Field: "Latency", Value: Fixed(ms), Reason: "too slow", Err: other}
	require.Equal(t, "other: invalid config: Latency fixed:1ms: too slow", err.Error())
	require.ErrorIs(t, err, other)
	require.NotErrorIs(t, err, ErrInvalidConfig)
	require.Equal(t, `"x"`, (&FieldError{Value: "x"}).ValueString())
}

func TestClusterFaultErrors(t *testing.T) {
	c := testCluster(t, 3, Network{}, nil)
	require.ErrorIs(t, c.Start(1), ErrServerRunning)
	require.ErrorIs(t, c.Start(7), ErrNoServer)
	require.ErrorIs(t, c.Restart(7), ErrNoServer)
	require.ErrorIs(t, c.Restart(1), ErrServerRunning)
	c.Crash(2)
	require.ErrorIs(t, c.Pause(2, ms), ErrServerDown)
}

// panicky is a latency whose every draw panics: a broken model.
type panicky struct{}

func (panicky) Sample(*rand.Rand) time.Duration { panic("broken latency model") }
func (panicky) String() string                  { return "panicky" }

// TestClusterErrReportsCallbackPanics: a panic in a callback on the
// cluster's wheel (here: the network model, sampled when a heartbeat
// timer fires) is recovered by the wheel, and Err reports it, so a trial
// can fail instead of measuring a broken cluster.
func TestClusterErrReportsCallbackPanics(t *testing.T) {
	c := testCluster(t, 3, Network{}, nil)
	require.NoError(t, c.Node(1).Campaign())
	require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }))
	require.NoError(t, c.Err())
	c.cfg.Network.Latency = panicky{} // the leader's next heartbeats panic in their timer
	c.RunFor(200*ms, func() bool { return false })
	err := c.Err()
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "broken latency model", pe.Value)
	require.Positive(t, pe.Count)
	require.Contains(t, err.Error(), "broken latency model")
}

// TestClusterRunHonoursContext: Run checks the context every CheckEvery
// instants, so a run with a huge limit stops soon after cancellation.
func TestClusterRunHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * ms
	ec.HeartbeatInterval = time.Microsecond // an event every microsecond
	instants := 0
	c, err := NewCluster(Config{Nodes: 3, Election: ec, Network: Network{Latency: Fixed(ms)}, Rand: TrialRand(1, 0), Context: ctx})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Start())
	require.NoError(t, c.Node(1).Campaign())
	var at time.Duration
	done := func() bool {
		instants++
		if instants == 5000 {
			cancel()
			at = c.Now()
		}
		return false
	}
	require.False(t, c.Run(math.MaxInt64, done))
	require.ErrorIs(t, c.Err(), context.Canceled)
	require.LessOrEqual(t, instants, 5000+CheckEvery, "Run stopped within CheckEvery instants of the cancellation")
	require.Less(t, c.Now()-at, time.Second)
}

func TestRunForSaturates(t *testing.T) {
	c := testCluster(t, 1, Network{}, nil)
	c.Run(10*ms, func() bool { return false })
	n := 0
	c.RunFor(math.MaxInt64, func() bool { n++; return n > 3 })
	require.Greater(t, c.Now(), 10*ms, "the limit did not wrap into the past")
}

// TestClusterChecksSafety: a cluster checks every event of its nodes for
// election safety, and Err reports a violation: here a heartbeat forged
// in the name of a follower makes another follower follow it in the term
// a third server won.
func TestClusterChecksSafety(t *testing.T) {
	c := testCluster(t, 3, Network{}, nil)
	require.True(t, c.RunFor(time.Second, func() bool { l, _ := leaderOf(c); return l != election.None }))
	require.NoError(t, c.Err())
	l, term := leaderOf(c)
	var others []election.ID
	for _, id := range c.IDs() {
		if id != l {
			others = append(others, id)
		}
	}
	c.Node(others[0]).Step(election.Message{Type: election.MsgHeartbeat, From: others[1], To: others[0], Term: term})
	var se *SafetyError
	require.ErrorAs(t, c.Err(), &se)
	require.Contains(t, se.Error(), "safety violated")
}

// TestClusterChecksLeases: between instants, Run gives the checker every
// running server's lease view, and with CheckQuorum a stable leader holds
// its lease there (the lease check is not vacuous).
func TestClusterChecksLeases(t *testing.T) {
	ec := election.DefaultConfig()
	ec.ElectionTimeout, ec.HeartbeatInterval = 150*ms, 50*ms
	ec.PreVote, ec.CheckQuorum = true, true
	c, err := NewCluster(Config{Nodes: 3, Election: ec, Network: Network{Latency: Fixed(ms)}, Rand: TrialRand(testseed.Seed(t), 0)})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Start())
	leased := false
	c.RunFor(2*time.Second, func() bool {
		for _, v := range c.leases {
			leased = leased || v.Lease
		}
		return false
	})
	require.True(t, leased, "no server ever held a lease")
	require.Len(t, c.leases, 3)
	require.NoError(t, c.Err())
}

// TestClusterSendGap: a server's requests leave one gap apart, in the
// order its node sends them; responses are not held.
func TestClusterSendGap(t *testing.T) {
	elected := func(gap Latency) time.Duration {
		c := testCluster(t, 5, Network{Latency: Fixed(1 * ms), SendGap: gap}, nil)
		require.NoError(t, c.Node(1).Campaign())
		require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }))
		return c.Now()
	}
	// Without a gap the four requests leave at 0 and two answers are back
	// at 2ms. With 1ms gaps they leave at 0, 1, 2 and 3ms: the second
	// voter's answer is back at 3ms.
	require.Equal(t, 2*ms, elected(nil))
	require.Equal(t, 3*ms, elected(Fixed(1*ms)))
	require.Equal(t, 4*ms, elected(Fixed(2*ms)), "requests at 0 and 2ms: the second answer is back at 4ms")
}

// TestClusterCancelBackoff: a leader elected while a vote request is
// still unanswered cancels it (LogCabin's interruptAll), so it sends that
// voter nothing until the backoff ends, and the voter's late answer is
// discarded; without CancelBackoff the voter hears the leader at once.
func TestClusterCancelBackoff(t *testing.T) {
	run := func(backoff time.Duration) (*Cluster, []election.Event) {
		var events []election.Event
		c := testCluster(t, 3, Network{Latency: Fixed(1 * ms), CancelBackoff: backoff}, &events)
		require.NoError(t, c.Pause(3, 10*ms))
		require.NoError(t, c.Node(1).Campaign())
		require.True(t, c.Run(time.Second, func() bool { id, _ := leaderOf(c); return id == 1 }))
		require.Equal(t, 2*ms, c.Now(), "n2's answer makes n1 leader; n3's is outstanding")
		c.Run(c.Now()+100*ms, func() bool { return false })
		return c, events
	}
	knows := func(events []election.Event, id election.ID) bool {
		for _, e := range events {
			if e.Type == election.EventLeaderKnown && e.Node == id {
				return true
			}
		}
		return false
	}
	c, events := run(0)
	require.True(t, knows(events, 3), "without the backoff n3 hears the leader")
	require.Zero(t, c.Stats().Cancelled)

	c, events = run(time.Second)
	require.False(t, knows(events, 3), "n1 sends n3 nothing for a second")
	require.True(t, knows(events, 2))
	s := c.Stats()
	// n3's late answer is discarded, and of the heartbeats held for n3
	// (at 2, 52 and 102ms) the first two are superseded.
	require.EqualValues(t, 3, s.Cancelled, "%+v", s)
	// When the backoff ends the latest heartbeat leaves, if n1 still leads.
	c.Run(time.Second+10*ms, func() bool { return false })
	st := c.Node(3).Status()
	require.NotEqual(t, election.Follower, st.Role, "n3, hearing nobody, campaigned: %+v", st)
	// Every message is accounted for once none is in flight or held: the
	// cluster still runs, and a request may wait for its RPC's reply or
	// backoff (a later election of n1 or n3 cancels again), or be on its
	// way. Crash every server (held requests count as cancelled) and let
	// the last messages land.
	for _, id := range c.IDs() {
		c.Crash(id)
	}
	c.Run(c.Now()+10*ms, func() bool { return false })
	conserved(t, c.Stats())
}
