package election_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestGrantOnlyAsFollower: a candidate deposed by a higher-term vote
// request adopts the term and grants it by default, refuses it with the
// option; a server that was a follower grants either way.
func TestGrantOnlyAsFollower(t *testing.T) {
	req := election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 5, LastLogIndex: 9, LastLogTerm: 1}
	answer := func(p *probe) election.Message {
		t.Helper()
		var resp []election.Message
		for _, m := range p.take() {
			if m.Type == election.MsgVoteResp {
				resp = append(resp, m)
			}
		}
		require.Len(t, resp, 1)
		return resp[0]
	}
	for _, only := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) { c.Emulate.GrantOnlyAsFollower = only }).start(t)
		p.runToElection(t)
		p.take()
		p.n.Step(req)
		st := p.n.Status()
		require.Equal(t, election.Follower, st.Role)
		require.Equal(t, uint64(5), st.Term)
		resp := answer(p)
		require.Equal(t, !only, resp.Granted, "GrantOnlyAsFollower=%v", only)
		if only {
			require.Equal(t, election.None, st.Vote, "no vote in the new term")
			// The next request of that term, now to a follower, is granted.
			p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5, LastLogIndex: 9, LastLogTerm: 1})
			require.True(t, answer(p).Granted)
		}

		f := newProbe(t, func(c *election.Config) { c.Emulate.GrantOnlyAsFollower = only }).start(t)
		f.n.Step(req)
		require.True(t, answer(f).Granted, "a follower grants (GrantOnlyAsFollower=%v)", only)
	}
}

// TestBackoffOnRejections: with the option a round counts toward the
// backoff only after a round that half of the peers rejected, and any
// step-down restarts the count; without it every round counts.
func TestBackoffOnRejections(t *testing.T) {
	reject := func(p *probe, from election.ID) {
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: from, To: 1, Term: p.n.Status().Term})
	}
	for _, on := range []bool{false, true} {
		rec := &recordJitter{}
		p := newProbe(t, func(c *election.Config) {
			c.VoteJitter = rec
			c.Emulate.WaitForVoteTimeout = true
			c.Emulate.BackoffOnRejections = on
		}).start(t)
		p.runRounds(t, 1) // round 1: no answers
		p.runRounds(t, 1) // round 2: node 2 rejects (1 of 2 peers: half)
		reject(p, 2)
		p.runRounds(t, 1) // round 3
		reject(p, 2)
		reject(p, 3)
		p.runRounds(t, 1) // round 4
		// A higher term deposes the candidate; its next round starts over.
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: p.n.Status().Term + 1})
		require.Equal(t, election.Follower, p.n.Status().Role)
		p.runRounds(t, 1) // round 5
		want := []int{0, 1, 2, 3, 4}
		if on {
			want = []int{0, 0, 1, 2, 0}
		}
		require.Equal(t, want, rec.consecutive(), "BackoffOnRejections=%v", on)
	}
}
