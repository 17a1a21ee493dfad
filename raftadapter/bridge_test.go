package raftadapter

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// fakeNode is a Stepper that records what it is stepped with and answers
// through respond (if set), synchronously, as election.Node does.
type fakeNode struct {
	mu      sync.Mutex
	term    uint64
	steps   chan election.Message
	respond func(m election.Message) (election.Message, bool)
	out     election.Transport
}

func newFakeNode() *fakeNode { return &fakeNode{steps: make(chan election.Message, 64), term: 7} }

func (f *fakeNode) Step(m election.Message) {
	f.steps <- m
	f.mu.Lock()
	respond, out := f.respond, f.out
	f.mu.Unlock()
	if respond != nil {
		if r, ok := respond(m); ok {
			out.Send(r)
		}
	}
}

func (f *fakeNode) Status() election.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return election.Status{Term: f.term}
}

func (f *fakeNode) next(t *testing.T) election.Message {
	t.Helper()
	select {
	case m := <-f.steps:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no Step within 5s")
		return election.Message{}
	}
}

// rawPair returns the bridge of node 1 over an InmemTransport connected to
// a raw InmemTransport playing node 2, whose Consumer the test serves.
func rawPair(t *testing.T, cfg BridgeConfig) (*Bridge, *fakeNode, *raft.InmemTransport, *raft.InmemTransport) {
	t.Helper()
	_, t1 := raft.NewInmemTransportWithTimeout("a1", 200*time.Millisecond)
	_, t2 := raft.NewInmemTransportWithTimeout("a2", 200*time.Millisecond)
	t1.Connect("a2", t2)
	t2.Connect("a1", t1)
	cfg.ID = 1
	cfg.Peers = map[election.ID]raft.ServerAddress{2: "a2", 3: "a3"}
	b, err := NewBridge(cfg, t1)
	require.NoError(t, err)
	fn := newFakeNode()
	fn.out = b
	require.NoError(t, b.Start(fn))
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		_ = t1.Close()
		_ = t2.Close()
	})
	return b, fn, t1, t2
}

func hdr(id string) raft.RPCHeader {
	return raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(id), Addr: []byte("a" + id)}
}

// TestBridgeInbound: hashicorp RPCs become Steps, and the node's answers
// complete them, field by field.
func TestBridgeInbound(t *testing.T) {
	_, fn, _, t2 := rawPair(t, DefaultBridgeConfig())
	fn.respond = func(m election.Message) (election.Message, bool) {
		switch m.Type {
		case election.MsgPreVote:
			return election.Message{Type: election.MsgPreVoteResp, To: m.From, Term: m.Term, Granted: true}, true
		case election.MsgVote:
			return election.Message{Type: election.MsgVoteResp, To: m.From, Term: m.Term, Granted: m.Transfer}, true
		case election.MsgHeartbeat:
			return election.Message{Type: election.MsgHeartbeatResp, To: m.From, Term: m.Term + 1, Granted: false}, true
		}
		return election.Message{}, false
	}

	var pv raft.RequestPreVoteResponse
	require.NoError(t, t2.RequestPreVote("1", "a1", &raft.RequestPreVoteRequest{RPCHeader: hdr("2"), Term: 5, LastLogIndex: 9, LastLogTerm: 4}, &pv))
	require.Equal(t, election.Message{Type: election.MsgPreVote, From: 2, To: 1, Term: 5, LastLogIndex: 9, LastLogTerm: 4}, fn.next(t))
	require.True(t, pv.Granted)
	require.Equal(t, uint64(5), pv.Term)
	require.Equal(t, []byte("1"), pv.ID, "responses carry the bridge's RPC header")

	var v raft.RequestVoteResponse
	require.NoError(t, t2.RequestVote("1", "a1", &raft.RequestVoteRequest{RPCHeader: hdr("2"), Term: 6, LeadershipTransfer: true}, &v))
	require.Equal(t, election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 6, Transfer: true}, fn.next(t))
	require.True(t, v.Granted)

	var ae raft.AppendEntriesResponse
	require.NoError(t, t2.AppendEntries("1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr("2"), Term: 8}, &ae))
	require.Equal(t, election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 8}, fn.next(t))
	require.Equal(t, uint64(9), ae.Term)
	require.False(t, ae.Success)

	// TimeoutNow carries no term: the node's own is stamped.
	var tn raft.TimeoutNowResponse
	require.NoError(t, t2.TimeoutNow("1", "a1", &raft.TimeoutNowRequest{RPCHeader: hdr("2")}, &tn))
	require.Equal(t, election.Message{Type: election.MsgTimeoutNow, From: 2, To: 1, Term: 7}, fn.next(t))
}

