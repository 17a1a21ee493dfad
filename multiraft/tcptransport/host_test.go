package tcptransport_test

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/tcptransport"
	"github.com/raftick/raftick/wheel"
)

// cluster is three Hosts on one real-time wheel, each with its own
// transport: over TCP on loopback, or (mem) one MemNetwork.
type cluster struct {
	w      *wheel.Wheel
	hosts  map[election.ID]*multiraft.Host
	trs    map[election.ID]*tcptransport.Transport
	mu     sync.Mutex
	check  *electiontest.Groups[multiraft.GroupID]
	voters []election.ID
	// elections counts LeaderElected events.
	elections atomic.Int64
}

// newCluster starts three hosts with groups groups, bootstrapped with
// leaders spread over the hosts; tune adjusts each host's Config.
func newCluster(tb testing.TB, groups int, mem bool, tune func(*multiraft.Config)) *cluster {
	tb.Helper()
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(wcfg)
	require.NoError(tb, err)
	c := &cluster{w: w, hosts: map[election.ID]*multiraft.Host{}, trs: map[election.ID]*tcptransport.Transport{},
		voters: []election.ID{1, 2, 3},
		check:  electiontest.NewGroups[multiraft.GroupID](func(multiraft.GroupID) int { return 3 })}
	lns := map[election.ID]net.Listener{}
	addrs := map[election.ID]string{}
	for _, id := range c.voters {
		lns[id] = listen(tb)
		addrs[id] = lns[id].Addr().String()
	}
	var memnet *multiraft.MemNetwork
	if mem {
		memnet = multiraft.NewMemNetwork(w, 0)
	}
	for _, id := range c.voters {
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		cfg.Observer = func(g multiraft.GroupID, e election.Event) {
			if e.Type == election.EventLeaderElected {
				c.elections.Add(1)
			}
			c.mu.Lock()
			c.check.Observe(g, e)
			c.mu.Unlock()
		}
		if tune != nil {
			tune(&cfg)
		}
		var h *multiraft.Host
		if mem {
			_ = lns[id].Close()
			h, err = multiraft.NewHost(cfg, w, memnet.Transport())
			require.NoError(tb, err)
			memnet.Attach(h)
		} else {
			peers := map[election.ID]string{}
			for p, a := range addrs {
				if p != id {
					peers[p] = a
				}
			}
			tr, err := tcptransport.New(config(id, lns[id], peers))
			require.NoError(tb, err)
			c.trs[id] = tr
			h, err = multiraft.NewHost(cfg, w, tr)
			require.NoError(tb, err)
			require.NoError(tb, tr.Start(h.Step))
		}
		c.hosts[id] = h
	}
	for g := range groups {
		gid := multiraft.GroupID(g + 1)
		c.mu.Lock()
		c.check.Group(gid).SetLeader(1, c.voters[g%3])
		c.mu.Unlock()
		for _, id := range c.voters {
			require.NoError(tb, c.hosts[id].AddGroup(multiraft.GroupConfig{ID: gid, Voters: c.voters,
				Storage: election.NewMemoryStorage(), Leader: c.voters[g%3]}))
		}
	}
	return c
}

// kill stops host id and closes its transport, as a crash would.
func (c *cluster) kill(id election.ID) {
	c.hosts[id].Stop()
	if tr := c.trs[id]; tr != nil {
		_ = tr.Close()
	}
	delete(c.hosts, id)
}

func (c *cluster) close() {
	for id := range c.hosts {
		c.kill(id)
	}
	c.w.Stop()
}

// leaders returns how many groups each live host believes it leads, and
// how many groups every live host knows a live leader of.
func (c *cluster) leaders(groups int) (map[election.ID]int, int) {
	lead := map[election.ID]int{}
	known := 0
	for g := range groups {
		ok := true
		for id, h := range c.hosts {
			st, err := h.Status(multiraft.GroupID(g + 1))
			if err != nil || c.hosts[st.Status.Leader] == nil {
				ok = false
				continue
			}
			if st.Status.Leader == id {
				lead[id]++
			}
		}
		if ok {
			known++
		}
	}
	return lead, known
}

// TestHostsOverTCP: three Hosts over TCP keep their bootstrapped leaders,
// and after one host dies its groups elect new leaders on the other two;
// election safety holds throughout.
func TestHostsOverTCP(t *testing.T) {
	const groups = 60
	c := newCluster(t, groups, false, func(cfg *multiraft.Config) {
		cfg.Election.ElectionTimeout = 300 * time.Millisecond
		cfg.Election.HeartbeatInterval = 30 * time.Millisecond
		cfg.HibernateAfter = 100 * time.Millisecond
	})
	defer c.close()
	// Every host hears from both peers (liveness batches at least).
	require.Eventually(t, func() bool {
		for _, h := range c.hosts {
			if h.Stats().BatchesReceived < 4 {
				return false
			}
		}
		return true
	}, waitFor, 10*time.Millisecond)
	c.kill(3)
	require.Eventually(t, func() bool {
		_, known := c.leaders(groups)
		return known == groups
	}, waitFor, 10*time.Millisecond, "%s", c.dump(groups))
	lead, _ := c.leaders(groups)
	require.Equal(t, groups, lead[1]+lead[2], "%v", lead)
	c.mu.Lock()
	defer c.mu.Unlock()
	require.NoError(t, c.check.Err())
}

