package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// TestContactDeadline checks that with ContactDeadline a follower's
// heartbeat re-arms nothing, and that the follower still campaigns a
// (fresh) election timeout after its leader's last heartbeat, exactly as
// with ResetOnHeartbeat: its timer, when it fires, re-arms itself for the
// rest of the timeout counted from the contact. CheckLastContact, whose
// timer runs a whole period on, campaigns later.
func TestContactDeadline(t *testing.T) {
	const gap = 30 * time.Millisecond
	for _, mode := range []election.DetectionMode{election.ResetOnHeartbeat, election.ContactDeadline, election.CheckLastContact} {
		t.Run(mode.String(), func(t *testing.T) {
			p := newProbe(t, func(c *election.Config) {
				c.Detection = mode
				c.ElectionJitter = repeated.None()
			}).start(t)
			var last time.Duration
			for i := 1; i <= 21; i++ {
				p.v.AdvanceTo(time.Duration(i) * gap)
				before, ok, _, _ := p.n.TimerDeadlines()
				require.True(t, ok)
				p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
				after, _, _, _ := p.n.TimerDeadlines()
				if mode == election.ResetOnHeartbeat {
					require.Equal(t, p.v.Now()+et, after, "heartbeat %d re-arms", i)
				} else {
					require.Equal(t, before, after, "heartbeat %d re-arms nothing", i)
				}
				last = p.v.Now()
			}
			require.Equal(t, election.Follower, p.n.Status().Role)
			at := p.runToElection(t)
			if mode == election.CheckLastContact {
				require.Greater(t, at-last, et)
				return
			}
			require.Equal(t, et, at-last, "campaigns an election timeout after the last heartbeat")
		})
	}
}

// TestContactDeadlineJitter checks that with ContactDeadline and
// ElectionJitter a follower campaigns within [ET, 2ET) of its leader's
// last heartbeat, the timeout drawn afresh, on many seeds.
func TestContactDeadlineJitter(t *testing.T) {
	seen := map[time.Duration]bool{}
	for seed := range uint64(20) {
		p := newProbe(t, func(c *election.Config) {
			c.Detection = election.ContactDeadline
			c.Rand = rand.New(rand.NewPCG(seed, 1))
		}).start(t)
		for i := 1; i <= 15; i++ {
			p.v.AdvanceTo(time.Duration(i) * 37 * time.Millisecond)
			p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
		}
		last := p.v.Now()
		at := p.runToElection(t)
		require.GreaterOrEqual(t, at-last, et, "seed %d", seed)
		require.Less(t, at-last, 2*et, "seed %d", seed)
		seen[at-last] = true
	}
	require.Greater(t, len(seen), 10, "the timeouts are random")
}