// TestBridgeInboundErrors: RPCs the bridge cannot carry, and requests the
// node does not answer, are answered with an error and counted.
func TestBridgeInboundErrors(t *testing.T) {
	cfg := DefaultBridgeConfig()
	cfg.RespondTimeout = 20 * time.Millisecond
	b, fn, _, t2 := rawPair(t, cfg)

	var ae raft.AppendEntriesResponse
	err := t2.AppendEntries("1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr("2"), Term: 3,
		Entries: []*raft.Log{{Index: 1}}}, &ae)
	require.ErrorContains(t, err, ErrNotElection.Error())
	err = t2.AppendEntries("1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr("9"), Term: 3}, &ae)
	require.ErrorContains(t, err, ErrUnknownSender.Error())
	err = t2.AppendEntries("1", "a1", &raft.AppendEntriesRequest{RPCHeader: hdr("x"), Term: 3}, &ae)
	require.ErrorContains(t, err, ErrUnknownSender.Error())
	var is raft.InstallSnapshotResponse
	err = t2.InstallSnapshot("1", "a1", &raft.InstallSnapshotRequest{RPCHeader: hdr("2"), Term: 3}, &is, nil)
	require.ErrorContains(t, err, ErrNotElection.Error())
	require.Equal(t, int64(4), b.Stats().Rejected)

	// fakeNode without respond never answers: RespondTimeout.
	var v raft.RequestVoteResponse
	err = t2.RequestVote("1", "a1", &raft.RequestVoteRequest{RPCHeader: hdr("2"), Term: 6}, &v)
	require.ErrorContains(t, err, ErrRespondTimeout.Error())
	fn.next(t)
	require.Equal(t, int64(1), b.Stats().TimedOut)

	// An answer nobody waits for is counted, not delivered.
	b.Send(election.Message{Type: election.MsgVoteResp, From: 1, To: 2, Term: 6, Granted: true})
	require.Equal(t, int64(1), b.Stats().Unmatched)
}

// TestBridgeSupersede: a node that answers late answers the newest request;
// the older one is answered with ErrSuperseded at once.
func TestBridgeSupersede(t *testing.T) {
	cfg := DefaultBridgeConfig()
	cfg.RespondTimeout = 5 * time.Second
	b, fn, _, t2 := rawPair(t, cfg)

	errs := make(chan error, 2)
	resps := make(chan raft.RequestVoteResponse, 2)
	vote := func(term uint64) {
		var v raft.RequestVoteResponse
		err := t2.RequestVote("1", "a1", &raft.RequestVoteRequest{RPCHeader: hdr("2"), Term: term}, &v)
		errs <- err
		resps <- v
	}
	go vote(4)
	require.Equal(t, uint64(4), fn.next(t).Term)
	go vote(5)
	require.Equal(t, uint64(5), fn.next(t).Term)
	require.ErrorContains(t, <-errs, ErrSuperseded.Error())
	<-resps
	b.Send(election.Message{Type: election.MsgVoteResp, From: 1, To: 2, Term: 5, Granted: true})
	require.NoError(t, <-errs)
	require.Equal(t, raft.RequestVoteResponse{RPCHeader: b.header, Term: 5, Granted: true}, <-resps)
	st := b.Stats()
	require.Equal(t, int64(1), st.Superseded)
	require.Equal(t, int64(1), st.Answered)
}

