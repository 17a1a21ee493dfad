package election_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/stretchr/testify/require"
)

// chooser draws the choices of a hostile message: *rand.Rand for the
// randomized schedules, byteSource for the fuzz target.
type chooser interface {
	IntN(n int) int
	Uint64() uint64
}

// byteSource is a chooser reading the fuzzer's bytes; once they are used
// up every choice is 0.
type byteSource struct{ b []byte }

func (s *byteSource) empty() bool { return len(s.b) == 0 }

func (s *byteSource) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *byteSource) IntN(n int) int {
	if n <= 1 {
		return 0
	}
	v := int(s.byte())
	if n > 256 {
		v = v<<8 | int(s.byte())
	}
	return v % n
}

func (s *byteSource) Uint64() uint64 {
	var v uint64
	for range 8 {
		v = v<<8 | uint64(s.byte())
	}
	return v
}

// extremeTerm picks a term for a hostile message to a node in term cur:
// small, around cur, around MaxTerm, at the top of the uint64 range, or
// anything.
func extremeTerm(ch chooser, cur uint64) uint64 {
	switch ch.IntN(13) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return cur - min(cur, 1)
	case 3:
		return cur
	case 4:
		return cur + 1
	case 5:
		return cur + 2
	case 6:
		return election.MaxTerm - 1
	case 7:
		return election.MaxTerm
	case 8:
		return election.MaxTerm + 1
	case 9:
		return math.MaxUint64 - 1
	case 10:
		return math.MaxUint64
	case 11:
		return uint64(ch.IntN(16))
	}
	return ch.Uint64()
}

// hostileMessage builds an arbitrary message for a live node of c: any
// type (invalid ones included), any sender (unknown ids, None and the
// node itself included), sometimes the wrong recipient, extreme terms and
// log positions. It cannot forge a vote: a granted MsgVoteResp is kept
// only if its sender really voted for the recipient in that term (a
// replay), otherwise it becomes a rejection; Raft assumes voters do not
// lie about their votes (see the package documentation). The message is
// for node target; ok is false if that node is down.
func (c *cluster) hostileMessage(ch chooser) (m election.Message, target election.ID, ok bool) {
	target = c.ids[ch.IntN(len(c.ids))]
	n := c.nodes[target]
	if n == nil {
		return m, target, false
	}
	cur := n.Status().Term
	senders := append([]election.ID{election.None, target, election.ID(len(c.ids) + 1), math.MaxUint64}, c.ids...)
	m = election.Message{
		Type:         election.MsgType(ch.IntN(int(election.MsgTimeoutNow) + 3)),
		From:         senders[ch.IntN(len(senders))],
		To:           target,
		Term:         extremeTerm(ch, cur),
		LastLogIndex: []uint64{0, 1, 5, math.MaxUint64}[ch.IntN(4)],
		LastLogTerm:  extremeTerm(ch, cur),
		Granted:      ch.IntN(2) == 0,
		Transfer:     ch.IntN(4) == 0,
		Priority:     []int{0, 1, -1, math.MaxInt, math.MinInt}[ch.IntN(5)],
	}
	if ch.IntN(8) == 0 {
		m.To = senders[ch.IntN(len(senders))]
	}
	if v, _ := c.check.VoteOf(m.From, m.Term); m.Type == election.MsgVoteResp && m.Granted && v != target {
		m.Granted = false
	}
	return m, target, true
}

// inject steps a hostile message into a live node and describes it.
func (c *cluster) inject(ch chooser) string {
	m, target, ok := c.hostileMessage(ch)
	if !ok {
		return "inject into a crashed node: nothing"
	}
	c.check.ForgedLeaders = true
	c.noteForgery(m)
	c.nodes[target].Step(m)
	return fmt.Sprintf("inject into n%d: %v", target, m)
}

// noteForgery turns the lease checks off for the rest of a run once m is
// a forged leadership transfer: a MsgTimeoutNow or a vote request marked
// Transfer makes voters grant votes inside a lease, as a real transfer
// does, but without the leader giving its lease up first. Like a forged
// vote, it is a lie Raft's lease cannot survive.
func (c *cluster) noteForgery(m election.Message) {
	if m.Type == election.MsgTimeoutNow || (m.Type == election.MsgVote && m.Transfer) {
		c.leases = false
		c.forgedTransfer = true
	}
}

