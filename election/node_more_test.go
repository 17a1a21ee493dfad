package election_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

func TestStepIgnoresBadInput(t *testing.T) {
	p := newProbe(t, nil)
	hbm := election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 3}
	p.n.Step(hbm) // before Start
	require.Equal(t, uint64(1), p.n.Stats().IgnoredStopped)
	p.start(t)
	p.n.Step(hbm)
	p.take()
	before := p.n.Status()

	cases := []struct {
		name    string
		m       election.Message
		counter func(s election.Stats) uint64
	}{
		{"wrong To", election.Message{Type: election.MsgVote, From: 2, To: 3, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredWrongTo }},
		{"To is None", election.Message{Type: election.MsgVote, From: 2, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredWrongTo }},
		{"unknown sender", election.Message{Type: election.MsgVote, From: 9, To: 1, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredUnknown }},
		{"sender None", election.Message{Type: election.MsgHeartbeat, To: 1, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredUnknown }},
		{"from itself", election.Message{Type: election.MsgHeartbeat, From: 1, To: 1, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredUnknown }},
		{"zero type", election.Message{From: 2, To: 1, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredMalformed }},
		{"unknown type", election.Message{Type: 200, From: 2, To: 1, Term: 9}, func(s election.Stats) uint64 { return s.IgnoredMalformed }},
		{"request with term 0", election.Message{Type: election.MsgVote, From: 2, To: 1}, func(s election.Stats) uint64 { return s.IgnoredMalformed }},
		{"stale heartbeat", election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 2}, func(s election.Stats) uint64 { return s.IgnoredStale }},
		{"stale timeout-now", election.Message{Type: election.MsgTimeoutNow, From: 2, To: 1, Term: 1}, func(s election.Stats) uint64 { return s.IgnoredStale }},
		{"stale vote response", election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true}, func(s election.Stats) uint64 { return s.IgnoredStale }},
		{"unexpected vote response", election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 3, Granted: true}, func(s election.Stats) uint64 { return s.IgnoredOther }},
		{"unexpected pre-vote response", election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 4, Granted: true}, func(s election.Stats) uint64 { return s.IgnoredOther }},
		{"heartbeat response to a follower", election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 3, Granted: true}, func(s election.Stats) uint64 { return s.IgnoredOther }},
		{"second leader in a term", election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 3}, func(s election.Stats) uint64 { return s.Anomalies }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ignored := len(p.eventsOf(election.EventIgnored))
			c := tc.counter(p.n.Stats())
			require.NotPanics(t, func() { p.n.Step(tc.m) })
			require.Equal(t, c+1, tc.counter(p.n.Stats()))
			evs := p.eventsOf(election.EventIgnored)
			require.Len(t, evs, ignored+1)
			require.Equal(t, tc.m.From, evs[len(evs)-1].Peer)
			require.Equal(t, tc.m.Type, evs[len(evs)-1].Msg)
			require.Equal(t, before, p.n.Status(), "state unchanged")
			if tc.name != "stale heartbeat" {
				require.Empty(t, p.take())
			}
			p.take()
		})
	}
	p.n.Stop()
	p.n.Step(hbm)
	require.Equal(t, uint64(2), p.n.Stats().IgnoredStopped)
}

func TestRandomMessagesNeverPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	p := newProbe(t, func(c *election.Config) { c.PreVote, c.CheckQuorum, c.LeaderStickiness = true, true, true }).start(t)
	for range 20000 {
		m := election.Message{
			Type: election.MsgType(rng.IntN(10)), From: election.ID(rng.IntN(5)), To: election.ID(rng.IntN(3)),
			Term: uint64(rng.IntN(6)), LastLogIndex: uint64(rng.IntN(3)), LastLogTerm: uint64(rng.IntN(3)),
			Granted: rng.IntN(2) == 0, Transfer: rng.IntN(4) == 0,
		}
		require.NotPanics(t, func() { p.n.Step(m) })
		if rng.IntN(20) == 0 {
			p.v.AdvanceBy(time.Duration(rng.Int64N(int64(et))))
		}
	}
	c := electiontest.NewChecker(3)
	for _, e := range p.events {
		if e.Type != election.EventLeaderElected { // the fuzzer forges votes
			c.Observe(e)
		}
	}
	require.NoError(t, c.Err())
	s := p.n.Stats()
	require.Equal(t, uint64(20000), s.Received)
	require.NotZero(t, s.IgnoredWrongTo+s.IgnoredUnknown+s.IgnoredMalformed)
}

