package election_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/logging"
	"github.com/raftick/raftick/repeated"
)

// defaultOpts makes a cluster of n nodes on DefaultConfig with an election
// timeout of 10ms (the derived timeouts follow it).
func defaultOpts(n int, seed uint64) clusterOpts {
	return clusterOpts{n: n, delay: 100 * time.Microsecond, seed: seed, config: func(cfg *election.Config) {
		d := election.DefaultConfig()
		cfg.PreVote, cfg.CheckQuorum, cfg.LeaderStickiness = d.PreVote, d.CheckQuorum, d.LeaderStickiness
		cfg.ElectionTimeout = 10 * time.Millisecond
	}}
}

// stepAndCheckLeases advances c in steps of step until until, checking the
// lease invariant after each step.
func (c *cluster) stepAndCheckLeases(until, step time.Duration) {
	for c.v.Now() < until {
		c.v.AdvanceTo(min(c.v.Now()+step, until))
		c.checkLeases()
	}
}

// TestLeaseSoundWithDefaultConfig is issue 32's first defect: with
// DefaultConfig (PreVote and CheckQuorum on, LeaderStickiness off), the
// link between nodes 1 and 2 cut, and both campaigning at once, node 2
// used to become a candidate whose vote timer started term 2 without a
// pre-vote, and node 3, which had just answered leader 1, granted it:
// node 2 led term 2 while node 1 still held its lease in term 1.
func TestLeaseSoundWithDefaultConfig(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		c := newCluster(t, defaultOpts(3, seed))
		c.startAll(t)
		c.net.Cut(1, 2)
		c.net.Cut(2, 1)
		require.NoError(t, c.nodes[1].Campaign())
		require.NoError(t, c.nodes[2].Campaign())
		c.stepAndCheckLeases(500*time.Millisecond, 50*time.Microsecond)
		require.NoError(t, c.check.Err(), "seed %d", seed)
		require.NotZero(t, c.check.Elected(), "seed %d", seed)
	}
}

// TestPartitionedCandidateKeepsItsTerm is issue 32's third defect: a node
// that won its pre-vote and was then cut off used to start a new term at
// every vote timeout without pre-voting (term 1 to 34 in 500ms with an
// election timeout of 10ms), and its term deposed the healthy leader of
// the others when the partition healed. With PreVote a timed-out
// candidate goes back through pre-vote, as etcd's does.
func TestPartitionedCandidateKeepsItsTerm(t *testing.T) {
	c := newCluster(t, defaultOpts(3, 1))
	c.leases = true
	c.startAll(t)
	require.NoError(t, c.nodes[2].Campaign())
	c.runUntil(time.Second, func() bool { return c.nodes[2].Status().Role == election.Candidate })
	require.Equal(t, election.Candidate, c.nodes[2].Status().Role)
	c.net.Isolate(2, c.ids...) // its vote requests are still on their way: lost
	c.runUntil(500*time.Millisecond, func() bool { return false })
	st := c.nodes[2].Status()
	require.Equal(t, uint64(1), st.Term, "the cut-off candidate's term")
	require.Equal(t, election.PreCandidate, st.Role)
	leader, ok := c.stableLeaderOf(1, 3)
	require.True(t, ok, "the others elect a leader")
	term := c.nodes[leader].Status().Term

	c.net.Heal()
	c.runUntil(time.Second, func() bool { return false })
	for _, id := range c.ids {
		st := c.nodes[id].Status()
		require.Equal(t, term, st.Term, "n%d", id)
		require.Equal(t, leader, st.Leader, "n%d follows the leader it had", id)
	}
	require.Equal(t, 1, c.check.Elected(), "one election in all")
	require.NoError(t, c.check.Err())
}

// stableLeaderOf returns the leader that all of ids follow in one term.
func (c *cluster) stableLeaderOf(ids ...election.ID) (election.ID, bool) {
	var leader election.ID
	var term uint64
	for i, id := range ids {
		st := c.nodes[id].Status()
		if st.Leader == election.None || (i > 0 && (st.Leader != leader || st.Term != term)) {
			return election.None, false
		}
		leader, term = st.Leader, st.Term
	}
	return leader, c.nodes[leader].Status().Role == election.Leader
}

// voteFrom3 steps a vote request of node 3 in term into p's node and
// reports whether it was granted.
func (p *probe) voteFrom3(term uint64) bool {
	p.take()
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: term})
	for _, m := range p.take() {
		if m.Type == election.MsgVoteResp {
			return m.Granted
		}
	}
	return false
}

