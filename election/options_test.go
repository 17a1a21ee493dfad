package election_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// TestKeepTimerOnStepDown checks which deadline a candidate's election
// timer has after it steps down, with and without KeepTimerOnStepDown: the
// round's deadline exactly, or a fresh timeout; and that anything which
// re-arms a follower's timer still does.
func TestKeepTimerOnStepDown(t *testing.T) {
	long := func(m election.Message) election.Message { m.LastLogIndex, m.LastLogTerm = 5, 1; return m }
	cases := []struct {
		name string
		// msgs make the candidate (node 1, term 1, log (2,1)) a follower.
		msgs   []election.Message
		reason string
		// kept: the follower's timer keeps the round's deadline when the
		// option is on (otherwise something re-arms it).
		kept bool
	}{
		{"higher-term vote request refused", []election.Message{{Type: election.MsgVote, From: 3, To: 1, Term: 2}}, "higher term", true},
		{"higher-term vote response", []election.Message{{Type: election.MsgVoteResp, From: 2, To: 1, Term: 3}}, "higher term", true},
		{"higher-term pre-vote response", []election.Message{{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 3}}, "higher term", true},
		{"lost election", []election.Message{
			{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1},
			{Type: election.MsgVoteResp, From: 3, To: 1, Term: 1},
		}, "lost election", true},
		{"new leader's heartbeat re-arms", []election.Message{{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1}}, "leader heartbeat", false},
		{"granted higher-term vote re-arms", []election.Message{long(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2})}, "higher term", false},
	}
	for _, tc := range cases {
		for _, keep := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/fresh", true: "/keep"}[keep], func(t *testing.T) {
				p := newProbe(t, func(c *election.Config) { c.Emulate.KeepTimerOnStepDown = keep }).start(t)
				p.log.index, p.log.term = 2, 1
				p.runToElection(t)
				_, elOK, round, voteOK := p.n.TimerDeadlines()
				require.False(t, elOK, "a candidate's election timer is stopped")
				require.True(t, voteOK)
				p.v.AdvanceBy(et / 3)
				stepAt := p.v.Now()
				for _, m := range tc.msgs {
					p.n.Step(m)
				}
				require.Equal(t, election.Follower, p.n.Status().Role)
				sd := p.eventsOf(election.EventStepDown)
				require.Len(t, sd, 1)
				require.Equal(t, tc.reason, sd[0].Reason)
				el, elOK, _, voteOK := p.n.TimerDeadlines()
				require.True(t, elOK)
				require.False(t, voteOK, "a follower's vote timer is stopped")
				if keep && tc.kept {
					require.Equal(t, round, el, "the follower's timer takes over the round's deadline")
					// It fires at exactly that instant, then runs on with
					// fresh timeouts.
					starts := len(p.eventsOf(election.EventElectionStart))
					p.v.AdvanceTo(round - 1)
					require.Len(t, p.eventsOf(election.EventElectionStart), starts)
					p.v.AdvanceTo(round)
					all := p.eventsOf(election.EventElectionStart)
					require.Len(t, all, starts+1)
					require.Equal(t, round, all[len(all)-1].At)
					require.Equal(t, "election timeout", all[len(all)-1].Reason)
					return
				}
				require.GreaterOrEqual(t, el, stepAt+et, "a fresh timeout from the step-down")
				require.Less(t, el, stepAt+2*et)
				require.NotEqual(t, round, el)
			})
		}
	}
}

// TestKeepTimerOnStepDownLeaderAndPreCandidate: a deposed leader always
// gets a fresh timeout (it had no running timer); a pre-candidate's timer
// is never re-armed by a step-down, with or without the option.
func TestKeepTimerOnStepDownLeaderAndPreCandidate(t *testing.T) {
	for _, keep := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) { c.Emulate.KeepTimerOnStepDown = keep }).start(t)
		p.elect(t)
		p.v.AdvanceBy(et / 2)
		at := p.v.Now()
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 5})
		el, ok, _, _ := p.n.TimerDeadlines()
		require.True(t, ok)
		require.GreaterOrEqual(t, el, at+et, "keep=%v", keep)
		require.Less(t, el, at+2*et)

		q := newProbe(t, func(c *election.Config) { c.Emulate.KeepTimerOnStepDown, c.PreVote = keep, true }).start(t)
		for q.n.Status().Role != election.PreCandidate {
			require.NotZero(t, q.v.AdvanceToNext())
		}
		before, ok, _, _ := q.n.TimerDeadlines()
		require.True(t, ok)
		q.v.AdvanceBy(et / 4)
		q.n.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 4})
		require.Equal(t, election.Follower, q.n.Status().Role)
		after, ok, _, _ := q.n.TimerDeadlines()
		require.True(t, ok)
		require.Equal(t, before, after, "keep=%v", keep)
	}
}