func TestStorageFailures(t *testing.T) {
	boom := errors.New("boom")

	// A vote that cannot be persisted is not granted and no reply leaves.
	p := newProbe(t, nil).start(t)
	p.st.SetSaveError(boom)
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 1})
	require.Empty(t, p.take())
	require.Equal(t, uint64(0), p.n.Status().Term, "term change not persisted, not applied")
	require.Equal(t, uint64(1), p.n.Stats().StorageErrors)
	require.Contains(t, p.eventsOf(election.EventIgnored)[0].Reason, "boom")

	// A candidate that cannot persist its own vote does not campaign.
	p.runToElection2(t, 3*et)
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.Empty(t, p.take())
	p.st.SetSaveError(nil)
	p.runToElection(t)

	// Start fails when Load fails.
	v := newVirtual(t)
	n, err := election.NewNode(validConfig(), v.Wheel, election.TransportFunc(func(election.Message) {}), failingLoad{}, election.StaticLog{})
	require.NoError(t, err)
	require.ErrorIs(t, n.Start(), boomLoad)
	require.Equal(t, uint64(1), n.Stats().StorageErrors)
}

// runToElection2 advances d and reports nothing; used where no election may happen.
func (p *probe) runToElection2(t *testing.T, d time.Duration) {
	t.Helper()
	p.v.AdvanceBy(d)
}

var boomLoad = errors.New("load failed")

type failingLoad struct{}

func (failingLoad) Load() (election.HardState, error) { return election.HardState{}, boomLoad }
func (failingLoad) Save(election.HardState) error     { return nil }

func TestLifecycleErrors(t *testing.T) {
	p := newProbe(t, nil)
	require.ErrorIs(t, p.n.Campaign(), election.ErrNotStarted)
	require.ErrorIs(t, p.n.TransferLeadership(2), election.ErrNotStarted)
	require.NoError(t, p.n.Start())
	require.ErrorIs(t, p.n.Start(), election.ErrAlreadyStarted)
	require.ErrorIs(t, p.n.TransferLeadership(2), election.ErrNotLeader)
	require.ErrorIs(t, p.n.BroadcastHeartbeat(), election.ErrNotLeader)
	p.elect(t)
	require.ErrorIs(t, p.n.Campaign(), election.ErrIsLeader)
	require.ErrorIs(t, p.n.TransferLeadership(9), election.ErrUnknownNode)
	p.take()
	require.NoError(t, p.n.TransferLeadership(1), "to itself: nothing")
	require.Empty(t, p.take())
	require.NoError(t, p.n.TransferLeadership(3))
	require.Equal(t, []election.Message{{Type: election.MsgTimeoutNow, From: 1, To: 3, Term: 1}}, p.take())
	p.n.Stop()
	p.n.Stop() // idempotent
	require.ErrorIs(t, p.n.Start(), election.ErrStopped)
	require.ErrorIs(t, p.n.Campaign(), election.ErrStopped)
	require.ErrorIs(t, p.n.TransferLeadership(2), election.ErrStopped)
	require.ErrorIs(t, p.n.BroadcastHeartbeat(), election.ErrStopped)
	require.True(t, p.n.Status().Stopped)
	// A stopped node's timers are gone: time passes without messages.
	p.v.AdvanceBy(10 * et)
	require.Empty(t, p.take())
}

func TestTimeoutNowCampaignsAtOnce(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.PreVote, c.Priority, c.Priorities = true, 1, map[election.ID]int{2: 100} }).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 4})
	p.take()
	p.n.Step(election.Message{Type: election.MsgTimeoutNow, From: 2, To: 1, Term: 4})
	st := p.n.Status()
	require.Equal(t, election.Candidate, st.Role, "no pre-vote, no priority skip")
	require.Equal(t, uint64(5), st.Term)
	for _, m := range p.take() {
		require.Equal(t, election.MsgVote, m.Type)
		require.True(t, m.Transfer)
		require.Equal(t, 1, m.Priority)
	}
}

func TestStickinessIgnoresVotesButNotTransfers(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.LeaderStickiness = true }).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	p.take()
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2})
	require.Equal(t, []election.Message{{Type: election.MsgVoteResp, From: 1, To: 3, Term: 1}}, p.take())
	require.Equal(t, uint64(1), p.n.Status().Term, "term of an ignored request is not adopted")
	require.Equal(t, uint64(1), p.n.Stats().LeaseRejections)
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2, Transfer: true})
	require.Equal(t, []election.Message{{Type: election.MsgVoteResp, From: 1, To: 3, Term: 2, Granted: true}}, p.take())
	// Once the leader is silent for ET, requests are considered again.
	p.v.AdvanceBy(et)
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 3})
	require.True(t, p.take()[0].Granted)
}

