package election_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/wheel"
	"github.com/raftick/raftick/wheel/wheeltest"
	"github.com/stretchr/testify/require"
)

// TestRealTimeCluster runs three nodes on a real-time wheel (timers on the
// wheel's goroutine, messages too), for the race detector, inside a
// testing/synctest bubble: the wheel sleeps on the bubble's clock, so the
// test takes no wall time and its time limits cannot trip on a loaded
// machine.
func TestRealTimeCluster(t *testing.T) {
	synctest.Test(t, realTimeCluster)
}

func realTimeCluster(t *testing.T) {
	w, err := wheeltest.NewInBubble(wheel.DefaultConfig())
	require.NoError(t, err)
	defer func() {
		w.Stop()
		<-w.Done()
	}()
	net := election.NewMemNetwork(w, time.Millisecond)
	elected := make(chan election.Event, 16)
	voters := []election.ID{1, 2, 3}
	var nodes []*election.Node
	var mu sync.Mutex
	c := electiontest.NewChecker(3)
	for _, id := range voters {
		cfg := validConfig()
		cfg.ID, cfg.Voters = id, voters
		cfg.ElectionTimeout, cfg.HeartbeatInterval = 50*time.Millisecond, 10*time.Millisecond
		cfg.Rand = rand.New(rand.NewPCG(uint64(id), 1))
		cfg.Observer = func(e election.Event) {
			mu.Lock()
			c.Observe(e)
			mu.Unlock()
			if e.Type == election.EventLeaderElected {
				elected <- e
			}
		}
		n, err := election.NewNode(cfg, w, net, election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		net.Attach(n)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		require.NoError(t, n.Start())
	}
	var e election.Event
	select {
	case e = <-elected:
	case <-time.After(10 * time.Second):
		t.Fatal("no leader within 10s")
	}
	// Crash the leader: another one takes over.
	nodes[e.Node-1].Stop()
	net.Detach(e.Node)
	for {
		select {
		case e2 := <-elected:
			if e2.Node == e.Node {
				continue
			}
			require.Greater(t, e2.Term, e.Term)
		case <-time.After(10 * time.Second):
			t.Fatal("no second leader within 10s")
		}
		break
	}
	for _, n := range nodes {
		n.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, c.Err())
}
