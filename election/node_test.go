package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

func newVirtual(tb testing.TB) *wheel.Virtual {
	tb.Helper()
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(tb, err)
	return v
}

const (
	et = 100 * time.Millisecond
	hb = 20 * time.Millisecond
)

// probe is node 1 of the group {1, 2, 3}, alone on a virtual wheel: the
// test plays nodes 2 and 3 by hand and sees every message and event.
type probe struct {
	n      *election.Node
	v      *wheel.Virtual
	st     *election.MemoryStorage
	log    *mutableLog
	msgs   []election.Message
	events []election.Event
}

func newProbe(t *testing.T, edit func(c *election.Config)) *probe {
	t.Helper()
	p := &probe{v: newVirtual(t), st: election.NewMemoryStorage(), log: &mutableLog{}}
	cfg := election.DefaultConfig()
	cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
	cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
	cfg.ElectionTimeout, cfg.HeartbeatInterval, cfg.VoteTimeout = et, hb, et
	cfg.StepDownInterval = et / 2
	cfg.PreVote, cfg.CheckQuorum = false, false
	cfg.Rand = rand.New(rand.NewPCG(7, 7))
	cfg.Observer = func(e election.Event) { p.events = append(p.events, e) }
	if edit != nil {
		edit(&cfg)
	}
	var err error
	p.n, err = election.NewNode(cfg, p.v.Wheel, election.TransportFunc(func(m election.Message) { p.msgs = append(p.msgs, m) }), p.st, p.log)
	require.NoError(t, err)
	return p
}

func (p *probe) start(t *testing.T) *probe {
	t.Helper()
	require.NoError(t, p.n.Start())
	return p
}

// take returns and forgets the messages sent so far.
func (p *probe) take() []election.Message {
	m := p.msgs
	p.msgs = nil
	return m
}

func (p *probe) eventsOf(typ election.EventType) []election.Event {
	var out []election.Event
	for _, e := range p.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// runToElection advances until node 1 becomes candidate and returns when.
func (p *probe) runToElection(t *testing.T) time.Duration {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if p.n.Status().Role == election.Candidate {
			return p.v.Now()
		}
		require.NotZero(t, p.v.AdvanceToNext(), "wheel idle")
	}
	t.Fatal("no election")
	return 0
}

// elect makes node 1 leader of term 1.
func (p *probe) elect(t *testing.T) {
	t.Helper()
	p.runToElection(t)
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: p.n.Status().Term, Granted: true})
	require.Equal(t, election.Leader, p.n.Status().Role)
}

func TestFollowerCampaignsAfterRandomTimeout(t *testing.T) {
	p := newProbe(t, nil).start(t)
	at := p.runToElection(t)
	require.GreaterOrEqual(t, at, et)
	require.Less(t, at, 2*et)
	st := p.n.Status()
	require.Equal(t, uint64(1), st.Term)
	require.Equal(t, election.ID(1), st.Vote)
	hs, err := p.st.Load()
	require.NoError(t, err)
	require.Equal(t, election.HardState{Term: 1, Vote: 1}, hs, "own vote persisted before requests leave")
	msgs := p.take()
	require.Len(t, msgs, 2)
	for i, to := range []election.ID{2, 3} {
		require.Equal(t, election.Message{Type: election.MsgVote, From: 1, To: to, Term: 1}, msgs[i])
	}
	// The self vote is reported.
	require.Equal(t, election.ID(1), p.eventsOf(election.EventVoteGranted)[0].Peer)
}

func TestVoteTimeoutStartsNewTermWithFreshTimeout(t *testing.T) {
	p := newProbe(t, nil).start(t)
	prev := p.runToElection(t)
	var gaps []time.Duration
	for term := uint64(2); term <= 8; term++ {
		for p.n.Status().Term < term {
			require.NotZero(t, p.v.AdvanceToNext())
		}
		require.Equal(t, election.Candidate, p.n.Status().Role)
		gaps = append(gaps, p.v.Now()-prev)
		prev = p.v.Now()
	}
	distinct := map[time.Duration]bool{}
	for _, g := range gaps {
		require.GreaterOrEqual(t, g, et)
		require.Less(t, g, 2*et)
		distinct[g] = true
	}
	require.Greater(t, len(distinct), 3, "each round is randomized afresh: %v", gaps)
}

