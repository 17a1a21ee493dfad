package election_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestPreVoteIgnoresStaleRejections is issue 10, defect 10: rejections
// carrying a term below the pre-candidate's (late answers of an earlier
// round) are ignored and counted as stale, as vote responses are, and do
// not end the round.
func TestPreVoteIgnoresStaleRejections(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.PreVote = true })
	require.NoError(t, p.st.Save(election.HardState{Term: 4}))
	p.start(t)
	require.NoError(t, p.n.Campaign())
	require.Equal(t, election.PreCandidate, p.n.Status().Role)
	for _, from := range []election.ID{2, 3} {
		p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: from, To: 1, Term: 2})
	}
	require.Equal(t, election.PreCandidate, p.n.Status().Role, "stale rejections do not end the round")
	require.Equal(t, int64(2), p.n.Stats().IgnoredStale)
	// The voters' slots are still free: a current grant wins the round.
	p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 5, Granted: true})
	require.Equal(t, election.Candidate, p.n.Status().Role)
	require.Equal(t, uint64(5), p.n.Status().Term)
}
