package sim

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunIsIndependentOfWorkers(t *testing.T) {
	s := LAN()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 200*ms
	jobs := []Job{JobOf(Failover{s}, 40), JobOf(SplitVote{Nodes: 5, Alive: 4, Fraction: 0.2}, 200), JobOf(Bootstrap{s}, 20)}
	var ref [][]Outcome
	for _, workers := range []int{1, 2, 3, 8} {
		res, err := Run(context.Background(), jobs, RunOptions{Seed: *seedFlag, Workers: workers})
		require.NoError(t, err)
		if ref == nil {
			ref = res
			continue
		}
		require.Equal(t, ref, res, "workers=%d changed the results (seed %d; go test ./sim -run TestRunIsIndependentOfWorkers -seed=%d)", workers, *seedFlag, *seedFlag)
	}
	require.Len(t, ref[0], 40)
	require.Len(t, ref[1], 200)
	require.Len(t, ref[2], 20)
}

func TestRunGOMAXPROCS(t *testing.T) {
	s := LAN()
	run := func(procs int) []byte {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		res, err := Run(context.Background(), []Job{JobOf(Failover{s}, 30)}, RunOptions{Seed: 7})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteJSON(&b, Summarize(Failover{s}.Params(), res[0]), true))
		return b.Bytes()
	}
	require.Equal(t, string(run(1)), string(run(2)))
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int64
	job := Job{Trials: 1000, Trial: func(i int, rng *rand.Rand) Outcome {
		if started.Add(1) == 10 {
			cancel()
		}
		return Outcome{Time: time.Duration(i), OK: true}
	}}
	res, err := Run(ctx, []Job{job}, RunOptions{Seed: 1, Workers: 2})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, len(res[0]), 1000)
	require.GreaterOrEqual(t, len(res[0]), 10)
	for k := 1; k < len(res[0]); k++ {
		require.Less(t, res[0][k-1].Time, res[0][k].Time, "finished trials stay in trial order")
	}
}

func TestRunProgressAndEmptyJobs(t *testing.T) {
	var last atomic.Int64
	res, err := Run(context.Background(), []Job{{Trials: 0}, {Trials: 5, Trial: func(i int, _ *rand.Rand) Outcome { return Outcome{OK: true} }}},
		RunOptions{Seed: 1, Workers: 4, Progress: func(done, total int) {
			// assert, not require: this runs on worker goroutines.
			assert.Equal(t, 5, total)
			assert.Greater(t, int64(done), last.Load(), "progress is serialized and increasing")
			last.Store(int64(done))
		}})
	require.NoError(t, err)
	require.Empty(t, res[0])
	require.Len(t, res[1], 5)
	require.Equal(t, int64(5), last.Load())
}

func TestTrialRandStreamsDiffer(t *testing.T) {
	seen := map[uint64]bool{}
	for seed := uint64(0); seed < 20; seed++ {
		for i := range 50 {
			v := TrialRand(seed, i).Uint64()
			require.False(t, seen[v], "seed %d trial %d repeats a stream", seed, i)
			seen[v] = true
		}
	}
	require.Equal(t, TrialRand(3, 4).Uint64(), TrialRand(3, 4).Uint64())
}
