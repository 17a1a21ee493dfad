package main

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/pebblestore"
	"github.com/raftick/raftick/wheel"
)

// memCluster is TestKill9's cluster in one process on a MemNetwork: the
// same host configuration, a pebblestore per host, hosts stopped and
// restarted on their stores instead of processes killed.
type memCluster struct {
	t      *testing.T
	groups int
	cfg    config
	dir    string
	w      *wheel.Wheel
	net    *multiraft.MemNetwork
	hosts  map[election.ID]*multiraft.Host
	stores map[election.ID]*pebblestore.Store
	voters []election.ID

	mu       sync.Mutex
	killedAt time.Time
	lost     map[multiraft.GroupID]bool
	elected  map[multiraft.GroupID]time.Duration
}

func (c *memCluster) start(id election.ID) {
	t := c.t
	cfg := c.cfg
	cfg.id = id
	hcfg := hostConfig(cfg, hclog.NewNullLogger())
	hcfg.Observer = func(g multiraft.GroupID, e election.Event) {
		if e.Type != election.EventLeaderElected {
			return
		}
		c.mu.Lock()
		if c.lost[g] {
			if _, ok := c.elected[g]; !ok {
				c.elected[g] = time.Since(c.killedAt)
			}
		}
		c.mu.Unlock()
	}
	// A restarted host reopens nothing: it gets the same Store, as a
	// process restarted on its data directory would.
	if c.stores[id] == nil {
		st, err := pebblestore.Open(filepath.Join(c.dir, strconv.Itoa(int(id))))
		require.NoError(t, err)
		c.stores[id] = st
	}
	hcfg.Store = c.stores[id]
	h, err := multiraft.NewHost(hcfg, c.w, c.net.Transport())
	require.NoError(t, err)
	for g := 1; g <= c.groups; g++ {
		gid := multiraft.GroupID(g)
		require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: gid, Voters: c.voters, Leader: bootstrapLeader(c.voters, gid)}))
	}
	c.hosts[id] = h
	c.net.Attach(h)
}

// asleep waits until every group sleeps on every host: TestKill9's
// steady state.
func (c *memCluster) asleep() {
	require.Eventually(c.t, func() bool {
		for _, h := range c.hosts {
			if h.Stats().Hibernating != int64(c.groups) {
				return false
			}
		}
		return true
	}, *flagSettleT, 10*time.Millisecond, "groups never all hibernated")
}

// memFailover runs rounds kills of TestKill9 on a memCluster: wait until
// every group sleeps, stop one host at a random point of a heartbeat
// interval, wait until every group it led has elected a new leader (the
// failover: from the stop to the first LeaderElected on a survivor),
// restart it.
func memFailover(t *testing.T, rounds, groups int, et, hb time.Duration, seed uint64) []time.Duration {
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(wcfg)
	require.NoError(t, err)
	defer w.Stop()
	c := &memCluster{t: t, groups: groups, dir: t.TempDir(), w: w, net: multiraft.NewMemNetwork(w, 0),
		hosts: map[election.ID]*multiraft.Host{}, stores: map[election.ID]*pebblestore.Store{},
		voters: []election.ID{1, 2, 3},
		cfg:    config{electionTO: et, heartbeat: hb, hibernateAfter: time.Second}}
	for _, id := range c.voters {
		c.start(id)
	}
	defer func() {
		for _, h := range c.hosts {
			h.Stop()
		}
		for _, st := range c.stores {
			_ = st.Close()
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 47))
	var out []time.Duration
	for r := range rounds {
		c.asleep()
		// The victim leads something, as in TestKill9.
		var leaders []election.ID
		for _, id := range c.voters {
			for g := 1; g <= groups; g++ {
				if st, _ := c.hosts[id].Status(multiraft.GroupID(g)); st.Status.Role == election.Leader {
					leaders = append(leaders, id)
					break
				}
			}
		}
		victim := leaders[rng.IntN(len(leaders))]
		time.Sleep(time.Duration(rng.Int64N(int64(hb) * 2)))
		c.mu.Lock()
		c.lost, c.elected = map[multiraft.GroupID]bool{}, map[multiraft.GroupID]time.Duration{}
		for g := 1; g <= groups; g++ {
			if st, _ := c.hosts[victim].Status(multiraft.GroupID(g)); st.Status.Role == election.Leader {
				c.lost[multiraft.GroupID(g)] = true
			}
		}
		c.killedAt = time.Now()
		c.mu.Unlock()
		c.hosts[victim].Stop()
		c.net.Detach(victim)
		delete(c.hosts, victim)
		require.Eventually(t, func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return len(c.elected) == len(c.lost)
		}, *flagSettleT, 10*time.Millisecond, "lost groups never all elected a leader")
		c.mu.Lock()
		var fo []time.Duration
		for _, d := range c.elected {
			fo = append(fo, d)
		}
		t.Logf("MemNetwork round %d: host %d: %d groups lost, failover p50 %v p99 %v", r, victim, len(fo), pct(fo, 50), pct(fo, 99))
		out = append(out, fo...)
		c.lost = nil
		c.mu.Unlock()
		c.start(victim)
	}
	return out
}