// serve answers the raw transport's inbound RPCs with f until stop.
func serve(t2 *raft.InmemTransport, stop <-chan struct{}, f func(raft.RPC)) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case rpc := <-t2.Consumer():
				f(rpc)
			case <-stop:
				return
			}
		}
	})
	return &wg
}

// TestBridgeOutbound: requests become hashicorp RPCs, their answers become
// Steps.
func TestBridgeOutbound(t *testing.T) {
	b, fn, _, t2 := rawPair(t, DefaultBridgeConfig())
	stop := make(chan struct{})
	got := make(chan any, 8)
	wg := serve(t2, stop, func(rpc raft.RPC) {
		got <- rpc.Command
		switch c := rpc.Command.(type) {
		case *raft.RequestPreVoteRequest:
			rpc.Respond(&raft.RequestPreVoteResponse{Term: c.Term, Granted: true}, nil)
		case *raft.RequestVoteRequest:
			rpc.Respond(&raft.RequestVoteResponse{Term: c.Term + 1}, nil)
		case *raft.AppendEntriesRequest:
			rpc.Respond(&raft.AppendEntriesResponse{Term: c.Term, Success: true}, nil)
		case *raft.TimeoutNowRequest:
			rpc.Respond(&raft.TimeoutNowResponse{}, nil)
		}
	})
	defer func() { close(stop); wg.Wait() }()

	b.Send(election.Message{Type: election.MsgPreVote, From: 1, To: 2, Term: 3, LastLogIndex: 2, LastLogTerm: 1, Priority: 5})
	pv := (<-got).(*raft.RequestPreVoteRequest)
	require.Equal(t, []byte("1"), pv.ID)
	require.Equal(t, []byte("a1"), pv.Addr)
	require.Equal(t, raft.ProtocolVersion(raft.ProtocolVersionMax), pv.ProtocolVersion)
	require.Equal(t, [3]uint64{3, 2, 1}, [3]uint64{pv.Term, pv.LastLogIndex, pv.LastLogTerm})
	require.Equal(t, election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 3, Granted: true}, fn.next(t))

	b.Send(election.Message{Type: election.MsgVote, From: 1, To: 2, Term: 4, Transfer: true})
	v := (<-got).(*raft.RequestVoteRequest)
	require.True(t, v.LeadershipTransfer)
	require.Equal(t, []byte("a1"), v.Candidate)
	require.Equal(t, election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 5}, fn.next(t))

	b.Send(election.Message{Type: election.MsgHeartbeat, From: 1, To: 2, Term: 4})
	ae := (<-got).(*raft.AppendEntriesRequest)
	require.Equal(t, []byte("a1"), ae.Leader)
	require.Empty(t, ae.Entries)
	require.Zero(t, ae.PrevLogEntry+ae.PrevLogTerm+ae.LeaderCommitIndex, "NetworkTransport's heartbeat shape")
	require.Equal(t, election.Message{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 4, Granted: true}, fn.next(t))

	b.Send(election.Message{Type: election.MsgTimeoutNow, From: 1, To: 2, Term: 4})
	require.IsType(t, &raft.TimeoutNowRequest{}, <-got)

	// Dropped and counted: unknown peer, self, invalid type.
	b.Send(election.Message{Type: election.MsgVote, From: 1, To: 9, Term: 4})
	b.Send(election.Message{Type: election.MsgVote, From: 1, To: 1, Term: 4})
	b.Send(election.Message{Type: 0, From: 1, To: 2})
	require.Eventually(t, func() bool { return b.Stats().Sent == 4 }, 5*time.Second, time.Millisecond)
	st := b.Stats()
	require.Equal(t, int64(3), st.DroppedUnknown)
	require.Equal(t, int64(3), st.Delivered)
}