func TestHeartbeatsResetElectionTimer(t *testing.T) {
	p := newProbe(t, nil).start(t)
	// A leader (node 2) heartbeats every 0.9 ET for 20 ET: no election.
	for i := 1; i <= 22; i++ {
		p.v.AdvanceTo(time.Duration(i) * 9 * et / 10)
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	}
	st := p.n.Status()
	require.Equal(t, election.Follower, st.Role)
	require.Equal(t, election.ID(2), st.Leader)
	require.Equal(t, p.v.Now(), st.LastContact)
	known := p.eventsOf(election.EventLeaderKnown)
	require.Len(t, known, 1, "only the first heartbeat of a leader is reported")
	require.Equal(t, election.ID(2), known[0].Leader)
	require.Equal(t, time.Duration(9*et/10), known[0].At)
	resps := p.take()
	require.Len(t, resps, 22)
	require.Equal(t, election.Message{Type: election.MsgHeartbeatResp, From: 1, To: 2, Term: 1, Granted: true}, resps[0])
	// The leader dies: the election follows within [ET, 2ET) of the last heartbeat.
	last := p.v.Now()
	at := p.runToElection(t)
	require.GreaterOrEqual(t, at-last, et)
	require.Less(t, at-last, 2*et)
}

func TestCheckLastContactMode(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.Detection = election.CheckLastContact }).start(t)
	for i := 1; i <= 22; i++ {
		p.v.AdvanceTo(time.Duration(i) * et / 2)
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	}
	require.Equal(t, election.Follower, p.n.Status().Role)
	last := p.v.Now()
	at := p.runToElection(t)
	// The free-running timer notices at its first fire at least ET after the contact.
	require.GreaterOrEqual(t, at-last, et)
	require.Less(t, at-last, 3*et)
}

func TestLeaderHeartbeatsImmediatelyThenEveryInterval(t *testing.T) {
	p := newProbe(t, nil).start(t)
	p.runToElection(t)
	p.take()
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 3, To: 1, Term: 1, Granted: true})
	won := p.v.Now()
	elected := p.eventsOf(election.EventLeaderElected)
	require.Len(t, elected, 1)
	require.Equal(t, uint64(1), elected[0].Term)
	hbs := p.take()
	require.Len(t, hbs, 2)
	require.Equal(t, election.MsgHeartbeat, hbs[0].Type)
	for i := 1; i <= 5; i++ {
		p.v.AdvanceTo(won + time.Duration(i)*hb)
		got := p.take()
		require.Len(t, got, 2, "round %d", i)
		require.Equal(t, election.Message{Type: election.MsgHeartbeat, From: 1, To: 3, Term: 1, Sent: p.v.Now()}, got[1])
	}
	// A forced heartbeat goes out now and shifts the schedule.
	p.v.AdvanceBy(hb / 2)
	forced := p.v.Now()
	require.NoError(t, p.n.BroadcastHeartbeat())
	require.Len(t, p.take(), 2)
	p.v.AdvanceTo(forced + hb - 1)
	require.Empty(t, p.take())
	p.v.AdvanceTo(forced + hb)
	require.Len(t, p.take(), 2)
	// Late or duplicate votes change nothing.
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true})
	require.Equal(t, election.Leader, p.n.Status().Role)
}

func TestCandidateStepsDownOnLeaderHeartbeatAndLostElection(t *testing.T) {
	p := newProbe(t, nil).start(t)
	p.runToElection(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	st := p.n.Status()
	require.Equal(t, election.Follower, st.Role)
	require.Equal(t, election.ID(3), st.Leader)
	require.Equal(t, "leader heartbeat", p.eventsOf(election.EventStepDown)[0].Reason)

	p = newProbe(t, nil).start(t)
	p.runToElection(t)
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1})
	require.Equal(t, election.Candidate, p.n.Status().Role, "one rejection of three is not a loss")
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 3, To: 1, Term: 1})
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.Equal(t, "lost election", p.eventsOf(election.EventStepDown)[0].Reason)
}