// TestWaitForVoteTimeout: with the option a candidate rejected by a
// majority stays a candidate until its vote timer fires, then starts the
// next term at that exact deadline; without it, it steps down at once.
func TestWaitForVoteTimeout(t *testing.T) {
	for _, wait := range []bool{false, true} {
		p := newProbe(t, func(c *election.Config) { c.Emulate.WaitForVoteTimeout = wait }).start(t)
		p.runToElection(t)
		_, _, round, ok := p.n.TimerDeadlines()
		require.True(t, ok)
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1})
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 3, To: 1, Term: 1})
		denied := 0
		for _, e := range p.eventsOf(election.EventStepDown) {
			if e.Reason == "lost election" {
				denied++
			}
		}
		if !wait {
			require.Equal(t, election.Follower, p.n.Status().Role)
			require.Equal(t, 1, denied)
			continue
		}
		require.Equal(t, election.Candidate, p.n.Status().Role, "rejections are ignored")
		require.Zero(t, denied)
		// A late grant still counts: the rejections did not end the round.
		p.n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true})
		require.Equal(t, election.Candidate, p.n.Status().Role, "duplicate answer of node 2 is ignored")
		p.v.AdvanceTo(round - 1)
		require.Equal(t, uint64(1), p.n.Status().Term)
		p.v.AdvanceTo(round)
		st := p.n.Status()
		require.Equal(t, election.Candidate, st.Role)
		require.Equal(t, uint64(2), st.Term)
		starts := p.eventsOf(election.EventElectionStart)
		require.Equal(t, round, starts[len(starts)-1].At)
		require.Equal(t, "vote timeout", starts[len(starts)-1].Reason)
		// A leader's heartbeat or a higher term still ends the candidacy.
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 2})
		require.Equal(t, election.Follower, p.n.Status().Role)
	}
}

// TestStickiness compares the two stickiness modes on one follower (node
// 1) that learnt leader 2 from a heartbeat and then heard nothing for more
// than ET, before its own timer fires.
func TestStickiness(t *testing.T) {
	preVote := func(from election.ID, term uint64) election.Message {
		return election.Message{Type: election.MsgPreVote, From: from, To: 1, Term: term}
	}
	vote := func(from election.ID, term uint64, transfer bool) election.Message {
		return election.Message{Type: election.MsgVote, From: from, To: 1, Term: term, Transfer: transfer}
	}
	cases := []struct {
		name    string
		m       election.Message
		contact bool // granted with StickyByContact (silent leader)
		until   bool // granted with StickyUntilTimeout
	}{
		{"pre-vote of another node", preVote(3, 2), true, false},
		{"vote of another node", vote(3, 2, false), true, false},
		{"leadership transfer", vote(3, 2, true), true, true},
		{"pre-vote of the known leader", preVote(2, 2), true, true},
		{"vote of the known leader", vote(2, 2, false), true, true},
	}
	for _, tc := range cases {
		for _, mode := range []election.StickinessMode{election.StickyByContact, election.StickyUntilTimeout} {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				p := newProbe(t, func(c *election.Config) {
					c.PreVote, c.LeaderStickiness, c.Stickiness = true, true, mode
					c.Detection = election.CheckLastContact
				}).start(t)
				p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
				hbAt := p.v.Now()
				p.take()
				el, ok, _, _ := p.n.TimerDeadlines()
				require.True(t, ok)
				require.Greater(t, el, hbAt+et, "test premise: the timer fires after the contact expired")
				p.v.AdvanceTo(hbAt + et)
				require.Equal(t, election.ID(2), p.n.Status().Leader)
				p.n.Step(tc.m)
				resp := p.take()
				require.Len(t, resp, 1)
				want := tc.contact
				if mode == election.StickyUntilTimeout {
					want = tc.until
				}
				require.Equal(t, want, resp[0].Granted, "%v", resp[0])
				if !want {
					require.Equal(t, uint64(1), p.n.Status().Term, "a refused request's term is not adopted")
					d := p.eventsOf(election.EventVoteDenied)
					require.Equal(t, "leader known", d[len(d)-1].Reason)
				}
			})
		}
	}
}

