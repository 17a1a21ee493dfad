package etcd

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raftick/raftick/sim/experiment"
)

var trialsFlag = flag.Int("trials", 0, "TestFailoverTrialsWallTime: run this many failover trials of 5 nodes (etcd's defaults) on GOMAXPROCS workers and log the wall time; 0 skips it")

func BenchmarkFailover(b *testing.B) {
	for _, nodes := range []int{3, 5} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			s := experiment.EtcdModel()
			s.Nodes, s.ShortLogs = nodes, min(2, nodes-2)
			i := 0
			for b.Loop() {
				o, err := Failover{Setup: s}.Trial(context.Background(), i, trialRand(1, i), nil)
				if err != nil || !o.OK {
					b.Fatalf("trial %d: %+v %v", i, o, err)
				}
				i++
			}
		})
	}
}

func BenchmarkBootstrap(b *testing.B) {
	s := experiment.EtcdModel()
	i := 0
	for b.Loop() {
		o, err := Bootstrap{Setup: s}.Trial(context.Background(), i, trialRand(1, i), nil)
		if err != nil || !o.OK {
			b.Fatalf("trial %d: %+v %v", i, o, err)
		}
		i++
	}
}

// TestFailoverTrialsWallTime logs the wall time of a run of failover
// trials of the etcd model on GOMAXPROCS workers, as "raftsim failover
// --engine etcd --trials N" runs them:
//
//	go test ./sim/engines/etcd -run TestFailoverTrialsWallTime -trials=10000 -v
func TestFailoverTrialsWallTime(t *testing.T) {
	n := *trialsFlag
	if n <= 0 {
		t.Skip("set -trials to run")
	}
	s := experiment.EtcdModel()
	workers := runtime.GOMAXPROCS(0)
	times := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				o, err := Failover{Setup: s}.Trial(context.Background(), i, trialRand(1, i), nil)
				if err != nil || !o.OK {
					t.Errorf("trial %d: %+v %v", i, o, err)
					return
				}
				times[i] = o.Time
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	t.Logf("%d failover trials, 5 nodes, etcd defaults (tick %v, timeouts %v-%v, heartbeat %v, PreVote, CheckQuorum): %v wall on %d workers (%v per trial per worker); mean failover %v",
		n, s.Tick, s.TimeoutMin, s.TimeoutMax, s.Heartbeat, wall.Round(time.Millisecond), workers, (wall * time.Duration(workers) / time.Duration(n)).Round(time.Microsecond), sum/time.Duration(n))
}
