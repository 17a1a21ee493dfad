package election_test

import (
	"testing"

	"github.com/raftick/raftick/election"
	"github.com/stretchr/testify/require"
)

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