func TestPreVote(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.PreVote = true }).start(t)
	for p.n.Status().Role != election.PreCandidate {
		require.NotZero(t, p.v.AdvanceToNext())
	}
	require.Equal(t, uint64(0), p.n.Status().Term, "a pre-vote changes no term")
	msgs := p.take()
	require.Len(t, msgs, 2)
	require.Equal(t, election.Message{Type: election.MsgPreVote, From: 1, To: 2, Term: 1}, msgs[0])
	start := p.eventsOf(election.EventElectionStart)[0]
	require.True(t, start.PreVote)
	require.Equal(t, uint64(1), start.Term)
	// One grant makes a majority with the node's own: it campaigns for real.
	p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 3, To: 1, Term: 1, Granted: true})
	st := p.n.Status()
	require.Equal(t, election.Candidate, st.Role)
	require.Equal(t, uint64(1), st.Term)

	// Answering pre-votes: no term change, no vote recorded, refused while
	// a leader is alive.
	q := newProbe(t, func(c *election.Config) { c.PreVote = true }).start(t)
	q.n.Step(election.Message{Type: election.MsgPreVote, From: 2, To: 1, Term: 7})
	require.Equal(t, []election.Message{{Type: election.MsgPreVoteResp, From: 1, To: 2, Term: 7, Granted: true}}, q.take())
	require.Equal(t, election.HardState{}, must(q.st.Load()))
	q.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	q.take()
	q.n.Step(election.Message{Type: election.MsgPreVote, From: 2, To: 1, Term: 7})
	require.Equal(t, []election.Message{{Type: election.MsgPreVoteResp, From: 1, To: 2, Term: 1}}, q.take())
	require.Equal(t, "leader alive", q.eventsOf(election.EventVoteDenied)[0].Reason)
	// A rejection carrying a higher term makes a pre-candidate follow that term.
	q.v.AdvanceBy(3 * et)
	require.Equal(t, election.PreCandidate, q.n.Status().Role)
	q.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 6})
	require.Equal(t, election.Follower, q.n.Status().Role)
	require.Equal(t, uint64(6), q.n.Status().Term)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestStepDownWhenVoteTimedOut(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.PreVote, c.Emulate.StepDownWhenVoteTimedOut = true, true }).start(t)
	for p.n.Status().Role != election.PreCandidate {
		p.v.AdvanceToNext()
	}
	p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 1, Granted: true})
	require.Equal(t, election.Candidate, p.n.Status().Role)
	for p.n.Status().Role == election.Candidate {
		p.v.AdvanceToNext()
	}
	require.Equal(t, election.PreCandidate, p.n.Status().Role)
	require.Equal(t, uint64(1), p.n.Status().Term, "no new term without a pre-vote majority")
	sd := p.eventsOf(election.EventStepDown)
	require.Equal(t, "vote timed out", sd[len(sd)-1].Reason)
}

func TestCheckQuorumStepsDown(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.CheckQuorum = true }).start(t)
	p.elect(t)
	won := p.v.Now()
	// Node 2 answers every heartbeat: a quorum with the leader.
	for p.v.Now() < won+5*et {
		p.v.AdvanceToNext()
		p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 1, Granted: true})
	}
	require.Equal(t, election.Leader, p.n.Status().Role)
	// Silence: the leader steps down within lease + step-down interval.
	silent := p.v.Now()
	for p.n.Status().Role == election.Leader {
		p.v.AdvanceToNext()
	}
	require.LessOrEqual(t, p.v.Now()-silent, time.Duration(0.9*float64(et))+et/2)
	sd := p.eventsOf(election.EventStepDown)
	require.Contains(t, sd[0].Reason, "check quorum")
	require.Equal(t, election.ID(0), p.n.Status().Leader)
	// A higher term in a heartbeat response also deposes a leader.
	p = newProbe(t, nil).start(t)
	p.elect(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 3, To: 1, Term: 9})
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.Equal(t, uint64(9), p.n.Status().Term)
}

