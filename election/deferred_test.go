package election_test

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// pendingStore is a DeferredStorage whose states wait in pending until the
// test writes them (durable) or crashes (they are lost).
type pendingStore struct {
	durable election.HardState
	pending []election.HardState
	seqs    []uint64
}

func (s *pendingStore) Load() (election.HardState, error) { return s.durable, nil }
func (s *pendingStore) Defer(hs election.HardState, seq uint64) {
	s.pending = append(s.pending, hs)
	s.seqs = append(s.seqs, seq)
}

// write makes the first k pending states durable and returns the last
// one's sequence number.
func (s *pendingStore) write(k int) uint64 {
	s.durable = s.pending[k-1]
	seq := s.seqs[k-1]
	s.pending, s.seqs = s.pending[k:], s.seqs[k:]
	return seq
}

func newDeferredNode(t *testing.T, v *wheel.Virtual, st *pendingStore, sent *[]election.Message) *election.Node {
	t.Helper()
	cfg := election.DefaultConfig()
	cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
	cfg.PreVote, cfg.CheckQuorum = false, false
	cfg.Logger = hclog.NewNullLogger()
	n, err := election.NewDeferredNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) {
		*sent = append(*sent, m)
	}), st, election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n.Start())
	return n
}

// TestDeferredHoldsUntilDurable checks that a deferred node sends nothing
// that depends on a state before the caller reports it durable, releases
// what it held in order when it is, and refuses to hibernate meanwhile.
func TestDeferredHoldsUntilDurable(t *testing.T) {
	v := newVirtual(t)
	defer v.Stop()
	st := &pendingStore{}
	var sent []election.Message
	n := newDeferredNode(t, v, st, &sent)

	// A vote request of term 2: the grant waits for term 2's vote.
	n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 2})
	require.Empty(t, sent, "the grant left before the vote was durable")
	require.Equal(t, []election.HardState{{Term: 2, Vote: 2}}, st.pending)
	require.False(t, n.Durable())
	// A heartbeat of the new leader meanwhile: its answer queues behind.
	n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 2})
	require.Empty(t, sent)
	_, err := n.Hibernate()
	require.ErrorIs(t, err, election.ErrNotDurable)

	n.Persisted(st.write(1))
	require.True(t, n.Durable())
	require.Len(t, sent, 2)
	require.Equal(t, election.MsgVoteResp, sent[0].Type)
	require.True(t, sent[0].Granted)
	require.Equal(t, election.MsgHeartbeatResp, sent[1].Type)
	n.Persisted(7) // a number never handed out: nothing
	require.Len(t, sent, 2)

	// Now nothing is pending: a heartbeat's answer leaves at once.
	n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 2})
	require.Len(t, sent, 3)
	_, err = n.Hibernate()
	require.NoError(t, err)
}

// TestDeferredCrashLosesNothingSent crashes a deferred node with states
// not durable: what it held never leaves, not even when the write is
// reported after the crash, and a node restarted on the storage starts
// from the durable state. Two states pending, of which only the first
// becomes durable, release only what the first allowed.
func TestDeferredCrashLosesNothingSent(t *testing.T) {
	v := newVirtual(t)
	defer v.Stop()
	st := &pendingStore{}
	var sent []election.Message
	n := newDeferredNode(t, v, st, &sent)

	require.NoError(t, n.Campaign()) // term 1, votes for itself
	require.Empty(t, sent)
	n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2}) // term 2, votes for 3
	require.Len(t, st.pending, 2)
	n.Persisted(st.write(1))
	require.Len(t, sent, 2, "term 1's vote requests leave once term 1 is durable")
	for _, m := range sent {
		require.Equal(t, election.MsgVote, m.Type)
		require.Equal(t, uint64(1), m.Term)
	}
	require.False(t, n.Durable())

	n.Stop()
	n.Persisted(2) // too late: the node crashed
	require.Len(t, sent, 2, "nothing held leaves after a crash")
	st.pending, st.seqs = nil, nil // lost with the crash

	sent = nil
	n = newDeferredNode(t, v, st, &sent)
	s := n.Status()
	require.Equal(t, uint64(1), s.Term)
	require.Equal(t, election.ID(1), s.Vote)
	// Term 2's request again: granted to whoever asks first now, as the
	// vote for 3 was never sent.
	n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 2})
	n.Persisted(st.write(1))
	require.Len(t, sent, 1)
	require.True(t, sent[0].Granted)
	require.Equal(t, election.ID(2), sent[0].To)
	v.AdvanceBy(time.Millisecond)
}