// TestStickyUntilTimeoutForgetsOnOwnTimer: with StickyUntilTimeout a
// follower that keeps hearing from its leader stays loyal across its own
// timer's fires (CheckLastContact); once the leader is silent, the first
// fire that finds the contact older than ET makes it forget the leader and
// campaign, after which it grants pre-votes.
func TestStickyUntilTimeoutForgetsOnOwnTimer(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.PreVote, c.LeaderStickiness, c.Stickiness = true, true, election.StickyUntilTimeout
		c.Detection = election.CheckLastContact
	}).start(t)
	for i := 1; i <= 20; i++ {
		p.v.AdvanceTo(time.Duration(i) * et / 2)
		p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	}
	last := p.v.Now()
	p.take()
	p.n.Step(election.Message{Type: election.MsgPreVote, From: 3, To: 1, Term: 2})
	require.False(t, p.take()[0].Granted)
	for p.n.Status().Leader == 2 {
		require.NotZero(t, p.v.AdvanceToNext())
	}
	require.GreaterOrEqual(t, p.v.Now()-last, et)
	require.Equal(t, election.PreCandidate, p.n.Status().Role)
	p.take()
	p.n.Step(election.Message{Type: election.MsgPreVote, From: 3, To: 1, Term: 2})
	require.True(t, p.take()[0].Granted)
}

// TestHeartbeatJitterAndPerPeer checks the leader's heartbeat schedule:
// every peer heartbeated on winning, then every HeartbeatInterval (no
// jitter) or every [hb, 2hb) (Proportional(1)), to all peers at once or
// per peer on independent timers.
func TestHeartbeatJitterAndPerPeer(t *testing.T) {
	cases := []struct {
		name    string
		jitter  repeated.Jitter
		perPeer bool
	}{
		{"fixed, shared timer", nil, false},
		{"fixed, per peer", nil, true},
		{"jittered, shared timer", repeated.Proportional(1), false},
		{"jittered, per peer", repeated.Proportional(1), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, func(c *election.Config) { c.HeartbeatJitter, c.Emulate.HeartbeatPerPeer = tc.jitter, tc.perPeer }).start(t)
			p.elect(t)
			won := p.v.Now()
			sent := map[election.ID][]time.Duration{}
			collect := func() {
				for _, m := range p.take() {
					if m.Type == election.MsgHeartbeat {
						sent[m.To] = append(sent[m.To], p.v.Now())
					}
				}
			}
			collect()
			require.Equal(t, []time.Duration{won}, sent[2], "heartbeat at once on winning")
			require.Equal(t, []time.Duration{won}, sent[3])
			for p.v.Now() < won+60*hb {
				require.NotZero(t, p.v.AdvanceToNext())
				collect()
			}
			distinct := map[time.Duration]bool{}
			for _, peer := range []election.ID{2, 3} {
				times := sent[peer]
				require.Greater(t, len(times), 25)
				for i := 1; i < len(times); i++ {
					gap := times[i] - times[i-1]
					distinct[gap] = true
					if tc.jitter == nil {
						require.Equal(t, hb, gap)
					} else {
						require.GreaterOrEqual(t, gap, hb)
						require.Less(t, gap, 2*hb)
					}
				}
			}
			if tc.jitter != nil {
				require.Greater(t, len(distinct), 10, "periods are drawn afresh")
			}
			n := min(len(sent[2]), len(sent[3]))
			if tc.perPeer && tc.jitter != nil {
				require.NotEqual(t, sent[2][:n], sent[3][:n], "peers' schedules are independent")
			} else {
				require.Equal(t, sent[2][:n], sent[3][:n], "peers are heartbeated together")
			}
			// A forced broadcast reaches every peer and re-arms every timer.
			require.NoError(t, p.n.BroadcastHeartbeat())
			forced := p.v.Now()
			collect()
			require.Equal(t, forced, sent[2][len(sent[2])-1])
			require.Equal(t, forced, sent[3][len(sent[3])-1])
			p.v.AdvanceTo(forced + hb - 1)
			collect()
			require.Equal(t, forced, sent[2][len(sent[2])-1], "the schedule restarted")
			// A deposed leader stops heartbeating on every timer.
			p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 9})
			p.take()
			p.v.AdvanceBy(10 * hb)
			for _, m := range p.take() {
				require.NotEqual(t, election.MsgHeartbeat, m.Type)
			}
		})
	}
}

