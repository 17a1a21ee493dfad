package multiraft_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// BenchmarkVirtualSecond measures the CPU one virtual second costs five
// hosts running the given groups (three replicas each, leaders balanced),
// of which `active` are touched every heartbeat interval and the rest
// hibernate: compare 1% of 100k active with the same 1k groups alone
// (the "CPU <= 1.5x" target, here in virtual time). cpu-ms/vsec
// is process CPU time (GC included), steadier than ns/op on a shared
// machine; timers/vsec counts wheel timers, network deliveries included.
//
//	go test ./multiraft -run '^$' -bench VirtualSecond -benchtime 20x
func BenchmarkVirtualSecond(b *testing.B) {
	for _, tc := range []struct{ groups, active int }{{1000, 1000}, {100_000, 1000}} {
		for _, coalesce := range []bool{false, true} {
			b.Run(fmt.Sprintf("groups=%d/active=%d/coalesce=%v", tc.groups, tc.active, coalesce), func(b *testing.B) {
				c := newCluster(b, clusterOpts{hosts: 5, groups: tc.groups, replicas: 3, boot: true, seed: 1,
					config: func(cfg *multiraft.Config) {
						cfg.Coalesce = coalesce
						cfg.Election.ElectionTimeout = time.Second
						cfg.Election.HeartbeatInterval = 100 * time.Millisecond
						cfg.HibernateAfter = time.Second
					}})
				stride := tc.groups / tc.active
				touch := func() {
					for i := 0; i < tc.groups; i += stride {
						d := c.groups[i]
						for _, v := range d.voters {
							_ = c.hosts[v].Touch(d.id)
						}
					}
				}
				second := func() {
					for range 10 {
						touch()
						c.v.AdvanceBy(100 * time.Millisecond)
					}
				}
				second() // wake the active groups
				fired := c.v.Stats().Fired
				cpu0 := cpuTime()
				b.ResetTimer()
				for b.Loop() {
					second()
				}
				b.StopTimer()
				b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/vsec")
				b.ReportMetric(float64(c.v.Stats().Fired-fired)/float64(b.N), "timers/vsec")
				reportEnd(b, c)
			})
		}
	}
}

// cpuTime returns the process's user and system CPU time so far: on a
// shared machine it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRaftMixVirtual is bench/scalemix's raftick-host load in
// virtual time: three hosts, every group active (all three replicas
// touched every heartbeat interval), RaftMix's timings (election timeout
// [150ms, 300ms), heartbeats every 50ms). cpu-ns/event is process CPU per
// delivered message, timer fire and Touch, scalemix's "cpu ns/event"
// without the real-time wheel's driver and the transport's goroutines:
// the host's and the nodes' own cost, on one goroutine.
//
//	go test ./multiraft -run '^$' -bench RaftMixVirtual -benchtime 20x
func BenchmarkRaftMixVirtual(b *testing.B) {
	const groups = 10000
	c := newCluster(b, clusterOpts{hosts: 3, groups: groups, replicas: 3, boot: true, seed: 1,
		config: func(cfg *multiraft.Config) {
			cfg.Coalesce = true
			cfg.Election.ElectionTimeout = 150 * time.Millisecond
			cfg.Election.HeartbeatInterval = 50 * time.Millisecond
			cfg.HibernateAfter = 500 * time.Millisecond
			cfg.LivenessTimeout = 200 * time.Millisecond
		}})
	touches := 0
	interval := func() { // one heartbeat interval
		for _, d := range c.groups {
			for _, v := range d.voters {
				_ = c.hosts[v].Touch(d.id)
				touches++
			}
		}
		c.v.AdvanceBy(50 * time.Millisecond)
	}
	delivered := func() (n int64) {
		for _, h := range c.hosts {
			n += h.Stats().Delivered
		}
		return n
	}
	for range 20 { // wake every group and settle
		interval()
	}
	fired, del, touched := c.v.Stats().Fired, delivered(), touches
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		interval()
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	events := float64(c.v.Stats().Fired-fired) + float64(delivered()-del) + float64(touches-touched)
	b.ReportMetric(float64(cpu.Nanoseconds())/events, "cpu-ns/event")
	b.ReportMetric(events/float64(b.N), "events/interval")
	reportEnd(b, c)
}

