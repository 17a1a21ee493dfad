package multiraft_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
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
// wake. It runs in a testing/synctest bubble (the wheel sleeps on the
// bubble's clock), so its pacing and its limit are exact and take no
// wall time however loaded the machine.
func TestRealTime(t *testing.T) { synctest.Test(t, realTime) }

func realTime(t *testing.T) {
	w := multiraft.BubbleWheel(t)
	net := multiraft.NewMemNetwork(w, time.Millisecond)
	var mu sync.Mutex
	check := electiontest.NewGroups[multiraft.GroupID](func(multiraft.GroupID) int { return 3 })
	voters := []election.ID{1, 2, 3}
	const groups = 30
	hosts := map[election.ID]*multiraft.Host{}
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	for _, id := range voters {
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Election.ElectionTimeout = 100 * time.Millisecond
		// A real sink: the host's nodes share one metrics state
		// (election.Config.Shared), which this runs concurrently.
		cfg.Election.Metrics = sink
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
	require.Greater(t, s.Hibernations, int64(10))
	require.Greater(t, s.Wakes, int64(10))
	for _, h := range hosts {
		h.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	require.NoError(t, check.Err())
}

// TestParallelSteps steps heartbeat and answer batches from two peers
// into one Host on two goroutines at once (the lock-free path), while a
// third touches groups and the peers tell groups to hibernate, and a
// fourth reads statuses (run it with -race). It checks the host's
// accounting: every entry is delivered or ignored, none lost between the
// lock-free path and the locked one.
func TestParallelSteps(t *testing.T) {
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(wcfg)
	require.NoError(t, err)
	defer w.Stop()
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	cfg.Election.ElectionTimeout = time.Minute // no election while it runs
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.HibernateAfter = 20 * time.Millisecond
	cfg.LivenessTimeout = time.Hour
	h, err := multiraft.NewHost(cfg, w, multiraft.TransportFunc(func(multiraft.Batch) {}))
	require.NoError(t, err)
	defer h.Stop()
	const groups = 512
	voters := []election.ID{1, 2, 3}
	batches := map[election.ID]*multiraft.Batch{2: {From: 2, To: 1}, 3: {From: 3, To: 1}}
	for g := range groups {
		id := multiraft.GroupID(g + 1)
		leader := election.ID(2 + g%2)
		require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: id, Voters: voters, Storage: election.NewMemoryStorage(), Leader: leader}))
		b := batches[leader]
		b.Heartbeats = append(b.Heartbeats, multiraft.Heartbeat{Group: id, Term: 1})
		b.Responses = append(b.Responses, multiraft.HeartbeatResponse{Group: id, Term: 1, Granted: true}) // not its leader: ignored by the node
	}
	const rounds = 200
	var wg sync.WaitGroup
	for _, from := range []election.ID{2, 3} {
		b := *batches[from]
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(from), 1))
			for r := range rounds {
				b := b
				if r%16 == 0 {
					g := b.Heartbeats[rng.IntN(len(b.Heartbeats))].Group
					b.Controls = []multiraft.Control{{Kind: multiraft.Hibernate, Group: g, Term: 1}}
				}
				h.Step(b)
			}
		})
	}
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(4, 1))
		for range rounds * 4 {
			_ = h.Touch(multiraft.GroupID(1 + rng.IntN(groups)))
		}
	})
	wg.Go(func() {
		for r := range rounds {
			_, err := h.Status(multiraft.GroupID(1 + r%groups))
			require.NoError(t, err)
		}
	})
	wg.Wait()
	s := h.Stats()
	entries := int64(2 * rounds * groups) // heartbeats and answers of both peers
	require.Equal(t, entries, s.Delivered+s.Ignored, "every entry delivered or ignored: %+v", s)
	require.Zero(t, s.Ignored, "every entry's group and sender are known")
	t.Logf("%d hibernations, %d wakes, %d answered asleep", s.Hibernations, s.Wakes, s.AnsweredAsleep)
}

// TestTickKeepsItsRateWhenItRunsLong: a host's heartbeat tick that runs
// long (here its Transport takes 5 ms of the bubble's clock to send the
// tick's batch) must still begin every tick on time: it re-arms itself
// on its grid of deadlines as it begins (wheel.Timer.ResetAt), and a
// deadline computed from the wheel's coarse clock in a long callback
// would be late by the callback's length. Every tick's lateness
// (raftick.host.tick_lateness) must stay within the wheel's own.
func TestTickKeepsItsRateWhenItRunsLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const work = 5 * time.Millisecond
		w := multiraft.BubbleWheel(t)
		net := multiraft.NewMemNetwork(w, time.Millisecond)
		inner := net.Transport()
		slow := multiraft.TransportFunc(func(b multiraft.Batch) {
			if b.Tick {
				time.Sleep(work) // the tick's long work, on the wheel's driver
			}
			inner.Send(b)
		})
		voters := []election.ID{1, 2}
		sinks := map[election.ID]*tickLatenessSink{}
		for _, id := range voters {
			cfg := multiraft.DefaultConfig()
			cfg.ID = id
			cfg.HibernateAfter = 0
			sinks[id] = &tickLatenessSink{}
			cfg.Election.Metrics = sinks[id]
			h, err := multiraft.NewHost(cfg, w, slow)
			require.NoError(t, err)
			defer h.Stop()
			net.Attach(h)
			require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters, Storage: election.NewMemoryStorage(), Leader: 1}))
			require.NoError(t, h.Touch(1))
		}
		time.Sleep(2 * time.Second)
		ticks, worst := sinks[1].result()
		require.Greater(t, ticks, 15, "the leader's host ticked")
		require.LessOrEqual(t, worst, 2*w.Tick(), "a tick began %v late after ticks of %v", worst, work)
	})
}

// tickLatenessSink records raftick.host.tick_lateness.
type tickLatenessSink struct {
	metrics.BlackholeSink
	mu    sync.Mutex
	n     int
	worst time.Duration
}

func (s *tickLatenessSink) AddSampleWithLabels(key []string, v float32, _ []metrics.Label) {
	if len(key) == 3 && key[2] == "tick_lateness" {
		s.mu.Lock()
		s.n++
		s.worst = max(s.worst, time.Duration(float64(v)*float64(time.Millisecond)))
		s.mu.Unlock()
	}
}

func (s *tickLatenessSink) result() (int, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.worst
}