// BenchmarkHeartbeats measures the CPU of three hosts keeping 20k groups
// awake (no hibernation) with 50ms heartbeats, over TCP on loopback and
// over a MemNetwork, in one process: cores is the process's CPU time
// (user+system, getrusage) over a window of wall time, per 1,000 groups
// in cores/kgroup (from the CPU per delivered entry, times the nominal
// rate: a shared machine may not give the hosts the CPU to keep up, and
// hosts-behind says so). The transport's cost is the difference between
// the two. Run with -benchtime 1x (each iteration is a 3s window):
//
//	go test ./multiraft/tcptransport -run '^$' -bench Heartbeats -benchtime 1x
func BenchmarkHeartbeats(b *testing.B) {
	const groups = 20000
	for _, impl := range []string{"tcp", "mem"} {
		b.Run(fmt.Sprintf("groups=%d/impl=%s", groups, impl), func(b *testing.B) {
			c := newCluster(b, groups, impl == "mem", func(cfg *multiraft.Config) {
				cfg.Election.ElectionTimeout = 500 * time.Millisecond
				cfg.Election.HeartbeatInterval = 50 * time.Millisecond
				cfg.HibernateAfter = 0
			})
			defer c.close()
			// The groups start hibernating; wake them all.
			for _, h := range c.hosts {
				for g := range groups {
					_ = h.Touch(multiraft.GroupID(g + 1))
				}
			}
			time.Sleep(2 * time.Second) // settle: every group heartbeating
			before := c.stats()
			var cpu time.Duration
			var wall time.Duration
			for b.Loop() {
				u0, t0 := cpuTime(), time.Now()
				time.Sleep(3 * time.Second)
				cpu += cpuTime() - u0
				wall += time.Since(t0)
			}
			after := c.stats()
			behind := 0
			for _, h := range c.hosts {
				if h.Stats().Behind {
					behind++
				}
			}
			cores := cpu.Seconds() / wall.Seconds()
			entries := float64(after.entries - before.entries)
			// Nominal: every group's leader heartbeats two followers
			// every tick (nine tenths of HB), and each answers.
			nominal := groups * 2 * 2 / (0.9 * 0.050)
			b.ReportMetric(cores, "cores")
			b.ReportMetric(entries/wall.Seconds(), "entries/s")
			b.ReportMetric(nominal, "nominal-entries/s")
			b.ReportMetric(cpu.Seconds()*1e9/entries, "cpu-ns/entry")
			// What 1,000 groups cost at the nominal rate, from the CPU
			// per entry: robust to a machine too busy to keep up.
			b.ReportMetric(cpu.Seconds()/entries*nominal/groups*1000, "cores/kgroup")
			b.ReportMetric(float64(behind), "hosts-behind")
			b.ReportMetric(float64(after.elections-before.elections), "elections")
			if impl == "tcp" {
				b.ReportMetric(float64(after.bytes-before.bytes)/wall.Seconds()/1e6, "MB/s")
				b.ReportMetric(float64(after.dropped-before.dropped), "dropped")
			}
		})
	}
}

type clusterStats struct{ entries, bytes, dropped, elections int64 }

func (c *cluster) stats() clusterStats {
	var s clusterStats
	for id, h := range c.hosts {
		hs := h.Stats()
		s.entries += hs.Delivered
		if tr := c.trs[id]; tr != nil {
			ts := tr.Stats()
			s.bytes += ts.BytesWritten
			s.dropped += ts.Dropped
		}
	}
	s.elections = c.elections.Load()
	return s
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *cluster) dump(groups int) string {
	s := ""
	for id, h := range c.hosts {
		s += fmt.Sprintf("host %d: %+v\n", id, h.Stats())
		if tr := c.trs[id]; tr != nil {
			s += fmt.Sprintf("  transport: %+v\n", tr.Stats())
		}
		for g := range min(groups, 6) {
			st, err := h.Status(multiraft.GroupID(g + 1))
			s += fmt.Sprintf("  g%d %+v %v\n", g+1, st, err)
		}
	}
	return s
}

// BenchmarkTransport measures the transport alone on loopback: batches of
// n heartbeats from one sender to one receiver whose Handler does
// nothing, at most 16 in flight; ns/entry is wall time, cpu-ns/entry the
// process's CPU (both sides: encode, write, read, decode) per entry.
func BenchmarkTransport(b *testing.B) {
	for _, n := range []int{100, 6667} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			lnB := listen(b)
			window := make(chan struct{}, 16)
			bt, err := tcptransport.New(config(2, lnB, nil))
			require.NoError(b, err)
			defer bt.Close()
			require.NoError(b, bt.Start(func(multiraft.Batch) { <-window }))
			a, err := tcptransport.New(config(1, nil, map[election.ID]string{2: lnB.Addr().String()}))
			require.NoError(b, err)
			defer a.Close()
			batch := multiraft.Batch{From: 1, To: 2, Heartbeats: make([]multiraft.Heartbeat, n)}
			for i := range batch.Heartbeats {
				batch.Heartbeats[i] = multiraft.Heartbeat{Group: multiraft.GroupID(3 * i), Term: 7, Sent: time.Hour}
			}
			u0 := cpuTime()
			for b.Loop() {
				window <- struct{}{}
				a.Send(batch)
			}
			for len(window) > 0 {
				time.Sleep(100 * time.Microsecond)
			}
			cpu := cpuTime() - u0
			entries := float64(b.N) * float64(n)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/entries, "ns/entry")
			b.ReportMetric(float64(cpu.Nanoseconds())/entries, "cpu-ns/entry")
			b.ReportMetric(float64(a.Stats().Dropped), "dropped")
		})
	}
}
