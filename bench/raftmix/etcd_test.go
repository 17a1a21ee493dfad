package raftmix

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRaftScheduler enqueues ticks and requests from several goroutines
// on a scheduler with several workers and checks its rules: a group is
// never processed by two workers at once, a process call gets no queued
// flag and ticks iff the tick flag, every tick is processed or counted
// as dropped, and once the workers are idle nothing is left queued (no
// enqueue was lost while its group was being processed).
func TestRaftScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const groups, workers, enqueuers, rounds, maxTicks = 8, 4, 4, 300, 3
		var inflight [groups]atomic.Int32
		var ticks, calls atomic.Int64
		s := newRaftScheduler(groups, workers, maxTicks, func(_ int, g int32, st schedState) {
			calls.Add(1)
			if inflight[g].Add(1) != 1 {
				t.Errorf("group %d processed by two workers at once", g)
			}
			if st.flags&schedQueued != 0 {
				t.Errorf("group %d: process got the queued flag: %+v", g, st)
			}
			if (st.flags&schedTick != 0) != (st.ticks > 0) || int(st.ticks) > maxTicks {
				t.Errorf("group %d: tick flag and %d ticks disagree: %+v", g, st.ticks, st)
			}
			ticks.Add(int64(st.ticks))
			runtime.Gosched()
			inflight[g].Add(-1)
		})
		s.start()
		all := []int32{0, 1, 2, 3, 4, 5, 6, 7}
		var wg sync.WaitGroup
		for e := range enqueuers {
			wg.Go(func() {
				for r := range rounds {
					s.enqueueN(schedTick, []int32{int32((e + r) % groups)})
					s.enqueueN(schedRequest, all[(e+r)%groups:])
				}
			})
		}
		wg.Wait()
		synctest.Wait() // every worker asleep on an empty queue
		require.Equal(t, int64(enqueuers*rounds), ticks.Load()+s.droppedTicks(), "ticks processed + dropped")
		require.Positive(t, calls.Load())
		s.mu.Lock()
		require.Zero(t, s.n, "groups left in the queue")
		for g, st := range s.state {
			require.Equal(t, schedState{}, st, "group %d left with work", g)
		}
		s.mu.Unlock()
		s.stop()
	})
}

// TestEtcdKeepsPace runs etcd-tick (the worker pools) and etcd-loop in
// a bubble, where time moves only when every goroutine waits, so that
// both keep up whatever the machine's load: every follower counts a
// heartbeat per HeartbeatPeriod, every leader's CheckQuorum falls every
// ElectionTimeout to the nanosecond (lateness 0, none owed at the end),
// and no election starts in the window. The race detector checks the
// pool's hand-offs.
func TestEtcdKeepsPace(t *testing.T) {
	for _, impl := range []string{ImplEtcd, ImplEtcdLoop} {
		t.Run(impl, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := DefaultConfig()
				c.Impl, c.Groups, c.SampleEvery, c.EtcdWorkers = impl, 30, 1, 2
				c.Warmup, c.Duration = 500*time.Millisecond, time.Second
				res, err := Run(c)
				require.NoError(t, err)
				require.Zero(t, res.SpuriousElections, "elections in the window")
				require.Equal(t, int64(c.Groups*(nodeReplicas-1)*20), res.Heartbeats, "a heartbeat per follower per 50ms")
				require.InDelta(t, 1.0, res.HeartbeatPace, 1e-9)
				require.Positive(t, res.StepDownFires)
				require.Equal(t, res.StepDownFires, res.StepDownDue, "checks owed at the end")
				require.GreaterOrEqual(t, res.LatenessSamples, c.Groups*6)
				require.Zero(t, res.LatenessMaxMs, "a check off its ElectionTimeout period")
				require.Zero(t, res.EarlyFires)
				perGroup := float64(res.StepDownFires) / float64(c.Groups)
				require.True(t, perGroup >= 6 && perGroup <= 7, "%.2f checks per group in a second, want 6 to 7", perGroup)
				if impl == ImplEtcd {
					require.Equal(t, &EtcdResult{Workers: 2}, res.Etcd, "no tick dropped")
					require.InDelta(t, 3*100, res.WakeupsPerSec, 1e-9, "three tick loops")
				} else {
					require.Nil(t, res.Etcd)
					require.InDelta(t, 100, res.WakeupsPerSec, 1e-9)
				}
			})
		})
	}
}
