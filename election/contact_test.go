package election_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// extContact configures a probe for Config.ExternalContact.
func extContact(c *election.Config) {
	c.Detection = election.ContactDeadline
	c.ExternalContact = true
}

func TestExternalContactConfig(t *testing.T) {
	for name, edit := range map[string]func(c *election.Config){
		"detection":  func(c *election.Config) { c.ExternalContact = true },
		"serverlock": func(c *election.Config) { extContact(c); c.Emulate.ServerLock = &fakeLock{} },
	} {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
		edit(&cfg)
		_, err := election.NewNode(cfg, newVirtual(t).Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
		require.ErrorIs(t, err, election.ErrInvalidConfig, name)
		require.ErrorContains(t, err, "ExternalContact", name)
	}
}

// TestTryHeartbeatGate checks when TryHeartbeat accepts a heartbeat: only
// its leader's, in its term, after the node stepped one of them and did
// nothing else since (every call that locks the node closes the gate);
// and that a follower that heard its leader keeps no election timer.
func TestTryHeartbeatGate(t *testing.T) {
	p := newProbe(t, extContact).start(t)
	hb1 := election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1}
	require.False(t, p.n.TryHeartbeat(2, 1, p.v.Now()), "before any heartbeat was stepped")
	_, armed, _, _ := p.n.TimerDeadlines()
	require.True(t, armed, "no leader heard: the election timer runs")

	p.n.Step(hb1)
	require.Len(t, p.take(), 1, "the stepped heartbeat is answered")
	_, armed, _, _ = p.n.TimerDeadlines()
	require.False(t, armed, "a follower that heard its leader is parked")
	require.False(t, p.n.TryHeartbeat(2, 1, p.v.Now()), "the leader became known (an event): not opened")
	p.n.Step(hb1)
	require.True(t, p.n.TryHeartbeat(2, 1, p.v.Now()), "opened by a heartbeat answered at once")
	_ = p.n.Status()
	require.False(t, p.n.TryHeartbeat(2, 1, p.v.Now()), "closed by a call that locked the node")

	p.n.Step(hb1)
	p.take()
	require.False(t, p.n.TryHeartbeat(3, 1, p.v.Now()), "not the leader")
	require.False(t, p.n.TryHeartbeat(2, 2, p.v.Now()), "not the term")
	for range 5 {
		p.v.AdvanceBy(hb)
		require.True(t, p.n.TryHeartbeat(2, 1, p.v.Now()))
	}
	require.Empty(t, p.take(), "the caller answers")
	last := p.v.Now()
	st := p.n.Status()
	require.Equal(t, last, st.LastContact, "taken in when the gate closes")
	s := p.n.Stats()
	require.EqualValues(t, 9, s.Received) // three stepped, six lock-free
	require.EqualValues(t, 9, s.Sent)
}

// TestTryHeartbeatKeepsThePromise checks that a heartbeat TryHeartbeat
// answered extends the follower's promise to the lease: a vote request
// an ElectionTimeout after the last stepped heartbeat, but within one of
// the last answered lock-free, is refused.
func TestTryHeartbeatKeepsThePromise(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { extContact(c); c.CheckQuorum = true }).start(t)
	// The first heartbeat makes the leader known (an event): the second
	// opens the gate.
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	stepped := p.v.Now()
	p.v.AdvanceBy(et / 2)
	require.True(t, p.n.TryHeartbeat(3, 1, p.v.Now()))
	answered := p.v.Now()
	p.v.AdvanceTo(stepped + et)
	require.False(t, p.voteFrom3(2), "within ElectionTimeout of the heartbeat answered lock-free")
	p.v.AdvanceTo(answered + et)
	require.True(t, p.voteFrom3(2), "an ElectionTimeout later: granted")
}

// TestTryHeartbeatLosesToTheLock checks TryHeartbeat against a vote
// granted between its first look at the gate and its record: it must not
// answer, since the node's promise did not count its contact.
func TestTryHeartbeatLosesToTheLock(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { extContact(c); c.CheckQuorum = true }).start(t)
	for range 2 {
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	}
	p.v.AdvanceBy(et)
	granted := false
	defer election.SetTryHeartbeatHook(func() { granted = p.voteFrom3(2) })()
	require.False(t, p.n.TryHeartbeat(3, 1, p.v.Now()), "answered a leader after voting for another")
	require.True(t, granted, "the promise had run out: granted")
}