// TestKeepTimerOnStepDownInsideElectionTrigger covers a synchronous
// transport: the candidate is deposed while its election timer's trigger
// is still on the stack, so the election timer re-arms only when the
// trigger returns. It must re-arm at the kept deadline, and with a fresh
// timeout if something re-armed it in between (the kept deadline must not
// leak into a later schedule).
func TestKeepTimerOnStepDownInsideElectionTrigger(t *testing.T) {
	for _, heartbeatToo := range []bool{false, true} {
		v := newVirtual(t)
		var n *election.Node
		var voteDeadline time.Duration
		replied := false
		tr := election.TransportFunc(func(m election.Message) {
			if m.Type != election.MsgVote || replied {
				return
			}
			replied = true
			_, _, voteDeadline, _ = n.TimerDeadlines()
			n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 5})
			if heartbeatToo {
				n.Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 5})
			}
		})
		cfg := validConfig()
		cfg.ElectionTimeout, cfg.HeartbeatInterval, cfg.VoteTimeout = et, hb, et
		cfg.PreVote, cfg.CheckQuorum, cfg.Emulate.KeepTimerOnStepDown = false, false, true
		var err error
		n, err = election.NewNode(cfg, v.Wheel, tr, election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		require.NoError(t, n.Start())
		for !replied {
			require.NotZero(t, v.AdvanceToNext())
		}
		firedAt := v.Now()
		st := n.Status()
		require.Equal(t, election.Follower, st.Role)
		require.Equal(t, uint64(5), st.Term)
		el, ok, _, _ := n.TimerDeadlines()
		require.True(t, ok)
		if !heartbeatToo {
			require.Equal(t, voteDeadline, el, "armed after the trigger, at the kept deadline")
		} else {
			require.NotEqual(t, voteDeadline, el, "the heartbeat re-armed it afresh")
			require.GreaterOrEqual(t, el, firedAt+et)
		}
		n.Stop()
	}
}

// TestExternalHeartbeat: with ExternalHeartbeat a leader heartbeats on
// winning and then only when its owner calls BroadcastHeartbeat; it arms
// no heartbeat timer. CheckQuorum still waits a HeartbeatInterval for an
// unanswered heartbeat.
func TestExternalHeartbeat(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.ExternalHeartbeat, c.CheckQuorum = true, true }).start(t)
	p.elect(t)
	won := p.v.Now()
	heartbeats := func() (to []election.ID) {
		for _, m := range p.take() {
			if m.Type == election.MsgHeartbeat {
				to = append(to, m.To)
			}
		}
		return to
	}
	require.Equal(t, []election.ID{2, 3}, heartbeats(), "a heartbeat to every peer on winning")
	answer := func() {
		for _, peer := range []election.ID{2, 3} {
			p.n.Step(election.Message{Type: election.MsgHeartbeatResp, From: peer, To: 1, Term: 1, Granted: true, Sent: p.v.Now()})
		}
	}
	answer()
	p.v.AdvanceTo(won + 3*hb)
	require.Empty(t, heartbeats(), "no heartbeat timer")
	require.Zero(t, p.n.HeartbeatTimers(), "no heartbeat timer exists")

	// The owner drives the heartbeats; the leader keeps its quorum.
	for i := 4; i <= 40; i++ {
		p.v.AdvanceTo(won + time.Duration(i)*hb)
		require.NoError(t, p.n.BroadcastHeartbeat())
		require.Equal(t, []election.ID{2, 3}, heartbeats(), "round %d", i)
		answer()
	}
	require.Equal(t, election.Leader, p.n.Status().Role)
	require.True(t, p.n.QuorumContact())

	// Heartbeats unanswered: CheckQuorum deposes the leader.
	require.NoError(t, p.n.BroadcastHeartbeat())
	p.v.AdvanceBy(2 * et)
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.ErrorIs(t, p.n.BroadcastHeartbeat(), election.ErrNotLeader)
}

