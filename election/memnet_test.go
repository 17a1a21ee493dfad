package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// memnetPair connects the probe node 1 and a real node 2 by a MemNetwork
// with a 3ms delay.
func memnetPair(t *testing.T) (*election.MemNetwork, *probe, *election.Node) {
	p := newProbe(t, nil).start(t)
	net := election.NewMemNetwork(p.v.Wheel, 3*time.Millisecond)
	cfg := validConfig()
	cfg.ID = 2
	n2, err := election.NewNode(cfg, p.v.Wheel, net, election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n2.Start())
	net.Attach(p.n)
	net.Attach(n2)
	require.Same(t, n2, net.Node(2))
	return net, p, n2
}

func TestMemNetworkDelayAndFaults(t *testing.T) {
	net, p, _ := memnetPair(t)
	hbm := election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1}
	net.Send(hbm)
	p.v.AdvanceBy(3*time.Millisecond - 1)
	require.Zero(t, p.n.Stats().Received, "not before the delay")
	p.v.AdvanceBy(1)
	require.Equal(t, int64(1), p.n.Stats().Received)
	require.Equal(t, election.ID(2), p.n.Status().Leader)

	net.Cut(2, 1)
	require.False(t, net.Connected(2, 1))
	require.True(t, net.Connected(1, 2))
	net.Send(hbm)
	// In flight when the link goes down: dropped too.
	net.Heal()
	net.Send(hbm)
	net.Cut(2, 1)
	p.v.AdvanceBy(10 * time.Millisecond)
	require.Equal(t, int64(1), p.n.Stats().Received)
	net.Heal()
	net.Partition([]election.ID{1}, []election.ID{2, 3})
	require.False(t, net.Connected(1, 2))
	require.False(t, net.Connected(3, 1))
	require.True(t, net.Connected(2, 3))
	net.Heal()
	net.Isolate(2, 1, 2, 3)
	require.False(t, net.Connected(2, 3))
	require.False(t, net.Connected(1, 2))
	net.Heal()

	// Route: loss and duplication.
	net.SetRoute(func(m election.Message) []time.Duration {
		if m.Term == 7 {
			return nil
		}
		return []time.Duration{time.Millisecond, 2 * time.Millisecond, -5}
	})
	net.Send(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 7})
	net.Send(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 8})
	p.v.AdvanceBy(10 * time.Millisecond)
	require.Equal(t, int64(4), p.n.Stats().Received)
	net.SetRoute(nil)

	// Nobody attached under To.
	net.Detach(1)
	net.Send(hbm)
	p.v.AdvanceBy(10 * time.Millisecond)
	require.Equal(t, int64(4), p.n.Stats().Received)
	s := net.Stats()
	require.Equal(t, int64(6), s.Sent)
	require.Equal(t, int64(2), s.Duplicated)
	require.Equal(t, int64(4), s.Delivered)
	require.Equal(t, int64(4), s.Dropped) // cut at send, cut in flight, route loss, detached
}

// TestMemNetworkClusterDeterministic: the same seed gives the same history.
func TestMemNetworkClusterDeterministic(t *testing.T) {
	run := func(seed uint64) []string {
		c := newCluster(t, clusterOpts{n: 5, delay: time.Millisecond, seed: seed})
		c.tracing = true
		rng := rand.New(rand.NewPCG(seed, 1))
		c.net.SetRoute(func(election.Message) []time.Duration {
			return []time.Duration{time.Duration(rng.Int64N(int64(5 * time.Millisecond)))}
		})
		c.startAll(t)
		c.runUntil(2*time.Second, func() bool { return false })
		l, ok := c.stableLeader()
		require.True(t, ok)
		c.crash(l)
		c.runUntil(4*time.Second, func() bool { return false })
		var out []string
		for _, e := range c.trace {
			out = append(out, e.String())
		}
		require.NoError(t, c.check.Err())
		return out
	}
	a, b := run(42), run(42)
	require.Equal(t, a, b)
	require.NotEqual(t, a, run(43))
}