// TestCheckQuorumWaitsForUnansweredHeartbeats: a leader steps down for
// heartbeats its peers did not answer, not for heartbeats it did not send.
// With heartbeats rarer than the lease (as when a host's heartbeats run
// late), every answer is older than the lease at some checks, but every
// heartbeat was answered: the leader stays, without claiming a lease it
// does not hold; once a heartbeat goes unanswered it steps down.
func TestCheckQuorumWaitsForUnansweredHeartbeats(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.CheckQuorum = true
		c.HeartbeatInterval = et - et/50 // 98ms: longer than the 90ms lease
		c.HeartbeatJitter = repeated.None()
		c.StepDownInterval = et / 10
	}).start(t)
	p.elect(t)
	won := p.v.Now()
	lapsed := false
	for p.v.Now() < won+10*et {
		p.v.AdvanceToNext()
		for _, m := range p.take() {
			if m.Type == election.MsgHeartbeat && m.To == 2 {
				p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: m.Term, Granted: true})
			}
		}
		require.Equal(t, election.Leader, p.n.Status().Role, "at %v", p.v.Now()-won)
		lapsed = lapsed || !p.n.QuorumContact()
	}
	require.True(t, lapsed, "the lease lapsed between rare heartbeats")
	require.Empty(t, p.eventsOf(election.EventStepDown))
	// Node 2 stops answering: the leader steps down once a heartbeat has
	// gone unanswered for a heartbeat interval and the lease has passed.
	silent := p.v.Now()
	for p.n.Status().Role == election.Leader {
		p.v.AdvanceToNext()
	}
	require.LessOrEqual(t, p.v.Now()-silent, 2*et)
	require.Contains(t, p.eventsOf(election.EventStepDown)[0].Reason, "check quorum")
}

func TestSingleNodeElectsItself(t *testing.T) {
	for _, prevote := range []bool{false, true} {
		v := newVirtual(t)
		cfg := validConfig()
		cfg.Voters, cfg.PreVote = []election.ID{1}, prevote
		cfg.ElectionTimeout, cfg.HeartbeatInterval = et, hb
		n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) { t.Errorf("sent %v", m) }), election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		require.NoError(t, n.Start())
		v.AdvanceTo(2 * et)
		require.Equal(t, election.Leader, n.Status().Role)
		require.Equal(t, uint64(1), n.Status().Term)
		v.AdvanceTo(20 * et)
		require.Equal(t, election.Leader, n.Status().Role, "CheckQuorum: a single node is its own quorum")
		n.Stop()
	}
}

func TestEventsOrderAndSeq(t *testing.T) {
	v := newVirtual(t)
	var events []election.Event
	var eventsAtSend []int
	cfg := validConfig()
	cfg.Voters = []election.ID{1, 2}
	cfg.PreVote = false
	cfg.Observer = func(e election.Event) { events = append(events, e) }
	n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) {
		eventsAtSend = append(eventsAtSend, len(events))
	}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n.Start())
	require.NoError(t, n.Campaign())
	n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true})
	require.Equal(t, election.Leader, n.Status().Role)
	for i, e := range events {
		require.Equal(t, uint64(i+1), e.Seq)
		require.Equal(t, election.ID(1), e.Node)
	}
	var types []election.EventType
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Equal(t, []election.EventType{
		election.EventRoleChange,    // start
		election.EventTermChange,    // term 1
		election.EventRoleChange,    // candidate
		election.EventElectionStart, // campaign
		election.EventVoteGranted,   // self
		election.EventRoleChange,    // leader
		election.EventLeaderElected,
	}, types)
	// Events of a step reach the observer before its messages reach the transport.
	require.Equal(t, []int{5, 7}, eventsAtSend)
}

func TestPrioritySkipsAndDecays(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.Priority, c.Priorities = 10, map[election.ID]int{2: 100, 3: 40}
	}).start(t)
	at := p.runToElection(t)
	// Target 100 decays 100 -> 80 -> 64 -> 52 -> 42 -> 32 -> 22 -> 12 -> 2
	// at every second timeout: 15 skips, and the 16th timeout campaigns.
	require.Equal(t, uint64(15), p.n.Stats().PrioritySkips)
	require.GreaterOrEqual(t, at, 16*et)
	require.Less(t, at, 32*et)
	msgs := p.take()
	require.Equal(t, 10, msgs[0].Priority)
}