// TestPromiseToTheLease: where a lease is offered (CheckQuorum here), a
// node that heard a leader refuses votes for an ElectionTimeout, even
// after adopting a higher term from an answer, and after a restart; it
// does not vote for itself in that time either.
func TestPromiseToTheLease(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.CheckQuorum = true }).start(t)
	require.True(t, p.voteFrom3(1), "no leader heard: granted")
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	p.v.AdvanceBy(et / 4)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 3})
	heard := p.v.Now()
	require.False(t, p.voteFrom3(4), "refused within ET of the leader's heartbeat")
	require.Equal(t, uint64(3), p.n.Status().Term, "a refused request's term is not adopted")
	// A late rejection of an old round carries a higher term.
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 5})
	require.Equal(t, uint64(5), p.n.Status().Term)
	require.Equal(t, election.None, p.n.Status().Leader)
	require.False(t, p.voteFrom3(6), "the promise outlives the term it was made in")
	require.ErrorIs(t, p.n.Campaign(), election.ErrLeaderAlive, "nor its own vote")
	p.v.AdvanceTo(heard + et)
	require.True(t, p.voteFrom3(6), "an ElectionTimeout later: granted")

	// A restarted node may have answered a leader just before it stopped.
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 6})
	p.n.Stop()
	q := newProbe(t, func(c *election.Config) { c.CheckQuorum = true })
	q.st = p.st
	q.n = must(election.NewNode(q.n.Config(), q.v.Wheel, election.TransportFunc(func(m election.Message) { q.msgs = append(q.msgs, m) }), p.st, q.log))
	q.start(t)
	started := q.v.Now()
	require.False(t, q.voteFrom3(7), "refused within ET of the restart")
	q.v.AdvanceTo(started + et - 1)
	require.False(t, q.voteFrom3(7))
	q.v.AdvanceTo(started + et)
	require.True(t, q.voteFrom3(7))

	// Without CheckQuorum or LeaderStickiness no lease is offered and
	// votes are granted as the Raft paper's are.
	r := newProbe(t, nil).start(t)
	r.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 1})
	require.True(t, r.voteFrom3(2))
}

// TestPreVoteWonWithinPromise: with PreVote, Campaign within a promise
// runs the pre-vote, but winning it starts no term.
func TestPreVoteWonWithinPromise(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.CheckQuorum, c.PreVote = true, true }).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	require.NoError(t, p.n.Campaign())
	require.Equal(t, election.PreCandidate, p.n.Status().Role)
	p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 3, To: 1, Term: 2, Granted: true})
	st := p.n.Status()
	require.Equal(t, election.Follower, st.Role)
	require.Equal(t, uint64(1), st.Term, "no new term")
	require.Equal(t, "leader alive", p.eventsOf(election.EventStepDown)[0].Reason)
}

// TestLeaseOffered: QuorumContact is false unless the configuration makes
// the lease sound (CheckQuorum or LeaderStickiness), and false after the
// leader started a transfer.
func TestLeaseOffered(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cq, sticky  bool
		wantOffered bool
	}{{"neither", false, false, false}, {"check quorum", true, false, true}, {"stickiness", false, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, func(c *election.Config) { c.CheckQuorum, c.LeaderStickiness = tc.cq, tc.sticky }).start(t)
			p.elect(t)
			p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 1, Granted: true, Sent: p.v.Now()})
			require.Equal(t, tc.wantOffered, p.n.QuorumContact())
			require.NoError(t, p.n.TransferLeadership(3))
			require.False(t, p.n.QuorumContact(), "no lease once a transfer started")
			p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 1, Granted: true, Sent: p.v.Now()})
			require.False(t, p.n.QuorumContact())
			require.Equal(t, election.Leader, p.n.Status().Role)
		})
	}
}

// TestDefaultLoggerIsNotSilent is issue 35: with a Config that sets no
// Logger, a failure is logged to standard error (warnings and errors
// only); hclog.NewNullLogger() silences a node on purpose.
func TestDefaultLoggerIsNotSilent(t *testing.T) {
	var out bytes.Buffer
	restore := logging.SetOutput(&out)
	defer restore()
	v := newVirtual(t)
	defer v.Stop()
	run := func(logger hclog.Logger) {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
		cfg.PreVote = false
		cfg.Logger = logger
		st := election.NewMemoryStorage()
		n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(election.Message) {}), st, election.StaticLog{})
		require.NoError(t, err)
		require.NoError(t, n.Start())
		n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1}) // debug level: not shown
		st.SetSaveError(errors.New("disk on fire"))
		n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 2}) // cannot persist term 2
		n.Stop()
	}
	run(nil)
	require.Contains(t, out.String(), "[ERROR] raftick.election.n1: cannot save hard state")
	require.Contains(t, out.String(), "disk on fire")
	require.NotContains(t, out.String(), "leader known", "below Warn: not shown")
	out.Reset()
	run(hclog.NewNullLogger())
	require.Empty(t, out.String())
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