func TestStepIgnoresBadInput(t *testing.T) {
	p := newProbe(t, nil)
	hbm := election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 3}
	p.n.Step(hbm) // before Start
	require.Equal(t, int64(1), p.n.Stats().IgnoredStopped)
	p.start(t)
	p.n.Step(hbm)
	p.take()
	before := p.n.Status()

	cases := []struct {
		name    string
		m       election.Message
		counter func(s election.Stats) int64
	}{
		{"wrong To", election.Message{Type: election.MsgVote, From: 2, To: 3, Term: 9}, func(s election.Stats) int64 { return s.IgnoredWrongTo }},
		{"To is None", election.Message{Type: election.MsgVote, From: 2, Term: 9}, func(s election.Stats) int64 { return s.IgnoredWrongTo }},
		{"unknown sender", election.Message{Type: election.MsgVote, From: 9, To: 1, Term: 9}, func(s election.Stats) int64 { return s.IgnoredUnknown }},
		{"sender None", election.Message{Type: election.MsgHeartbeat, To: 1, Term: 9}, func(s election.Stats) int64 { return s.IgnoredUnknown }},
		{"from itself", election.Message{Type: election.MsgHeartbeat, From: 1, To: 1, Term: 9}, func(s election.Stats) int64 { return s.IgnoredUnknown }},
		{"zero type", election.Message{From: 2, To: 1, Term: 9}, func(s election.Stats) int64 { return s.IgnoredMalformed }},
		{"unknown type", election.Message{Type: 200, From: 2, To: 1, Term: 9}, func(s election.Stats) int64 { return s.IgnoredMalformed }},
		{"request with term 0", election.Message{Type: election.MsgVote, From: 2, To: 1}, func(s election.Stats) int64 { return s.IgnoredMalformed }},
		{"stale heartbeat", election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 2}, func(s election.Stats) int64 { return s.IgnoredStale }},
		{"stale timeout-now", election.Message{Type: election.MsgTimeoutNow, From: 2, To: 1, Term: 1}, func(s election.Stats) int64 { return s.IgnoredStale }},
		{"stale vote response", election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true}, func(s election.Stats) int64 { return s.IgnoredStale }},
		{"unexpected vote response", election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 3, Granted: true}, func(s election.Stats) int64 { return s.IgnoredOther }},
		{"unexpected pre-vote response", election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 4, Granted: true}, func(s election.Stats) int64 { return s.IgnoredOther }},
		{"heartbeat response to a follower", election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 3, Granted: true}, func(s election.Stats) int64 { return s.IgnoredOther }},
		{"second leader in a term", election.Message{Type: election.MsgHeartbeat, From: 3, To: 1, Term: 3}, func(s election.Stats) int64 { return s.Anomalies }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ignored := len(p.eventsOf(election.EventIgnored))
			c := tc.counter(p.n.Stats())
			require.NotPanics(t, func() { p.n.Step(tc.m) })
			require.Equal(t, c+1, tc.counter(p.n.Stats()))
			evs := p.eventsOf(election.EventIgnored)
			require.Len(t, evs, ignored+1)
			require.Equal(t, tc.m.From, evs[len(evs)-1].Peer)
			require.Equal(t, tc.m.Type, evs[len(evs)-1].Msg)
			require.Equal(t, before, p.n.Status(), "state unchanged")
			if tc.name != "stale heartbeat" {
				require.Empty(t, p.take())
			}
			p.take()
		})
	}
	p.n.Stop()
	p.n.Step(hbm)
	require.Equal(t, int64(2), p.n.Stats().IgnoredStopped)
}

func TestRandomMessagesNeverPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	p := newProbe(t, func(c *election.Config) { c.PreVote, c.CheckQuorum, c.LeaderStickiness = true, true, true }).start(t)
	for range 20000 {
		m := election.Message{
			Type: election.MsgType(rng.IntN(10)), From: election.ID(rng.IntN(5)), To: election.ID(rng.IntN(3)),
			Term: uint64(rng.IntN(6)), LastLogIndex: uint64(rng.IntN(3)), LastLogTerm: uint64(rng.IntN(3)),
			Granted: rng.IntN(2) == 0, Transfer: rng.IntN(4) == 0,
		}
		require.NotPanics(t, func() { p.n.Step(m) })
		if rng.IntN(20) == 0 {
			p.v.AdvanceBy(time.Duration(rng.Int64N(int64(et))))
		}
	}
	c := electiontest.NewChecker(3)
	for _, e := range p.events {
		if e.Type != election.EventLeaderElected { // the fuzzer forges votes
			c.Observe(e)
		}
	}
	require.NoError(t, c.Err())
	s := p.n.Stats()
	require.Equal(t, int64(20000), s.Received)
	require.NotZero(t, s.IgnoredWrongTo+s.IgnoredUnknown+s.IgnoredMalformed)
}