// reportEnd reports how many replicas sleep at the end of a benchmark
// and fails it if election safety was violated.
func reportEnd(b *testing.B, c *cluster) {
	var asleep int64
	for _, id := range c.ids {
		asleep += c.hosts[id].Stats().Hibernating
	}
	b.ReportMetric(float64(asleep), "asleep")
	if c.check.Err() != nil {
		b.Fatal(c.check.Err())
	}
}

// BenchmarkHostBatch measures the host's inbound path at scale: one Host
// holding groups=N replicas on a real-time wheel steps a coalesced Batch
// with an entry for every group, either heartbeats from the leader of
// them all (kind=heartbeats: each follower's election timer is re-armed
// and its answer waits in the outbox; the answers leave as one batch
// when the Step ends) or the answers to this host's own heartbeats
// (kind=answers: each leader records its peer's answer). ns/entry is the
// wall time per entry; allocs/op are per batch (the Transport releases
// every batch, as tcptransport does once it encoded it, so a batch's
// answers reuse a released slice); cpu-ns/entry is the process's
// CPU time per entry (the wheel's driver and GC included), which a loaded
// machine inflates less than wall time. kind=heartbeats/peers=2 splits
// the groups between two leaders' hosts whose batches two goroutines step
// at once: on a machine with two idle cores its ns/entry is about half
// of peers=1's when the Host scales with cores. kind=tick runs the host's
// heartbeat tick over groups it all leads, each with a granted answer of
// one follower stepped since the last tick: ns/entry is per leader (its
// CheckQuorum and its two heartbeats queued and flushed; cpu-ns/entry
// also counts the answers' steps, run with the timer stopped).
//
//	go test ./multiraft -run '^$' -bench HostBatch -benchtime 20x
func BenchmarkHostBatch(b *testing.B) {
	for _, groups := range []int{1000, 100_000} {
		for _, kind := range []string{"heartbeats", "answers", "heartbeats/peers=2", "tick"} {
			b.Run(fmt.Sprintf("groups=%d/kind=%s", groups, kind), func(b *testing.B) {
				w, err := wheel.New(wheel.DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { w.Stop() })
				cfg := multiraft.DefaultConfig()
				cfg.ID = 1
				// Timers that do not come due while the benchmark runs.
				cfg.Election.ElectionTimeout = time.Minute
				cfg.Election.HeartbeatInterval = 10 * time.Second
				cfg.Election.Metrics = &metrics.BlackholeSink{}
				cfg.HibernateAfter = 0
				cfg.Rand = rand.New(rand.NewPCG(1, 2))
				h, err := multiraft.NewHost(cfg, w, multiraft.TransportFunc(func(b multiraft.Batch) { b.Release() }))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(h.Stop)
				voters := []election.ID{1, 2, 3}
				batches := []*multiraft.Batch{{From: 2, To: 1}}
				if kind == "heartbeats/peers=2" {
					batches = append(batches, &multiraft.Batch{From: 3, To: 1})
				}
				for g := range groups {
					id := multiraft.GroupID(g + 1)
					batch := batches[g%len(batches)]
					leader := batch.From
					if kind == "answers" || kind == "tick" {
						leader = 1
					}
					if err := h.AddGroup(multiraft.GroupConfig{ID: id, Voters: voters, Storage: election.NewMemoryStorage(), Leader: leader}); err != nil {
						b.Fatal(err)
					}
					if kind == "answers" || kind == "tick" {
						batch.Responses = append(batch.Responses, multiraft.HeartbeatResponse{Group: id, Term: 1, Granted: true})
					} else {
						batch.Heartbeats = append(batch.Heartbeats, multiraft.Heartbeat{Group: id, Term: 1})
					}
				}
				step := func(batch *multiraft.Batch) {
					now := w.Now()
					for i := range batch.Heartbeats {
						batch.Heartbeats[i].Sent = now
					}
					for i := range batch.Responses {
						batch.Responses[i].Sent = now
					}
					h.Step(*batch)
				}
				// The bootstrap states are written by the host's persister:
				// part of the set-up, not of the steps measured.
				for h.Stats().Saves < int64(groups) {
					time.Sleep(time.Millisecond)
				}
				for _, batch := range batches {
					step(batch) // warm
				}
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				for b.Loop() {
					if kind == "tick" {
						b.StopTimer()
						step(batches[0]) // the answers the tick counts
						b.StartTimer()
						multiraft.Tick(h)
						continue
					}
					if len(batches) == 1 {
						step(batches[0])
						continue
					}
					var wg sync.WaitGroup
					for _, batch := range batches {
						wg.Go(func() { step(batch) })
					}
					wg.Wait()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*groups), "ns/entry")
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*groups), "cpu-ns/entry")
				if s := h.Stats(); s.Ignored != 0 {
					b.Fatalf("%d entries ignored", s.Ignored)
				}
			})
		}
	}
}