func TestVoteRules(t *testing.T) {
	vote := func(from election.ID, term, idx, lterm uint64) election.Message {
		return election.Message{Type: election.MsgVote, From: from, To: 1, Term: term, LastLogIndex: idx, LastLogTerm: lterm}
	}
	type step struct {
		m       election.Message
		granted bool
		term    uint64 // term of the response
	}
	cases := []struct {
		name  string
		log   mutableLog
		steps []step
	}{
		{"grant a fresh candidate", mutableLog{}, []step{{vote(2, 1, 0, 0), true, 1}}},
		{"one vote per term", mutableLog{}, []step{{vote(2, 1, 0, 0), true, 1}, {vote(3, 1, 0, 0), false, 1}}},
		{"same candidate again (duplicate)", mutableLog{}, []step{{vote(2, 1, 0, 0), true, 1}, {vote(2, 1, 0, 0), true, 1}}},
		{"new term, new vote", mutableLog{}, []step{{vote(2, 1, 0, 0), true, 1}, {vote(3, 2, 0, 0), true, 2}}},
		{"stale term", mutableLog{}, []step{{vote(2, 3, 0, 0), true, 3}, {vote(3, 2, 0, 0), false, 3}}},
		{"candidate's last term older", mutableLog{index: 5, term: 3}, []step{{vote(2, 4, 9, 2), false, 4}}},
		{"same last term, shorter log", mutableLog{index: 5, term: 3}, []step{{vote(2, 4, 4, 3), false, 4}}},
		{"same last term, same length", mutableLog{index: 5, term: 3}, []step{{vote(2, 4, 5, 3), true, 4}}},
		{"newer last term, shorter log", mutableLog{index: 5, term: 3}, []step{{vote(2, 4, 1, 4), true, 4}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, nil).start(t)
			*p.log = tc.log
			for i, s := range tc.steps {
				p.n.Step(s.m)
				out := p.take()
				require.Len(t, out, 1, "step %d", i)
				require.Equal(t, election.MsgVoteResp, out[0].Type)
				require.Equal(t, s.m.From, out[0].To)
				require.Equal(t, s.granted, out[0].Granted, "step %d", i)
				require.Equal(t, s.term, out[0].Term, "step %d", i)
				if s.granted {
					hs, _ := p.st.Load()
					require.Equal(t, election.HardState{Term: s.m.Term, Vote: s.m.From}, hs)
				}
			}
		})
	}
}

func TestHigherTermDeposesLeader(t *testing.T) {
	p := newProbe(t, nil).start(t)
	p.elect(t)
	p.take()
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5})
	st := p.n.Status()
	require.Equal(t, election.Follower, st.Role)
	require.Equal(t, uint64(5), st.Term)
	require.Equal(t, election.ID(2), st.Vote)
	require.Equal(t, "higher term", p.eventsOf(election.EventStepDown)[0].Reason)
	// A stale heartbeat is answered with the current term, so the old leader steps down too.
	p.take()
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	require.Equal(t, []election.Message{{Type: election.MsgHeartbeatResp, From: 1, To: 3, Term: 5}}, p.take())
	require.Equal(t, int64(1), p.n.Stats().IgnoredStale)
}

// orderedStorage fails the test if a vote reply left before Save.
type orderedStorage struct {
	election.MemoryStorage
	sent func() []election.Message
	t    *testing.T
}

func (s *orderedStorage) Save(hs election.HardState) error {
	for _, m := range s.sent() {
		if m.Type == election.MsgVoteResp && m.Term >= hs.Term {
			s.t.Errorf("vote reply %v sent before %+v was saved", m, hs)
		}
	}
	return s.MemoryStorage.Save(hs)
}

func TestHardStatePersistedBeforeReply(t *testing.T) {
	v := newVirtual(t)
	var sent []election.Message
	st := &orderedStorage{sent: func() []election.Message { return sent }, t: t}
	cfg := validConfig()
	cfg.ElectionTimeout, cfg.HeartbeatInterval = et, hb
	n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) { sent = append(sent, m) }), st, election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n.Start())
	for term := uint64(1); term <= 5; term++ {
		n.Step(election.Message{Type: election.MsgVote, From: election.ID(2 + term%2), To: 1, Term: term})
	}
	require.Len(t, sent, 5)
	require.Equal(t, int64(5), st.Saves())
}

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
	require.Equal(t, int64(3), p.n.Stats().Snapshots)
	require.Len(t, p.eventsOf(election.EventSnapshot), 3)
}