// TestExternalCheckQuorum checks that a leader with ExternalCheckQuorum
// keeps no step-down timer (it leads on, however long nobody calls it)
// and that LeaderTick checks the quorum before it heartbeats: it steps
// down at the first tick that finds no quorum answered, and returns the
// heartbeats for the caller to send while the quorum answers. The same
// holds of LeaderTickTerm, whose caller makes the heartbeats from the
// term it returns.
func TestExternalCheckQuorum(t *testing.T) {
	_, err := election.NewNode(election.Config{ID: 1, Voters: []election.ID{1}, ElectionTimeout: et, ExternalCheckQuorum: true},
		newVirtual(t).Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.ErrorIs(t, err, election.ErrInvalidConfig, "ExternalCheckQuorum without ExternalHeartbeat")

	ticks := map[string]func(n *election.Node, now time.Duration) ([]election.Message, error){
		"LeaderTick": func(n *election.Node, now time.Duration) ([]election.Message, error) { return n.LeaderTick(now, nil) },
		"LeaderTickTerm": func(n *election.Node, now time.Duration) ([]election.Message, error) {
			term, err := n.LeaderTickTerm(now)
			if err != nil {
				require.Zero(t, term)
				return nil, err
			}
			require.NotZero(t, term, "nothing waits to be sent: the caller sends")
			var out []election.Message
			for _, to := range []election.ID{2, 3} { // Voters but the node
				out = append(out, election.Message{Type: election.MsgHeartbeat, From: 1, To: to, Term: term, Sent: now})
			}
			return out, nil
		},
	}
	for name, tick := range ticks {
		t.Run(name, func(t *testing.T) {
			p := newProbe(t, func(c *election.Config) {
				c.CheckQuorum, c.ExternalHeartbeat, c.ExternalCheckQuorum = true, true, true
			}).start(t)
			p.elect(t)
			term := p.n.Status().Term
			for i := 0; i < 20; i++ { // answered every tick: leads on
				p.v.AdvanceBy(hb)
				out, err := tick(p.n, p.v.Now())
				require.NoError(t, err, "tick %d", i)
				require.Len(t, out, 2)
				for _, m := range out {
					require.Equal(t, election.Message{Type: election.MsgHeartbeat, From: 1, To: m.To, Term: term, Sent: p.v.Now()}, m)
				}
				p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: term, Granted: true, Sent: p.v.Now()})
			}
			// No timer judges the quorum: nobody ticks, nobody answers, it leads.
			p.v.AdvanceBy(10 * et)
			require.Equal(t, election.Leader, p.n.Status().Role)
			// Node 2 answered every heartbeat it was sent: not silent yet.
			out, err := tick(p.n, p.v.Now())
			require.NoError(t, err)
			require.Len(t, out, 2)
			// The next tick judges the silence (a heartbeat unanswered for a
			// heartbeat interval) and steps down instead of heartbeating.
			p.v.AdvanceBy(hb)
			out, err = tick(p.n, p.v.Now())
			require.ErrorIs(t, err, election.ErrNotLeader)
			require.Empty(t, out)
			require.Equal(t, election.Follower, p.n.Status().Role)
			sd := p.eventsOf(election.EventStepDown)
			require.Len(t, sd, 1)
			require.Contains(t, sd[0].Reason, election.ReasonCheckQuorum)
		})
	}
}

// TestLeaderTickHeard: a leader whose caller vouches that a quorum
// answered the heartbeats its last tick returned (LeaderTickHeard) skips
// its own CheckQuorum, only for that tick's time within the lease and in
// the term the tick returned; otherwise it judges its acks as
// LeaderTickTerm does. Nodes 2 and 3 answer nothing here, so every check
// the node makes itself steps it down.
func TestLeaderTickHeard(t *testing.T) {
	const ratio = 0.9
	lease := time.Duration(float64(et) * ratio)
	for _, tc := range []struct {
		name string
		// vouch returns the heardAt and heardTerm passed, given the last
		// tick's time and term.
		vouch   func(at time.Duration, term uint64) (time.Duration, uint64)
		vouched bool
	}{
		{"vouched", func(at time.Duration, term uint64) (time.Duration, uint64) { return at, term }, true},
		{"nothing vouched", func(time.Duration, uint64) (time.Duration, uint64) { return -1, 0 }, false},
		{"another term", func(at time.Duration, term uint64) (time.Duration, uint64) { return at, term + 1 }, false},
		{"older than the lease", func(at time.Duration, term uint64) (time.Duration, uint64) { return at - lease, term }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, func(c *election.Config) {
				c.CheckQuorum, c.ExternalHeartbeat, c.ExternalCheckQuorum = true, true, true
				c.LeaseRatio = ratio
			}).start(t)
			p.elect(t)
			p.v.AdvanceBy(lease) // past the grace an election gives every peer
			at := p.v.Now()
			term, vouched, err := p.n.LeaderTickHeard(at, -1, 0)
			require.NoError(t, err)
			require.False(t, vouched)
			require.NotZero(t, term)
			// Two heartbeat intervals unanswered: both peers are silent.
			p.v.AdvanceBy(2 * hb)
			heardAt, heardTerm := tc.vouch(at, term)
			got, vouched, err := p.n.LeaderTickHeard(p.v.Now(), heardAt, heardTerm)
			if !tc.vouched {
				require.ErrorIs(t, err, election.ErrNotLeader, "the node judged its own acks")
				require.False(t, vouched)
				require.Equal(t, election.Follower, p.n.Status().Role)
				return
			}
			require.NoError(t, err)
			require.True(t, vouched)
			require.Equal(t, term, got)
			require.Equal(t, election.Leader, p.n.Status().Role)
			// Its next tick, vouched for by nobody, steps down.
			p.v.AdvanceBy(hb)
			_, _, err = p.n.LeaderTickHeard(p.v.Now(), -1, 0)
			require.ErrorIs(t, err, election.ErrNotLeader)
		})
	}
}