// BenchmarkTouch measures Host.Touch of awake groups as bench/scalemix
// touches them: `active` awake groups spread evenly over `groups` (IDs 0,
// stride, 2*stride, ... with stride groups/active; the others
// hibernate), touched in rounds. ns/touch is the wall time per Touch,
// cpu-ns/touch the process's CPU time per Touch (steadier on a shared
// machine).
// cache=cold walks 16 MiB between rounds (the timer stopped), as a
// server's other work does between a group's touches: a round then finds
// its lines out of L2 and its pages out of the TLB, as scalemix's toucher
// does (each group touched once per heartbeat interval). At a million
// groups the active groups' index slots and records lie far apart, so
// each is a miss of its own; at 10,000 they are adjacent and the
// hardware prefetcher streams them.
//
//	go test ./multiraft -run '^$' -bench 'Touch$' -benchtime 1000000x
func BenchmarkTouch(b *testing.B) {
	for _, tc := range []struct {
		groups, active int
		cache          string
	}{
		{10_000, 10_000, "warm"}, {1_000_000, 10_000, "warm"},
		{10_000, 10_000, "cold"}, {1_000_000, 10_000, "cold"},
	} {
		b.Run(fmt.Sprintf("groups=%d/active=%d/cache=%s", tc.groups, tc.active, tc.cache), func(b *testing.B) {
			v, err := wheel.NewVirtual(wheel.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { v.Stop() })
			cfg := multiraft.DefaultConfig()
			cfg.ID = 1
			cfg.Election.Metrics = &metrics.BlackholeSink{}
			cfg.Rand = rand.New(rand.NewPCG(1, 2))
			h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(multiraft.Batch) {}))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(h.Stop)
			voters := []election.ID{1, 2, 3}
			for g := range tc.groups {
				if err := h.AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: voters, Leader: 2}); err != nil {
					b.Fatal(err)
				}
			}
			v.AdvanceBy(v.Tick()) // the persister writes the bootstrap states
			stride := tc.groups / tc.active
			ids := make([]multiraft.GroupID, 0, tc.active)
			for g := 0; g < tc.groups; g += stride {
				ids = append(ids, multiraft.GroupID(g))
			}
			for _, id := range ids { // wake them
				if err := h.Touch(id); err != nil {
					b.Fatal(err)
				}
			}
			if s := h.Stats(); s.Hibernating != int64(tc.groups-len(ids)) {
				b.Fatalf("%d of %d groups hibernate, want %d", s.Hibernating, tc.groups, tc.groups-len(ids))
			}
			var junk []byte
			if tc.cache == "cold" {
				junk = make([]byte, 16<<20)
			}
			var cpu time.Duration // process CPU time while timed
			runtime.GC()          // no collection of the set-up's garbage runs while timed
			b.ResetTimer()
			cpu0 := cpuTime()
			i := 0
			for range b.N {
				if err := h.Touch(ids[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(ids) {
					i = 0
					if junk != nil {
						b.StopTimer()
						cpu += cpuTime() - cpu0
						for j := 0; j < len(junk); j += 64 {
							junk[j]++
						}
						cpu0 = cpuTime()
						b.StartTimer()
					}
				}
			}
			cpu += cpuTime() - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/touch")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/touch")
		})
	}
}
