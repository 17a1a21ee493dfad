package multiraft_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// TestRealTime runs three hosts on a real-time wheel while other
// goroutines touch groups and read their status, as a real host's callers
// do (run it with -race). Safety must hold and groups must hibernate and
// wake; the test waits for events, never for a time.
func TestRealTime(t *testing.T) {
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(wcfg)
	require.NoError(t, err)
	defer w.Stop()
	net := multiraft.NewMemNetwork(w, time.Millisecond)
	var mu sync.Mutex
	check := electiontest.NewGroups[multiraft.GroupID](func(multiraft.GroupID) int { return 3 })
	voters := []election.ID{1, 2, 3}
	const groups = 30
	hosts := map[election.ID]*multiraft.Host{}
	for _, id := range voters {
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Election.ElectionTimeout = 100 * time.Millisecond
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		cfg.HibernateAfter = 50 * time.Millisecond
		cfg.Observer = func(g multiraft.GroupID, e election.Event) {
			mu.Lock()
			check.Observe(g, e)
			mu.Unlock()
		}
		h, err := multiraft.NewHost(cfg, w, net.Transport())
		require.NoError(t, err)
		defer h.Stop()
		hosts[id] = h
		net.Attach(h)
		for g := range groups {
			require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: voters, Storage: election.NewMemoryStorage()}))
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				h := hosts[voters[rng.IntN(3)]]
				g := multiraft.GroupID(rng.IntN(groups))
				if rng.IntN(2) == 0 {
					_ = h.Touch(g)
				} else {
					_, _ = h.Status(g)
				}
				time.Sleep(time.Millisecond) // pace the callers; not a wait for a result
			}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s := hosts[1].Stats()
		if s.Hibernations > 10 && s.Wakes > 10 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	s := hosts[1].Stats()
	require.Greater(t, s.Hibernations, uint64(10))
	require.Greater(t, s.Wakes, uint64(10))
	for _, h := range hosts {
		h.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, check.Err())
}