// TestSuperviseContact checks the supervision of a parked follower: no
// timer while its leader heartbeats; once the leader is silent, the
// caller's SuperviseContact arms the timer and the follower campaigns
// exactly an election timeout (no jitter) after the last contact; a
// contact after the timer was armed parks it again.
func TestSuperviseContact(t *testing.T) {
	const tick = hb
	within := et - 2*tick
	p := newProbe(t, func(c *election.Config) { extContact(c); c.ElectionJitter = repeated.None() }).start(t)
	hb2 := election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1}
	p.n.Step(hb2)
	for range 20 {
		p.v.AdvanceBy(tick)
		p.n.SuperviseContact(p.v.Now(), within)
		if !p.n.TryHeartbeat(2, 1, p.v.Now()) {
			p.n.Step(hb2)
		}
	}
	_, armed, _, _ := p.n.TimerDeadlines()
	require.False(t, armed, "heard every tick: parked")

	// The leader goes silent; the supervision arms the timer.
	last := p.v.Now()
	for p.n.Status().Role == election.Follower {
		require.Less(t, p.v.Now(), last+2*et, "no election")
		p.v.AdvanceBy(tick)
		p.n.SuperviseContact(p.v.Now(), within)
	}
	require.Equal(t, election.Candidate, p.n.Status().Role)
	require.Equal(t, last+et, p.eventsOf(election.EventElectionStart)[0].At, "an election timeout after the last contact")

	// Armed, then the leader is heard again: parked again when the timer
	// fires and finds the contact.
	q := newProbe(t, func(c *election.Config) { extContact(c); c.ElectionJitter = repeated.None() }).start(t)
	q.n.Step(hb2)
	q.v.AdvanceBy(within + 1)
	q.n.SuperviseContact(q.v.Now(), within)
	_, armed, _, _ = q.n.TimerDeadlines()
	require.True(t, armed, "contact older than within: armed")
	q.v.AdvanceBy(tick)
	q.n.Step(hb2) // the gate was closed by the supervision's lock
	q.v.AdvanceBy(et)
	_, armed, _, _ = q.n.TimerDeadlines()
	require.False(t, armed, "fired, found the contact, parked")
	require.Equal(t, election.Follower, q.n.Status().Role)
	require.Zero(t, q.n.Stats().Elections)
}

// TestSuperviseContactJitter checks that a supervised follower campaigns
// within [ET, 2ET) of its leader's last heartbeat, the timeout drawn
// afresh, on many seeds.
func TestSuperviseContactJitter(t *testing.T) {
	const tick = hb
	seen := map[time.Duration]bool{}
	for seed := range uint64(20) {
		p := newProbe(t, func(c *election.Config) { extContact(c); c.Rand = rand.New(rand.NewPCG(seed, 1)) }).start(t)
		for range 2 { // the first makes the leader known, the second opens the gate
			p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
		}
		for i := 1; i <= 15; i++ {
			p.v.AdvanceBy(tick)
			p.n.SuperviseContact(p.v.Now(), et-2*tick)
			require.True(t, p.n.TryHeartbeat(2, 1, p.v.Now()), "seed %d", seed)
		}
		last := p.v.Now()
		for p.n.Status().Role == election.Follower {
			require.Less(t, p.v.Now(), last+3*et, "seed %d: no election", seed)
			p.v.AdvanceBy(tick)
			p.n.SuperviseContact(p.v.Now(), et-2*tick)
		}
		at := p.eventsOf(election.EventElectionStart)[0].At
		require.GreaterOrEqual(t, at-last, et, "seed %d", seed)
		require.Less(t, at-last, 2*et, "seed %d", seed)
		seen[at-last] = true
	}
	require.Greater(t, len(seen), 10, "the timeouts are random")
}

