package etcdadapter

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

func TestNewNodeRejectsBadInput(t *testing.T) {
	w, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	tr := TransportFunc(func(*pb.Message) {})
	_, err = NewNode(validNodeConfig(), nil, tr)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewNode(validNodeConfig(), w.Wheel, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
	bad := validNodeConfig()
	bad.ElectionTick = 1
	_, err = NewNode(bad, w.Wheel, tr)
	requireFieldError(t, err, "ElectionTick", "greater than HeartbeatTick")
}

func TestNodeLifecycle(t *testing.T) {
	w, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	var events []election.Event
	cfg := validNodeConfig()
	cfg.Observer = func(e election.Event) { events = append(events, e) }
	n, err := NewNode(cfg, w.Wheel, TransportFunc(func(*pb.Message) {}))
	require.NoError(t, err)
	require.Equal(t, uint64(1), n.ID())
	require.False(t, n.Status().Running)
	require.ErrorIs(t, n.Step(&pb.Message{}), ErrNotRunning)
	require.ErrorIs(t, n.Step(nil), ErrBadMessage)
	require.ErrorIs(t, n.Propose([]byte("x")), ErrNotRunning)
	require.Equal(t, int64(1), n.Stats().IgnoredStopped)

	require.NoError(t, n.Start(0))
	require.ErrorIs(t, n.Start(0), ErrRunning)
	require.Len(t, events, 1)
	require.Equal(t, election.EventRoleChange, events[0].Type)
	require.Equal(t, election.ReasonStart, events[0].Reason)

	// A message for another node, and a local message type from the
	// network, are refused and reported.
	require.NoError(t, n.Step(&pb.Message{From: new(uint64(2)), To: new(uint64(3)), Type: pb.MsgHeartbeat.Enum(), Term: new(uint64(1))}))
	require.NoError(t, n.Step(&pb.Message{From: new(uint64(2)), To: new(uint64(1)), Type: pb.MsgHup.Enum()}))
	require.Equal(t, int64(2), n.Stats().StepErrors)
	ignored := 0
	for _, e := range events {
		if e.Type == election.EventIgnored {
			ignored++
			require.Equal(t, election.ID(2), e.Peer)
		}
	}
	require.Equal(t, 2, ignored)
	require.Equal(t, uint64(0), n.Status().Term, "refused messages changed nothing")

	// A proposal without a leader is dropped by etcd and counted.
	require.NoError(t, n.Propose([]byte("x")))
	require.Equal(t, int64(1), n.Stats().ProposalsDropped)

	n.Crash()
	n.Crash() // idempotent
	require.NoError(t, n.Restart(0))
	require.NoError(t, n.Restart(0)) // crashes the running node first
	n.Close()
	require.ErrorIs(t, n.Start(0), ErrClosed)
	require.ErrorIs(t, n.Campaign(), ErrClosed)
	n.Close() // idempotent
}

// A transport may deliver synchronously, even back into the sender: the
// node queues what arrives while it is busy.
func TestSynchronousTransport(t *testing.T) {
	w, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	seed := testSeed(t)
	rng := trialRand(seed, 0)
	inv := checked(t, seed, 3)
	nodes := map[uint64]*Node{}
	tr := TransportFunc(func(m *pb.Message) { _ = nodes[m.GetTo()].Step(m) })
	for id := uint64(1); id <= 3; id++ {
		cfg := fastConfig()
		cfg.ID, cfg.Peers, cfg.Rand, cfg.Observer = id, []uint64{1, 2, 3}, rng, inv.Observe
		n, err := NewNode(cfg, w.Wheel, tr)
		require.NoError(t, err)
		nodes[id] = n
		defer n.Close()
	}
	for _, n := range nodes {
		require.NoError(t, n.Start(0))
	}
	w.AdvanceTo(5 * time.Second)
	require.NotZero(t, inv.Elected(), "seed %d", seed)
	leaders := 0
	for _, n := range nodes {
		if n.Status().Role == election.Leader {
			leaders++
		}
	}
	require.Equal(t, 1, leaders)
}

// On a real-time wheel the nodes tick on the wheel's driver goroutine and
// step messages on the goroutines that deliver them; the node serializes
// the two. (Run it with -race.)
func TestRealTimeWheel(t *testing.T) {
	w, err := wheel.New(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()
	elected := make(chan uint64, 16)
	var mu sync.Mutex
	nodes := map[uint64]*Node{}
	// Deliveries are counted in wg under mu, and none starts once done
	// is set: a tick on the wheel's driver may send while the test
	// closes the nodes, and a WaitGroup must not be added to while it
	// is waited on.
	var wg sync.WaitGroup
	done := false
	tr := TransportFunc(func(m *pb.Message) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		n := nodes[m.GetTo()]
		wg.Add(1)
		go func() { defer wg.Done(); _ = n.Step(m) }()
	})
	obs := func(e election.Event) {
		if e.Type == election.EventLeaderElected {
			elected <- uint64(e.Node)
		}
	}
	for id := uint64(1); id <= 3; id++ {
		cfg := DefaultConfig()
		cfg.ID, cfg.Peers, cfg.TickInterval, cfg.Observer = id, []uint64{1, 2, 3}, time.Millisecond, obs
		n, err := NewNode(cfg, w, tr)
		require.NoError(t, err)
		mu.Lock()
		nodes[id] = n
		mu.Unlock()
	}
	for _, n := range nodes {
		require.NoError(t, n.Start(0))
	}
	select {
	case id := <-elected:
		require.Contains(t, nodes, id)
	case <-time.After(10 * time.Second):
		t.Fatal("no leader within 10s of real time at 1ms ticks")
	}
	mu.Lock()
	done = true
	mu.Unlock()
	for _, n := range nodes {
		n.Close()
	}
	wg.Wait()
}
