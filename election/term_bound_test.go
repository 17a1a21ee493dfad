package election_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
)

// newFive returns node 1 of {1..5} as a probe (PreVote off, ET 100ms, HB
// 30ms), started.
func newFive(t *testing.T, edit func(c *election.Config)) *probe {
	t.Helper()
	return newProbe(t, func(c *election.Config) {
		c.Voters = []election.ID{1, 2, 3, 4, 5}
		c.ElectionTimeout, c.HeartbeatInterval, c.VoteTimeout = 100*time.Millisecond, 30*time.Millisecond, 100*time.Millisecond
		if edit != nil {
			edit(c)
		}
	}).start(t)
}

// checkEvents runs the safety checker over the probe's events; forged
// vote grants are not involved, so every invariant applies.
func checkEvents(t *testing.T, p *probe, voters int) {
	t.Helper()
	c := electiontest.NewChecker(voters)
	for _, e := range p.events {
		c.Observe(e)
	}
	require.NoError(t, c.Err())
}

// TestTermOverflowVote is the reproduction of issue 10, defect 1: one vote
// request with term 2^64-1 made the node campaign in term 0 and vote twice
// in term 5.
func TestTermOverflowVote(t *testing.T) {
	p := newFive(t, nil)
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5})
	require.Equal(t, election.Status{ID: 1, Term: 5, Vote: 2, Started: true}, p.n.Status())
	malformed := p.n.Stats().IgnoredMalformed
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: math.MaxUint64})
	require.Equal(t, malformed+1, p.n.Stats().IgnoredMalformed, "a term above MaxTerm is malformed")
	require.Equal(t, uint64(5), p.n.Status().Term)
	p.v.AdvanceBy(time.Second)
	p.take()
	p.n.Step(election.Message{Type: election.MsgVote, From: 4, To: 1, Term: 5})
	for _, m := range p.take() {
		if m.Type == election.MsgVoteResp {
			require.False(t, m.Granted, "second vote in term 5: %v", m)
		}
	}
	require.GreaterOrEqual(t, p.n.Status().Term, uint64(6))
	checkEvents(t, p, 5)
}

// TestTermBoundEveryExtreme steps requests and responses of every type
// with terms around MaxTerm and the top of the uint64 range into a node
// and checks that terms above MaxTerm are refused and counted, that the
// node never wraps and that the invariants hold.
func TestTermBoundEveryExtreme(t *testing.T) {
	terms := []uint64{election.MaxTerm - 1, election.MaxTerm, election.MaxTerm + 1, math.MaxUint64 - 1, math.MaxUint64}
	for _, prevote := range []bool{false, true} {
		for typ := election.MsgPreVote; typ <= election.MsgTimeoutNow; typ++ {
			for _, term := range terms {
				for _, granted := range []bool{false, true} {
					p := newFive(t, func(c *election.Config) { c.PreVote, c.CheckQuorum = prevote, prevote })
					p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5})
					m := election.Message{Type: typ, From: 3, To: 1, Term: term, LastLogTerm: 1, Granted: granted}
					p.n.Step(m)
					if term > election.MaxTerm {
						require.Equal(t, int64(1), p.n.Stats().IgnoredMalformed, "%v", m)
					}
					for range 50 {
						p.v.AdvanceBy(37 * time.Millisecond)
						st := p.n.Status()
						require.LessOrEqual(t, st.Term, election.MaxTerm, "%v", m)
						require.GreaterOrEqual(t, st.Term, uint64(5), "%v", m)
					}
					// A vote request of term 5 after all that is never granted.
					p.take()
					p.n.Step(election.Message{Type: election.MsgVote, From: 4, To: 1, Term: 5})
					for _, r := range p.take() {
						require.False(t, r.Type == election.MsgVoteResp && r.Granted, "%v after %v", r, m)
					}
					checkEvents(t, p, 5)
				}
			}
		}
	}
}

