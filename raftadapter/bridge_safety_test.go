package raftadapter

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// TestBridgeRejectsMalformedAtOnce is issue 10, defect 4: a request the
// node would drop as malformed is answered with an error at once, not
// after RespondTimeout, and never stepped into the node.
func TestBridgeRejectsMalformedAtOnce(t *testing.T) {
	cfg := DefaultBridgeConfig()
	cfg.RespondTimeout = time.Hour // the transport's 200ms would expire first
	b, fn, _, t2 := rawPair(t, cfg)

	var ae raft.AppendEntriesResponse
	err := t2.AppendEntries("1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr("2")}, &ae)
	require.ErrorContains(t, err, election.ErrMalformed.Error())
	require.ErrorContains(t, err, "MsgHeartbeat with term 0")
	var v raft.RequestVoteResponse
	err = t2.RequestVote("1", "a1", &raft.RequestVoteRequest{RPCHeader: hdr("2"), Term: math.MaxUint64}, &v)
	require.ErrorContains(t, err, "term 18446744073709551615 above MaxTerm")
	var pv raft.RequestPreVoteResponse
	err = t2.RequestPreVote("1", "a1", &raft.RequestPreVoteRequest{RPCHeader: hdr("2"), Term: 3, LastLogTerm: election.MaxTerm + 1}, &pv)
	require.ErrorContains(t, err, "last log term 4611686018427387905 above MaxTerm")
	st := b.Stats()
	require.Equal(t, int64(3), st.Rejected)
	require.Zero(t, st.Stepped+st.TimedOut)
	require.Empty(t, fn.steps, "nothing stepped")

	// The largest valid term still goes through.
	fn.respond = func(m election.Message) (election.Message, bool) {
		return election.Message{Type: election.MsgVoteResp, To: m.From, Term: m.Term}, true
	}
	err = t2.RequestVote("1", "a1", &raft.RequestVoteRequest{RPCHeader: hdr("2"), Term: election.MaxTerm}, &v)
	require.NoError(t, err)
	require.Equal(t, election.MaxTerm, fn.next(t).Term)
}

// TestBridgeHugeTermInResponse: a hashicorp peer answering a vote request
// with a term above election.MaxTerm (Bridge.call copies resp.Term) cannot
// move a real node's term: the node ignores the answer as malformed.
func TestBridgeHugeTermInResponse(t *testing.T) {
	_, t1 := raft.NewInmemTransportWithTimeout("a1", 200*time.Millisecond)
	_, t2 := raft.NewInmemTransportWithTimeout("a2", 200*time.Millisecond)
	t1.Connect("a2", t2)
	bc := DefaultBridgeConfig()
	bc.ID, bc.Peers = 1, map[election.ID]raft.ServerAddress{2: "a2"}
	b, err := NewBridge(bc, t1)
	require.NoError(t, err)
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	ignored := make(chan election.Event, 16)
	ec := election.DefaultConfig()
	ec.ID, ec.Voters = 1, []election.ID{1, 2}
	ec.PreVote = false
	ec.Rand = rand.New(rand.NewPCG(1, 2))
	ec.Observer = func(e election.Event) {
		if e.Type == election.EventIgnored {
			ignored <- e
		}
	}
	n, err := election.NewNode(ec, v.Wheel, b, election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, b.Start(n))
	t.Cleanup(func() {
		n.Stop()
		require.NoError(t, b.Close())
		_ = t1.Close()
		_ = t2.Close()
	})
	require.NoError(t, n.Start())

	served := make(chan struct{})
	go func() {
		defer close(served)
		rpc := <-t2.Consumer()
		rpc.Respond(&raft.RequestVoteResponse{RPCHeader: hdr("2"), Term: math.MaxUint64, Granted: true}, nil)
	}()
	require.NoError(t, n.Campaign())
	select {
	case e := <-ignored:
		require.Equal(t, election.MsgVoteResp, e.Msg)
		require.Equal(t, "malformed message: term 18446744073709551615 above MaxTerm (4611686018427387904)", e.Reason)
	case <-time.After(10 * time.Second):
		t.Fatal("the answer never reached the node")
	}
	<-served
	require.Equal(t, int64(1), n.Stats().IgnoredMalformed)
	st := n.Status()
	require.Equal(t, uint64(1), st.Term)
	require.Equal(t, election.Candidate, st.Role, "the forged grant did not count")
}
