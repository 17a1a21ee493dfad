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

// recordJitter is repeated.None that records the State of every schedule.
type recordJitter struct {
	mu     sync.Mutex
	states []repeated.State
}

func (r *recordJitter) Next(base time.Duration, st repeated.State, _ *rand.Rand) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, st)
	return base
}

func (r *recordJitter) consecutive() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, len(r.states))
	for i, st := range r.states {
		out[i] = st.Consecutive
	}
	return out
}

// runRounds advances until node 1 has started k more candidate rounds and
// returns the wheel time of each start.
func (p *probe) runRounds(t *testing.T, k int) []time.Duration {
	t.Helper()
	var at []time.Duration
	for start := p.n.Stats().Elections; p.n.Stats().Elections < start+int64(k); {
		before := p.n.Stats().Elections
		require.NotZero(t, p.v.AdvanceToNext(), "wheel idle")
		if p.n.Stats().Elections > before {
			at = append(at, p.v.Now())
		}
	}
	return at
}

// TestVoteJitterSeesConsecutiveRounds is issue 10, defect 9: the vote
// jitter is told how many failed candidate rounds came before, and the
// count starts again once a leader is known.
func TestVoteJitterSeesConsecutiveRounds(t *testing.T) {
	for _, prevote := range []bool{false, true} {
		rec := &recordJitter{}
		p := newProbe(t, func(c *election.Config) {
			c.VoteJitter = rec
			c.PreVote, c.Emulate.StepDownWhenVoteTimedOut = prevote, prevote
		}).start(t)
		grantPreVotes := func() {
			for _, m := range p.take() {
				if m.Type == election.MsgPreVote && m.To == 2 {
					p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: m.Term, Granted: true})
				}
			}
		}
		round := func() {
			for start := p.n.Stats().Elections; p.n.Stats().Elections == start; {
				require.NotZero(t, p.v.AdvanceToNext())
				grantPreVotes()
			}
		}
		for range 5 {
			round()
		}
		require.Equal(t, []int{0, 1, 2, 3, 4}, rec.consecutive(), "prevote=%v", prevote)

		// A leader's heartbeat ends the series.
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: p.n.Status().Term})
		require.Equal(t, election.ID(2), p.n.Status().Leader)
		round()
		round()
		require.Equal(t, []int{0, 1, 2, 3, 4, 0, 1}, rec.consecutive(), "prevote=%v", prevote)

		// So does winning.
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 3, To: 1, Term: p.n.Status().Term, Granted: true})
		require.Equal(t, election.Leader, p.n.Status().Role)
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: p.n.Status().Term + 1})
		p.n.Stop()
	}
}

// TestVoteBackoffGrows: with repeated.Backoff as vote jitter the rounds of
// an isolated candidate really grow (Backoff(10, 0)'s window doubles every
// round), while None keeps them at VoteTimeout.
func TestVoteBackoffGrows(t *testing.T) {
	gaps := func(j repeated.Jitter) []time.Duration {
		p := newProbe(t, func(c *election.Config) { c.VoteJitter = j }).start(t)
		at := p.runRounds(t, 9)
		var out []time.Duration
		for i := 1; i < len(at); i++ {
			out = append(out, at[i]-at[i-1])
		}
		p.n.Stop()
		return out
	}
	for _, g := range gaps(repeated.None()) {
		require.Equal(t, et, g)
	}
	backoff := gaps(repeated.Backoff(10, 0))
	// Round k waits in [T, T+T*2^k): fails only if all 8 rounds drew in
	// [T, 2T), probability 2^-36 for a fresh seed (the seed is fixed).
	longest := time.Duration(0)
	for k, g := range backoff {
		require.GreaterOrEqual(t, g, et)
		require.Less(t, g, et+et<<k, "round %d", k)
		longest = max(longest, g)
	}
	require.Greater(t, longest, 4*et, "backoff did not grow: %v", backoff)
}