// TestHeartbeatReArmByReset: a heartbeat re-arms the election timer by
// its lock-free Reset only where that means the same as Restart: a
// running timer that did not fire since it was last (re)started, and an
// ElectionJitter whose draws ignore repeated.State, not wrapped by
// KeepTimerOnStepDown, a ServerLock or a ticker.
func TestHeartbeatReArmByReset(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *election.Config)
		want bool
	}{
		{"proportional", nil, true},
		{"uniform extra", func(c *election.Config) { c.ElectionJitter = repeated.UniformExtra(et) }, true},
		{"none", func(c *election.Config) { c.ElectionJitter = repeated.None() }, true},
		{"backoff", func(c *election.Config) { c.ElectionJitter = repeated.Backoff(3, 8*et) }, false},
		{"first only", func(c *election.Config) { c.ElectionJitter = repeated.FirstOnly() }, false},
		{"keep timer", func(c *election.Config) { c.Emulate.KeepTimerOnStepDown = true }, false},
		{"ticker", func(c *election.Config) { c.Emulate.Tick = et / 10 }, false},
		{"check last contact", func(c *election.Config) { c.Detection = election.CheckLastContact }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe(t, tc.edit).start(t)
			p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
			require.Equal(t, tc.want, p.n.HeartbeatReArm())
		})
	}

	// A trigger that did not restart the timer (a priority skip) makes
	// the next heartbeat restart it.
	p := newProbe(t, func(c *election.Config) {
		c.Priority, c.Priorities = 1, map[election.ID]int{1: 1, 2: 5}
	}).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	require.True(t, p.n.HeartbeatReArm())
	require.NotZero(t, p.v.AdvanceToNext()) // fires, skipped: priority below target
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.False(t, p.n.HeartbeatReArm(), "a trigger ran since the last restart")
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	require.True(t, p.n.HeartbeatReArm(), "the heartbeat restarted it")
}

func TestTimeoutNowCampaignsAtOnce(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.PreVote, c.Priority, c.Priorities = true, 1, map[election.ID]int{2: 100} }).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 4})
	p.take()
	p.n.Step(election.Message{Type: election.MsgTimeoutNow, From: 2, To: 1, Term: 4})
	st := p.n.Status()
	require.Equal(t, election.Candidate, st.Role, "no pre-vote, no priority skip")
	require.Equal(t, uint64(5), st.Term)
	for _, m := range p.take() {
		require.Equal(t, election.MsgVote, m.Type)
		require.True(t, m.Transfer)
		require.Equal(t, 1, m.Priority)
	}
}

func TestStickinessIgnoresVotesButNotTransfers(t *testing.T) {
	p := newProbe(t, func(c *election.Config) { c.LeaderStickiness = true }).start(t)
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	p.take()
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2})
	require.Equal(t, []election.Message{{Type: election.MsgVoteResp, From: 1, To: 3, Term: 1}}, p.take())
	require.Equal(t, uint64(1), p.n.Status().Term, "term of an ignored request is not adopted")
	require.Equal(t, int64(1), p.n.Stats().LeaseRejections)
	p.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2, Transfer: true})
	require.Equal(t, []election.Message{{Type: election.MsgVoteResp, From: 1, To: 3, Term: 2, Granted: true}}, p.take())
	// Once the leader is silent for ET, requests are considered again.
	p.v.AdvanceBy(et)
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 3})
	require.True(t, p.take()[0].Granted)
}

func TestPrioritySkipsAndDecays(t *testing.T) {
	p := newProbe(t, func(c *election.Config) {
		c.Priority, c.Priorities = 10, map[election.ID]int{2: 100, 3: 40}
	}).start(t)
	at := p.runToElection(t)
	// Target 100 decays 100 -> 80 -> 64 -> 52 -> 42 -> 32 -> 22 -> 12 -> 2
	// at every second timeout: 15 skips, and the 16th timeout campaigns.
	require.Equal(t, int64(15), p.n.Stats().PrioritySkips)
	require.GreaterOrEqual(t, at, 16*et)
	require.Less(t, at, 32*et)
	msgs := p.take()
	require.Equal(t, 10, msgs[0].Priority)
}