func TestSnapshotTimer(t *testing.T) {
	var calls []time.Duration
	var p *probe
	p = newProbe(t, func(c *election.Config) {
		c.SnapshotInterval = time.Second
		c.OnSnapshot = func() { calls = append(calls, p.v.Now()) }
	}).start(t)
	p.v.AdvanceTo(3500 * time.Millisecond)
	require.Len(t, calls, 3)
	require.GreaterOrEqual(t, calls[0], 500*time.Millisecond, "first period in [T/2, T)")
	require.Less(t, calls[0], time.Second)
	require.Equal(t, time.Second, calls[1]-calls[0])
	require.Equal(t, uint64(3), p.n.Stats().Snapshots)
	require.Len(t, p.eventsOf(election.EventSnapshot), 3)
}

// TestRealTimeCluster runs three nodes on a real-time wheel (timers on the
// wheel's goroutine, messages too), for the race detector; it waits for
// events, not for time.
func TestRealTimeCluster(t *testing.T) {
	w, err := wheel.New(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	net := election.NewMemNetwork(w, time.Millisecond)
	elected := make(chan election.Event, 16)
	voters := []election.ID{1, 2, 3}
	var nodes []*election.Node
	var mu sync.Mutex
	c := electiontest.NewChecker(3)
	for _, id := range voters {
		cfg := validConfig()
		cfg.ID, cfg.Voters = id, voters
		cfg.ElectionTimeout, cfg.HeartbeatInterval = 50*time.Millisecond, 10*time.Millisecond
		cfg.Rand = rand.New(rand.NewPCG(uint64(id), 1))
		cfg.Observer = func(e election.Event) {
			mu.Lock()
			c.Observe(e)
			mu.Unlock()
			if e.Type == election.EventLeaderElected {
				elected <- e
			}
		}
		n, err := election.NewNode(cfg, w, net, election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		net.Attach(n)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		require.NoError(t, n.Start())
	}
	var e election.Event
	select {
	case e = <-elected:
	case <-time.After(10 * time.Second):
		t.Fatal("no leader within 10s")
	}
	// Crash the leader: another one takes over.
	nodes[e.Node-1].Stop()
	net.Detach(e.Node)
	for {
		select {
		case e2 := <-elected:
			if e2.Node == e.Node {
				continue
			}
			require.Greater(t, e2.Term, e.Term)
		case <-time.After(10 * time.Second):
			t.Fatal("no second leader within 10s")
		}
		break
	}
	for _, n := range nodes {
		n.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, c.Err())
}

// TestLeaseRunsFromHeartbeatSendTime: the leader's lease (QuorumContact)
// runs from when the answered heartbeats were sent, not from when their
// answers arrived. A follower that answers refuses candidates for an
// election timeout from when it heard the heartbeat; an answer that spent
// half an election timeout in queues must not stretch the leader's lease
// past that promise. A new leader holds no lease until a quorum answered,
// and an answer that does not echo the send time never extends it.
func TestLeaseRunsFromHeartbeatSendTime(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.CheckQuorum = true
		c.HeartbeatInterval = et - et/50 // no second heartbeat within the lease
		c.HeartbeatJitter = repeated.None()
	}).start(t)
	p.elect(t)
	require.False(t, p.n.QuorumContact(), "no lease before a quorum answered a heartbeat")

	var hbTo2 election.Message
	for _, m := range p.take() {
		if m.Type == election.MsgHeartbeat && m.To == 2 {
			hbTo2 = m
		}
	}
	require.Equal(t, election.MsgHeartbeat, hbTo2.Type, "the new leader heartbeats at once")
	sent := hbTo2.Sent
	require.Equal(t, p.v.Now(), sent)

	// The answer arrives half an election timeout late.
	lease := time.Duration(float64(et) * 0.9)
	p.v.AdvanceTo(sent + et/2)
	p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: hbTo2.Term, Granted: true, Sent: sent})
	require.True(t, p.n.QuorumContact(), "a quorum answered a heartbeat sent within the lease")
	p.v.AdvanceTo(sent + lease - time.Microsecond)
	require.True(t, p.n.QuorumContact())
	p.v.AdvanceTo(sent + lease)
	p.take()
	require.False(t, p.n.QuorumContact(), "the lease ends a lease after the heartbeat was sent (exclusive), not after the answer arrived")

	// An answer without the send time counts for CheckQuorum, not for the
	// lease.
	p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: hbTo2.Term, Granted: true})
	require.False(t, p.n.QuorumContact())
	require.Equal(t, election.Leader, p.n.Status().Role)
}
