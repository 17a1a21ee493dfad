package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

const tick = et / 10

// fixedJitter is a jitter of exactly mult times the base.
func fixedJitter(mult int64) repeated.Jitter {
	return repeated.Func(func(base time.Duration, _ repeated.State, _ *rand.Rand) time.Duration {
		return time.Duration(mult) * base
	})
}

// TestTickGranularTimers: with Config.Emulate.Tick every timer fires on the
// node's ticks, and a follower whose timeout is T ticks fires between T-1
// and T ticks after its last contact, depending on where the contact fell
// between two ticks (etcd's tickElection).
func TestTickGranularTimers(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.Emulate.Tick = tick
		c.ElectionJitter = repeated.None() // T = 10 ticks exactly
	}).start(t)
	var fires []time.Duration
	for _, offset := range []time.Duration{0, 1, tick / 3, tick - 1, 7 * tick / 10} {
		// A heartbeat of a new leader at an arbitrary instant.
		p.v.AdvanceBy(offset)
		h := p.v.Now()
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: p.n.Status().Term + 1})
		require.Equal(t, election.Follower, p.n.Status().Role)
		p.runToElection(t)
		f := p.v.Now()
		require.Greater(t, f-h, 9*tick, "offset %v", offset)
		require.LessOrEqual(t, f-h, 10*tick, "offset %v", offset)
		fires = append(fires, f)
		// Back to follower in a higher term.
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: p.n.Status().Term + 1})
		p.runToElection(t) // the next fire, also on the grid
		fires = append(fires, p.v.Now())
	}
	for _, f := range fires {
		require.Zero(t, (f-fires[0])%tick, "every fire on one grid: %v", fires)
	}
	// The vote timer (a candidate's round) and the heartbeat timer tick too.
	start := p.v.Now()
	require.NotZero(t, p.v.AdvanceToNext())
	require.Zero(t, (p.v.Now()-fires[0])%tick)
	require.Equal(t, et, p.v.Now()-start, "a round of 10 ticks started on a tick")
}

// TestTickLease: with Config.Emulate.Tick a follower counts ticks since its
// leader's last heartbeat: it refuses pre-votes until ceil(ET/Tick) of its
// ticks have passed (etcd's electionElapsed < electionTimeout), which can
// end up to one tick before ET has passed; without Tick exactly ET.
func TestTickLease(t *testing.T) {
	for _, ticked := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) {
			if ticked {
				c.Emulate.Tick = tick
			}
			c.ElectionJitter = fixedJitter(3) // the follower's timer: 30 ticks, beyond the lease
		}).start(t)
		p.v.AdvanceBy(tick / 3)
		h := p.v.Now()
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
		el, ok, _, _ := p.n.TimerDeadlines()
		require.True(t, ok)
		if !ticked {
			require.Equal(t, h+3*et, el)
		}
		// The lease ends at the 10th tick after h: the 30th is the
		// election deadline, 20 ticks later.
		end := h + et
		if ticked {
			end = el - 20*tick
			require.Less(t, end, h+et)
			require.Greater(t, end, h+et-tick)
		}
		preVote := func() bool {
			p.take()
			p.n.Step(election.Message{Type: election.MsgPreVote, From: 3, To: 1, Term: 2})
			msgs := p.take()
			require.Len(t, msgs, 1)
			return msgs[0].Granted
		}
		p.v.AdvanceTo(end - 1)
		require.False(t, preVote(), "ticked %v: within the lease", ticked)
		p.v.AdvanceTo(end)
		require.True(t, preVote(), "ticked %v: the lease ended", ticked)
	}
}

// TestRestartTimerOnFollow: with the option a follower restarts its
// election timer on any message of a higher term, a vote request it
// rejects included, and a pre-candidate that lost its pre-vote gets a
// fresh timeout (etcd's becomeFollower); without it neither re-arms.
func TestRestartTimerOnFollow(t *testing.T) {
	for _, restart := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) {
			c.Emulate.RestartTimerOnFollow = restart
			c.ElectionJitter = repeated.None()
			c.PreVote = true
		}).start(t)
		p.log.index, p.log.term = 5, 1
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
		before, ok, _, _ := p.n.TimerDeadlines()
		require.True(t, ok)
		p.v.AdvanceBy(et / 2)
		// A candidate with a shorter log: rejected, but its term adopted.
		p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2, LastLogIndex: 1, LastLogTerm: 1})
		require.Equal(t, uint64(2), p.n.Status().Term)
		require.Len(t, p.eventsOf(election.EventVoteDenied), 1)
		after, ok, _, _ := p.n.TimerDeadlines()
		require.True(t, ok)
		if restart {
			require.Equal(t, p.v.Now()+et, after, "restarted by the higher term")
		} else {
			require.Equal(t, before, after, "the paper's follower keeps its timer")
		}

		// A pre-candidate rejected by a majority.
		p.v.AdvanceTo(after)
		require.Equal(t, election.PreCandidate, p.n.Status().Role)
		p.v.AdvanceBy(et / 4)
		fired, _, _, _ := p.n.TimerDeadlines()
		for _, from := range []election.ID{2, 3} {
			p.n.Step(election.Message{Type: election.MsgPreVoteResp, From: from, To: 1, Term: 2})
		}
		require.Equal(t, election.Follower, p.n.Status().Role)
		el, ok, _, _ := p.n.TimerDeadlines()
		require.True(t, ok)
		if restart {
			require.Equal(t, p.v.Now()+et, el, "a fresh timeout on becoming follower")
		} else {
			require.Equal(t, fired, el, "the pre-candidate's timer runs on")
		}
	}
}

func TestTickValidate(t *testing.T) {
	cfg := election.DefaultConfig()
	cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
	cfg.ID, cfg.Voters = 1, []election.ID{1}
	cfg.Emulate.Tick = -time.Millisecond
	require.ErrorIs(t, cfg.Validate(), election.ErrInvalidConfig)
	require.ErrorContains(t, cfg.Validate(), "Emulate.Tick -1ms: must not be negative")
}
