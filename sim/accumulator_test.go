package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
)

func TestAccumulatorOrderAndMergeIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 1))
	for _, n := range []int{0, 1, 7, 1000, SampleCap + 500} {
		outs := make([]Outcome, n)
		for i := range outs {
			outs[i] = Outcome{Time: time.Duration(rng.Int64N(int64(time.Second))), Terms: 1 + rng.IntN(3), Messages: rng.IntN(50), OK: rng.IntN(20) > 0}
			outs[i].Splits = outs[i].Terms - 1
		}
		want := Summarize(outs)
		shuffled := slices.Clone(outs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		var a, b Accumulator
		for i, o := range shuffled {
			if i%3 == 0 {
				a.Add(o)
			} else {
				b.Add(o)
			}
		}
		a.Merge(&b)
		got := a.Summary()
		require.Equal(t, want.CDF(), got.CDF(), "n=%d", n)
		want.acc, got.acc = nil, nil
		require.Equal(t, want, got, "n=%d", n)
	}
}

func TestAccumulatorSketchErrorBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 2))
	n := 3 * SampleCap
	exact := make([]time.Duration, n)
	var a Accumulator
	for i := range exact {
		d := time.Duration(math.Exp(rng.NormFloat64()*1.5) * float64(100*time.Millisecond))
		exact[i] = d
		a.Add(Outcome{Time: d, Terms: 1, OK: true})
	}
	s := a.Summary()
	require.False(t, s.Exact())
	require.Nil(t, s.Times())
	require.LessOrEqual(t, len(a.sketch), 20000, "the histogram is bounded")
	slices.Sort(exact)
	require.Equal(t, exact[0], s.Min)
	require.Equal(t, exact[n-1], s.Max)
	for _, c := range []struct {
		p   float64
		got time.Duration
	}{{10, s.P10}, {50, s.P50}, {90, s.P90}, {95, s.P95}, {99, s.P99}, {99.9, s.P999}} {
		want := Percentile(exact, c.p)
		require.InEpsilon(t, float64(want), float64(c.got), SketchError*1.01, "p%v", c.p)
	}
}

func TestNoLeaderTrialsAreLeftOut(t *testing.T) {
	s := Summarize([]Outcome{{Time: 5 * ms, Terms: 1, OK: true}, {Time: time.Minute, NoLeader: true}})
	require.Equal(t, 2, s.Trials)
	require.Equal(t, 1, s.NoLeader)
	require.Equal(t, 1, s.Measured())
	require.Equal(t, 5*ms, s.Max)
	require.Zero(t, s.TimedOut)
}

// TestSummariesMemoryBounded runs a job of a huge number of cheap trials
// and stops it after a few hundred thousand: the heap must not hold
// anything proportional to the number of trials asked for.
func TestSummariesMemoryBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done atomic.Int64
	job := Job{Trials: math.MaxInt32, Trial: func(_ context.Context, i int, rng *rand.Rand) (Outcome, error) {
		if done.Add(1) == 3*SampleCap {
			cancel()
		}
		return Outcome{Time: time.Duration(rng.Int64N(int64(time.Second))), Terms: 1, OK: true}, nil
	}}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := uint64(0)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}
	}()
	sums, err := Summaries(ctx, []Job{job, job}, RunOptions{Seed: 1, Workers: 2})
	close(stop)
	<-watched
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, context.Canceled)
	require.GreaterOrEqual(t, sums[0].Trials, 3*SampleCap-4)
	// 2^31 trials would take 16 GiB as preallocated outcomes; the bound
	// is the samples of two jobs (2 MiB) plus histograms and slack.
	require.Less(t, peak, before.HeapAlloc+64<<20, "peak heap %d MiB", peak>>20)
}

func TestShardsPartitionTheTrials(t *testing.T) {
	job := Job{Trials: 103, Trial: func(_ context.Context, i int, rng *rand.Rand) (Outcome, error) {
		return Outcome{Time: time.Duration(rng.Int64N(1e9)), Terms: 1, OK: true}, nil
	}}
	whole, err := Run(context.Background(), []Job{job}, RunOptions{Seed: 3})
	require.NoError(t, err)
	var merged Accumulator
	total := 0
	for k := range 4 {
		require.Equal(t, ShardTrials(103, k, 4), []int{26, 26, 26, 25}[k])
		acc := Accumulate(context.Background(), []Job{job}, RunOptions{Seed: 3, Shard: k, Shards: 4})
		require.NoError(t, acc.Err)
		total += acc.Accs[0].n
		merged.Merge(&acc.Accs[0])
	}
	require.Equal(t, 103, total)
	want := Summarize(whole[0])
	got := merged.Summary()
	require.Equal(t, want.CDF(), got.CDF())
}

func TestAccumulatorJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 3))
	for _, n := range []int{0, 5, SampleCap + 10} {
		var a Accumulator
		for range n {
			a.Add(Outcome{Time: time.Duration(rng.Int64N(1e10)), Terms: 2, Splits: 1, OK: rng.IntN(9) > 0, NoLeader: rng.IntN(50) == 0})
		}
		b, err := a.MarshalJSON()
		require.NoError(t, err)
		var back Accumulator
		require.NoError(t, back.UnmarshalJSON(b))
		again, err := back.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(b), string(again))
		want, got := a.Summary(), back.Summary()
		require.Equal(t, want.CDF(), got.CDF())
		want.acc, got.acc = nil, nil
		require.Equal(t, want, got)
	}
	var bad Accumulator
	require.Error(t, bad.UnmarshalJSON([]byte(`{"n":3,"samples_ns":[1]}`)))
}