// TestTryHeartbeatRacesTheLock runs TryHeartbeat against calls that lock
// the node (run it with -race): every contact it answered is the node's
// by the time a later lock is taken.
func TestTryHeartbeatRacesTheLock(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { extContact(c); c.CheckQuorum = true }).start(t)
	hb3 := election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1}
	p.n.Step(hb3)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = p.n.Status()
			}
		}
	})
	answered := 0
	for i := range 2000 {
		p.v.AdvanceBy(time.Microsecond)
		now := p.v.Now()
		if p.n.TryHeartbeat(3, 1, now) {
			answered++
			require.GreaterOrEqual(t, p.n.Status().LastContact, now, "heartbeat %d", i)
		} else {
			p.n.Step(hb3)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d of 2000 answered lock-free", answered)
}

// extLeader is a probe leading term 1 with the host-driven modes a
// multiraft host uses: heartbeats and CheckQuorum from LeaderTick,
// answers taken lock-free.
func extLeader(t *testing.T) *probe {
	p := newProbe(t, func(c *election.Config) {
		extContact(c)
		c.CheckQuorum, c.ExternalHeartbeat, c.ExternalCheckQuorum = true, true, true
	}).start(t)
	p.elect(t)
	return p
}

// TestTryHeartbeatRespGate checks when a leader takes answers lock-free:
// after a LeaderTick or a stepped answer, in its term, from a voter, and
// not after anything else locked it.
func TestTryHeartbeatRespGate(t *testing.T) {
	p := extLeader(t)
	term := p.n.Status().Term
	now := p.v.Now()
	require.False(t, p.n.TryHeartbeatResp(2, term, now, now), "no tick since the election")
	_, err := p.n.LeaderTick(now, nil)
	require.NoError(t, err)
	require.True(t, p.n.TryHeartbeatResp(2, term, now, now))
	require.False(t, p.n.TryHeartbeatResp(2, term+1, now, now), "not the term")
	require.False(t, p.n.TryHeartbeatResp(9, term, now, now), "not a voter")
	require.False(t, p.n.TryHeartbeatResp(election.None, term, now, now), "no sender")
	_ = p.n.Status()
	require.False(t, p.n.TryHeartbeatResp(3, term, now, now), "closed by a call that locked the node")
	before := p.n.Stats().Received
	p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 3, To: 1, Term: term, Granted: true, Sent: now})
	require.True(t, p.n.TryHeartbeatResp(3, term, now, now), "opened by a stepped answer")
	require.True(t, p.n.TryHeartbeatResp(2, term, now, now))
	require.Equal(t, before+3, p.n.Stats().Received, "one stepped, two lock-free")
}

// TestTryHeartbeatAnswerFirst: TryHeartbeatAnswer reports an answer as
// first only for the first one a peer sent to a heartbeat sent at that
// time or later, so that a host's per-tick tally counts a repeated answer
// once, and one to an older heartbeat not at all.
func TestTryHeartbeatAnswerFirst(t *testing.T) {
	p := extLeader(t)
	term := p.n.Status().Term
	p.v.AdvanceBy(hb)
	at := p.v.Now()
	_, err := p.n.LeaderTick(at, nil)
	require.NoError(t, err)
	p.v.AdvanceBy(hb / 4)
	now := p.v.Now()
	for _, tc := range []struct {
		from        election.ID
		sent        time.Duration
		took, first bool
		why         string
	}{
		{2, at, true, true, "node 2's answer"},
		{2, at, true, false, "node 2's answer again"},
		{2, at - hb, true, false, "node 2's answer to an older heartbeat"},
		{3, at, true, true, "node 3's answer"},
		{3, 0, true, false, "no send time"},
		{3, now + 1, true, false, "a send time after the answer"},
	} {
		took, first := p.n.TryHeartbeatAnswer(tc.from, term, tc.sent, now)
		require.Equal(t, tc.took, took, tc.why)
		require.Equal(t, tc.first, first, tc.why)
	}
	require.Equal(t, election.Leader, p.n.Status().Role)
}

// TestTryHeartbeatRespCounts checks that the answers a leader took
// lock-free count as stepped ones do: CheckQuorum keeps it leading while
// a peer answers every tick and steps it down once no peer does, and the
// lease (QuorumContact) runs from the answered heartbeats' send time.
func TestTryHeartbeatRespCounts(t *testing.T) {
	p := extLeader(t)
	term := p.n.Status().Term
	for i := range 20 {
		p.v.AdvanceBy(hb)
		now := p.v.Now()
		out, err := p.n.LeaderTick(now, nil)
		require.NoError(t, err, "tick %d", i)
		require.Len(t, out, 2)
		p.v.AdvanceBy(hb / 4)
		require.True(t, p.n.TryHeartbeatResp(2, term, now, p.v.Now()), "tick %d", i)
		require.True(t, p.n.QuorumContact(), "tick %d: leased by node 2's answer", i)
		// QuorumContact locked the node: the next answer waits for the
		// next tick's gate, as a host's would.
	}
	require.Equal(t, election.Leader, p.n.Status().Role)
	for i := 0; p.n.Status().Role == election.Leader; i++ {
		require.Less(t, i, 20, "no step-down without answers")
		p.v.AdvanceBy(hb)
		_, _ = p.n.LeaderTick(p.v.Now(), nil)
	}
	sd := p.eventsOf(election.EventStepDown)
	require.Len(t, sd, 1)
	require.Contains(t, sd[0].Reason, election.ReasonCheckQuorum)
}