// TestBridgeNeverBlocks: a peer that never answers costs at most
// MaxInFlight goroutines per lane; the rest is dropped and counted, and Send
// returns at once.
func TestBridgeNeverBlocks(t *testing.T) {
	// In a synctest bubble the clock moves only while every goroutine of
	// the bubble is blocked: a Send that waited (for a lane, or for a
	// while before dropping) would move it, and a Send that returns at
	// once leaves it where it was, however loaded the machine. The raw
	// transport's RPCs time out only after a minute, and nobody answers
	// them until the Sends have returned.
	synctest.Test(t, func(t *testing.T) {
		_, t1 := raft.NewInmemTransportWithTimeout("a1", time.Minute)
		_, t2 := raft.NewInmemTransportWithTimeout("a2", time.Minute)
		t1.Connect("a2", t2)
		t2.Connect("a1", t1)
		defer func() { _ = t1.Close(); _ = t2.Close() }()
		cfg := DefaultBridgeConfig()
		cfg.MaxInFlight = 1
		cfg.ID = 1
		cfg.Peers = map[election.ID]raft.ServerAddress{2: "a2", 3: "a3"}
		b, err := NewBridge(cfg, t1)
		require.NoError(t, err)
		require.NoError(t, b.Start(newFakeNode()))
		start := time.Now()
		for range 5 {
			b.Send(election.Message{Type: election.MsgHeartbeat, From: 1, To: 2, Term: 1})
			b.Send(election.Message{Type: election.MsgVote, From: 1, To: 2, Term: 1})
		}
		require.Zero(t, time.Since(start), "Send waited")
		st := b.Stats()
		require.Equal(t, int64(2), st.Sent, "one per lane")
		require.Equal(t, int64(8), st.DroppedFull)
		// Answer the two RPCs with an error; Close waits for them, and
		// then drops.
		for range 2 {
			rpc := <-t2.Consumer()
			rpc.Respond(nil, errors.New("refused"))
		}
		require.NoError(t, b.Close())
		require.Equal(t, int64(2), b.Stats().RPCErrors)
		b.Send(election.Message{Type: election.MsgVote, From: 1, To: 2, Term: 1})
		require.Equal(t, int64(1), b.Stats().DroppedClosed)
		require.ErrorIs(t, b.Start(newFakeNode()), ErrBridgeClosed)
	})
}

func TestBridgeConfig(t *testing.T) {
	_, tr := raft.NewInmemTransport("x")
	defer func() { _ = tr.Close() }()
	cases := []struct {
		mod  func(*BridgeConfig)
		text string
	}{
		{func(c *BridgeConfig) { c.ID = 0 }, "BridgeConfig.ID"},
		{func(c *BridgeConfig) { c.Peers[0] = "a" }, "BridgeConfig.Peers 0: must not contain 0"},
		{func(c *BridgeConfig) { c.Peers[1] = "a" }, "BridgeConfig.Peers 1: must not contain the local ID"},
		{func(c *BridgeConfig) { c.Peers[2] = "" }, "BridgeConfig.Peers[2]"},
		{func(c *BridgeConfig) { c.MaxInFlight = -1 }, "BridgeConfig.MaxInFlight -1"},
		{func(c *BridgeConfig) { c.MaxInFlight = MaxMaxInFlight + 1 }, "BridgeConfig.MaxInFlight"},
		{func(c *BridgeConfig) { c.RespondTimeout = -1 }, "BridgeConfig.RespondTimeout"},
	}
	for _, tc := range cases {
		c := DefaultBridgeConfig()
		c.ID = 1
		c.Peers = map[election.ID]raft.ServerAddress{2: "b"}
		tc.mod(&c)
		_, err := NewBridge(c, tr)
		require.ErrorContains(t, err, tc.text)
	}
	c := BridgeConfig{ID: 1}
	b, err := NewBridge(c, tr)
	require.NoError(t, err, "zero values mean defaults; no peers is a one-node group")
	require.Equal(t, DefaultMaxInFlight, b.cfg.MaxInFlight)
	require.Equal(t, DefaultRespondTimeout, b.cfg.RespondTimeout)
	require.Error(t, b.Start(nil))
	require.NoError(t, b.Start(newFakeNode()))
	require.ErrorIs(t, b.Start(newFakeNode()), ErrBridgeStarted)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "idempotent")
	_, err = NewBridge(c, nil)
	require.Error(t, err)

	id, err := ElectionID(ServerIDOf(42))
	require.NoError(t, err)
	require.Equal(t, election.ID(42), id)
	_, err = ElectionID("0")
	require.Error(t, err)
}

