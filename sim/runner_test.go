package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int64
	job := Job{Trials: 1000, Trial: func(_ context.Context, i int, rng *rand.Rand) (Outcome, error) {
		if started.Add(1) == 10 {
			cancel()
		}
		return Outcome{Time: time.Duration(i), OK: true}, nil
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
	res, err := Run(context.Background(), []Job{{Trials: 0}, {Trials: 5, Trial: func(context.Context, int, *rand.Rand) (Outcome, error) { return Outcome{OK: true}, nil }}},
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

// TestRunTrialError: a failed trial (an error or a panic) stops the run
// and is reported with its job, index and seed; trials interrupted by the
// cancellation that follows are not failures.
func TestRunTrialError(t *testing.T) {
	broken := errors.New("broken")
	var ran atomic.Int64
	job := Job{Trials: 1000, Trial: func(ctx context.Context, i int, rng *rand.Rand) (Outcome, error) {
		ran.Add(1)
		switch {
		case i == 30:
			return Outcome{}, broken
		case i == 40:
			panic(fmt.Sprintf("trial %d exploded", i))
		case i > 40:
			<-ctx.Done() // a long trial: only the cancellation ends it
			return Outcome{}, ctx.Err()
		}
		return Outcome{Time: time.Duration(i), OK: true}, nil
	}}
	res, err := Run(context.Background(), []Job{{Trials: 3, Trial: job.Trial}, job}, RunOptions{Seed: 9, Workers: 4})
	var te *TrialError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, te.Job)
	require.Equal(t, 30, te.Index, "the failure of the lowest trial index")
	require.Equal(t, uint64(9), te.Seed)
	require.ErrorIs(t, err, broken)
	require.Contains(t, err.Error(), "trial 30 (seed 9)")
	require.Less(t, ran.Load(), int64(1000), "no new trial starts after a failure")
	require.Len(t, res[0], 3)
	for _, o := range res[1] {
		require.Less(t, o.Time, 40*time.Nanosecond, "only finished trials are returned")
	}

	_, err = Run(context.Background(), []Job{{Trials: 1, Trial: func(context.Context, int, *rand.Rand) (Outcome, error) {
		panic("boom")
	}}}, RunOptions{Seed: 2})
	require.ErrorAs(t, err, &te)
	require.Contains(t, err.Error(), "boom")
}