// TestTermBoundRefusesCampaign: a node can reach MaxTerm and even lead in
// it, but never starts a round beyond it: Campaign and TransferLeadership
// return ErrTermExhausted, and timer-driven rounds are refused, counted
// and reported.
func TestTermBoundRefusesCampaign(t *testing.T) {
	for _, prevote := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) { c.PreVote = prevote })
		require.NoError(t, p.st.Save(election.HardState{Term: election.MaxTerm - 1}))
		p.start(t)
		require.NoError(t, p.n.Campaign())
		if prevote {
			p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: election.MaxTerm, Granted: true})
		}
		require.Equal(t, election.Candidate, p.n.Status().Role)
		require.Equal(t, election.MaxTerm, p.n.Status().Term)
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: election.MaxTerm, Granted: true})
		require.Equal(t, election.Leader, p.n.Status().Role, "MaxTerm itself is a usable term")
		require.ErrorIs(t, p.n.TransferLeadership(2), election.ErrTermExhausted)

		p.n.Stop()

		// A follower of MaxTerm (after a restart) cannot campaign.
		p = newProbe(t, func(c *election.Config) { c.PreVote = prevote })
		require.NoError(t, p.st.Save(election.HardState{Term: election.MaxTerm, Vote: 1}))
		p.start(t)
		require.ErrorIs(t, p.n.Campaign(), election.ErrTermExhausted)
		require.Equal(t, int64(1), p.n.Stats().TermExhausted)
		p.v.AdvanceBy(10 * et)
		st := p.n.Status()
		require.Equal(t, election.Follower, st.Role)
		require.Equal(t, election.MaxTerm, st.Term)
		require.Greater(t, p.n.Stats().TermExhausted, int64(5), "every election timeout is refused and counted")
		require.Zero(t, p.n.Stats().Elections+p.n.Stats().PreVotes)
		for _, e := range p.eventsOf(election.EventIgnored) {
			require.Contains(t, e.Reason, "term bound reached")
		}
		for _, m := range p.take() {
			require.Fail(t, "message sent at the bound", "%v", m)
		}
		// The node still follows a leader of MaxTerm.
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: election.MaxTerm})
		require.Equal(t, election.ID(3), p.n.Status().Leader)
		checkEvents(t, p, 3)
	}
}

// TestTermBoundStoredTermAbove: a stored term above MaxTerm (written by an
// older version, or corrupted) stops Start with a clear error.
func TestTermBoundStoredTermAbove(t *testing.T) {
	p := newProbe(t, nil)
	require.NoError(t, p.st.Save(election.HardState{Term: math.MaxUint64, Vote: 3}))
	err := p.n.Start()
	require.ErrorIs(t, err, election.ErrTermExhausted)
	require.Contains(t, err.Error(), "stored term 18446744073709551615")
	require.False(t, p.n.Status().Started)
}

// TestMessageValidate: Validate refuses exactly what Step counts as
// malformed.
func TestMessageValidate(t *testing.T) {
	ok := []election.Message{
		{Type: election.MsgVote, Term: 1},
		{Type: election.MsgVoteResp},
		{Type: election.MsgHeartbeat, Term: election.MaxTerm, LastLogTerm: election.MaxTerm},
	}
	for _, m := range ok {
		require.NoError(t, m.Validate(), "%v", m)
	}
	bad := map[string]election.Message{
		"unknown type MsgType(0)":                  {Term: 1},
		"unknown type MsgType(8)":                  {Type: 8, Term: 1},
		"MsgHeartbeat with term 0":                 {Type: election.MsgHeartbeat},
		"term 4611686018427387905 above":           {Type: election.MsgVoteResp, Term: election.MaxTerm + 1},
		"last log term 18446744073709551615 above": {Type: election.MsgPreVote, Term: 1, LastLogTerm: math.MaxUint64},
	}
	for want, m := range bad {
		err := m.Validate()
		require.ErrorIs(t, err, election.ErrMalformed, "%v", m)
		require.Contains(t, err.Error(), want)
	}
}

// TestTermBoundCampaignKeepsRound: Campaign at MaxTerm is refused without
// abandoning a candidate's round of MaxTerm.
func TestTermBoundCampaignKeepsRound(t *testing.T) {
	p := newProbe(t, nil)
	require.NoError(t, p.st.Save(election.HardState{Term: election.MaxTerm - 1}))
	p.start(t)
	require.NoError(t, p.n.Campaign())
	require.ErrorIs(t, p.n.Campaign(), election.ErrTermExhausted)
	require.Equal(t, election.Candidate, p.n.Status().Role)
	p.n.Step(election.Message{Type: election.MsgVoteResp, From: 3, To: 1, Term: election.MaxTerm, Granted: true})
	require.Equal(t, election.Leader, p.n.Status().Role)
}

// TestObserveTermBound: the replication path cannot push a node past
// MaxTerm either; MaxTerm itself is adopted, as from a message.
func TestObserveTermBound(t *testing.T) {
	p := newFive(t, nil)
	for _, term := range []uint64{election.MaxTerm + 1, math.MaxUint64} {
		err := p.n.ObserveTerm(term, 2)
		require.ErrorIs(t, err, election.ErrTermOutOfRange, "term %d", term)
	}
	require.Equal(t, uint64(0), p.n.Status().Term, "a refused term changes nothing")
	require.NoError(t, p.n.ObserveTerm(election.MaxTerm, 2))
	require.Equal(t, election.MaxTerm, p.n.Status().Term)
	checkEvents(t, p, 5)
}