// electionMember is one election node on its bridge and transport.
type electionMember struct {
	id     election.ID
	node   *election.Node
	bridge *Bridge
	trans  innerTransport
	down   bool
}

func (m *electionMember) kill(t *testing.T) {
	m.node.Stop()
	require.NoError(t, m.bridge.Close())
	if cs, ok := m.trans.(interface{ CloseStreams() }); ok {
		cs.CloseStreams()
	}
	require.NoError(t, m.trans.Close())
	m.down = true
}

// startElectionCluster runs three election nodes on a real-time wheel,
// talking through bridges over hashicorp transports of the given kind.
func startElectionCluster(t *testing.T, kind TransportKind) []*electionMember {
	t.Helper()
	seed := testSeed(t)
	logger := testLogger(t)
	w, err := wheel.New(wheel.DefaultConfig())
	require.NoError(t, err)
	const rpcTimeout = 200 * time.Millisecond
	ids := []election.ID{1, 2, 3}
	members := make([]*electionMember, len(ids))
	for i, id := range ids {
		m := &electionMember{id: id}
		switch kind {
		case TransportInmem:
			_, m.trans = raft.NewInmemTransportWithTimeout(raft.ServerAddress("e"+ServerIDOf(id)), rpcTimeout)
		case TransportTCP:
			m.trans, err = raft.NewTCPTransportWithLogger("127.0.0.1:0", nil, 3, rpcTimeout, logger.Named("net"))
			require.NoError(t, err)
		}
		members[i] = m
	}
	for _, m := range members {
		peers := map[election.ID]raft.ServerAddress{}
		for _, o := range members {
			if o != m {
				peers[o.id] = o.trans.LocalAddr()
				if kind == TransportInmem {
					m.trans.(*raft.InmemTransport).Connect(o.trans.LocalAddr(), o.trans)
				}
			}
		}
		bc := DefaultBridgeConfig()
		bc.ID, bc.Peers, bc.RespondTimeout = m.id, peers, 100*time.Millisecond
		bc.Logger = logger.Named("bridge" + string(ServerIDOf(m.id)))
		m.bridge, err = NewBridge(bc, m.trans)
		require.NoError(t, err)
		ec := election.DefaultConfig()
		ec.ID, ec.Voters = m.id, ids
		ec.ElectionTimeout = 100 * time.Millisecond
		ec.HeartbeatInterval = 0 // ET/10
		ec.VoteTimeout = 0       // ET
		ec.StepDownInterval = 0  // ET/2
		ec.Rand = rand.New(rand.NewPCG(seed, uint64(m.id)))
		ec.Logger = logger.Named("election" + string(ServerIDOf(m.id)))
		m.node, err = election.NewNode(ec, w, m.bridge, election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		require.NoError(t, m.bridge.Start(m.node))
	}
	for _, m := range members {
		require.NoError(t, m.node.Start())
	}
	t.Cleanup(func() {
		for _, m := range members {
			m.node.Stop()
		}
		var wg sync.WaitGroup
		for _, m := range members {
			if !m.down {
				wg.Go(func() { _ = m.bridge.Close() })
			}
		}
		wg.Wait()
		for _, m := range members {
			if !m.down {
				if cs, ok := m.trans.(interface{ CloseStreams() }); ok {
					cs.CloseStreams()
				}
				_ = m.trans.Close()
			}
		}
		w.Stop()
		for _, m := range members {
			t.Logf("node %d: %+v", m.id, m.bridge.Stats())
		}
	})
	return members
}

// agreedLeader returns the leader all live members agree on, in one term.
func agreedLeader(members []*electionMember) (election.ID, uint64, bool) {
	var leader election.ID
	var term uint64
	for _, m := range members {
		if m.down {
			continue
		}
		st := m.node.Status()
		if st.Leader == election.None || (leader != election.None && (st.Leader != leader || st.Term != term)) {
			return election.None, 0, false
		}
		leader, term = st.Leader, st.Term
	}
	for _, m := range members {
		if m.id == leader && !m.down && m.node.Status().Role == election.Leader {
			return leader, term, true
		}
	}
	return election.None, 0, false
}

func waitAgreedLeader(t *testing.T, members []*electionMember) (election.ID, uint64) {
	t.Helper()
	var leader election.ID
	var term uint64
	require.Eventually(t, func() bool {
		var ok bool
		leader, term, ok = agreedLeader(members)
		return ok
	}, failoverBound, time.Millisecond, "no agreed leader")
	return leader, term
}

// TestBridgeElection runs three election.Nodes talking over hashicorp's
// wire: they elect a leader, the leader is killed (node, bridge and
// transport), and the two survivors elect a new one.
func TestBridgeElection(t *testing.T) {
	for _, kind := range []TransportKind{TransportInmem, TransportTCP} {
		t.Run(kind.String(), func(t *testing.T) {
			members := startElectionCluster(t, kind)
			leader, term := waitAgreedLeader(t, members)
			t.Logf("leader %d in term %d", leader, term)

			// Let the leader's heartbeats flow: each follower answers a few.
			require.Eventually(t, func() bool {
				for _, m := range members {
					if m.id != leader && m.bridge.Stats().Answered < 5 {
						return false
					}
				}
				return true
			}, failoverBound, time.Millisecond)

			start := time.Now()
			members[leader-1].kill(t)
			next, nextTerm := waitAgreedLeader(t, members)
			t.Logf("after killing %d: leader %d in term %d, %v", leader, next, nextTerm, time.Since(start))
			require.NotEqual(t, leader, next)
			require.Greater(t, nextTerm, term)

			var sent, delivered, answered int64
			for _, m := range members {
				st := m.bridge.Stats()
				sent, delivered, answered = sent+st.Sent, delivered+st.Delivered, answered+st.Answered
				require.Zero(t, st.Rejected+st.DroppedUnknown+st.Unmatched, "node %d: %+v", m.id, st)
				require.Zero(t, m.node.Stats().Anomalies, "node %d", m.id)
			}
			require.Positive(t, sent)
			require.Positive(t, delivered)
			require.Positive(t, answered)
			require.LessOrEqual(t, delivered, sent, "every answer stepped into a node was an RPC sent")
		})
	}
}

// TestBridgeTransfer: leadership transfer crosses the wire as TimeoutNow.
func TestBridgeTransfer(t *testing.T) {
	members := startElectionCluster(t, TransportInmem)
	leader, term := waitAgreedLeader(t, members)
	to := leader%3 + 1
	require.NoError(t, members[leader-1].node.TransferLeadership(to))
	require.Eventually(t, func() bool {
		l, tm, ok := agreedLeader(members)
		return ok && l == to && tm > term
	}, failoverBound, time.Millisecond, "leadership did not move from %d to %d", leader, to)
	// The TimeoutNow RPC was answered by the target's bridge at once.
	require.Positive(t, members[to-1].bridge.Stats().Answered)
}
