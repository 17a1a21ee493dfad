package multiraft_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/raftick/raftick/multiraft"
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
				var asleep int
				for _, id := range c.ids {
					asleep += c.hosts[id].Stats().Hibernating
				}
				b.ReportMetric(float64(asleep), "asleep")
				if c.check.Err() != nil {
					b.Fatal(c.check.Err())
				}
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
