package experiment

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

func TestRunIsIndependentOfWorkers(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 200*ms
	jobs := []sim.Job{JobOf(Failover{s}, 40), JobOf(SplitVote{Nodes: 5, Alive: 4, Fraction: 0.2}, 200), JobOf(Bootstrap{s}, 20)}
	var ref [][]sim.Outcome
	for _, workers := range []int{1, 2, 3, 8} {
		res, err := sim.Run(context.Background(), jobs, sim.RunOptions{Seed: seed, Workers: workers})
		require.NoError(t, err)
		if ref == nil {
			ref = res
			continue
		}
		require.Equal(t, ref, res, "workers=%d changed the results", workers)
	}
	require.Len(t, ref[0], 40)
	require.Len(t, ref[1], 200)
	require.Len(t, ref[2], 20)
}

func TestRunGOMAXPROCS(t *testing.T) {
	s := PaperModel()
	run := func(procs int) sim.Summary {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		rs, err := Run(context.Background(), []Experiment{Failover{s}}, []int{30}, sim.RunOptions{Seed: 7})
		require.NoError(t, err)
		require.Equal(t, uint64(7), rs[0].Seed)
		return rs[0].Summary
	}
	a, b := run(1), run(2)
	require.Equal(t, a, b)
	require.Equal(t, a.Times(), b.Times())
}

// panicky is a latency whose every draw panics: a broken model.
type panicky struct{}

func (panicky) Sample(*rand.Rand) time.Duration { panic("broken latency model") }
func (panicky) String() string                  { return "panicky" }

// TestTrialFailsOnCallbackPanic: a trial whose wheel
// recovered a callback panic fails with the panic instead of reporting
// what it measured, and Run reports the trial and its seed.
func TestTrialFailsOnCallbackPanic(t *testing.T) {
	s := PaperModel()
	s.Latency = panicky{}
	for _, e := range []Experiment{Failover{s}, Bootstrap{s}, SplitVote{Nodes: 3, Alive: 3, Latency: panicky{}},
		SplitVote{Nodes: 3, Alive: 3, Latency: panicky{}, Model: "cluster"}} {
		_, err := e.Trial(context.Background(), 0, sim.TrialRand(1, 0), nil)
		var pe *sim.PanicError
		require.ErrorAs(t, err, &pe, "%T", e)
		require.Contains(t, err.Error(), "broken latency model")
	}
	_, err := Stability{Setup: s}.Trial(context.Background(), 0, sim.TrialRand(1, 0), nil)
	var pe *sim.PanicError
	require.ErrorAs(t, err, &pe)

	rs, err := Run(context.Background(), []Experiment{Failover{PaperModel()}, Failover{s}}, []int{5, 5}, sim.RunOptions{Seed: 3})
	var te *sim.TrialError
	require.ErrorAs(t, err, &te)
	require.Equal(t, 1, te.Job)
	require.Equal(t, 0, te.Index)
	require.Equal(t, uint64(3), te.Seed)
	require.ErrorAs(t, err, &pe)
	require.Zero(t, rs[1].Trials, "no outcome of the broken experiment is reported")
}

// TestTrialHonoursContext: a trial that would run
// for billions of events (a 1µs heartbeat, or a 2-server cluster that
// can never elect within a 292-year limit) stops when its context is
// cancelled, with the context's error: the cluster checks the context
// every sim.CheckEvery instants, so even a context cancelled before the
// trial lets it run at most that long.
func TestTrialHonoursContext(t *testing.T) {
	fast := PlainModel()
	fast.Heartbeat = time.Microsecond
	never := PlainModel().WithNodes(2)
	never.MaxTime = 2562047 * time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range []Trialer{Failover{fast}, Failover{never}, Stability{Setup: fast}} {
		_, err := e.Trial(ctx, 0, sim.TrialRand(1, 0), nil)
		require.ErrorIs(t, err, context.Canceled, "%T", e)
	}
	// Through Run: the interrupted trial is not a failure and not an outcome.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var started sync.Once
	slow := trialFunc(func(ctx context.Context, i int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
		started.Do(cancel) // cancelled while the trial runs
		return Failover{never}.Trial(ctx, i, rng, trace)
	})
	rs, err := Run(ctx, []Experiment{slow}, []int{1}, sim.RunOptions{Seed: 1})
	require.ErrorIs(t, err, context.Canceled)
	var te *sim.TrialError
	require.False(t, errors.As(err, &te))
	require.Zero(t, rs[0].Trials)
}

// trialFunc is an Experiment of failover results whose trials are a
// function.
type trialFunc func(ctx context.Context, i int, rng *rand.Rand, trace func(string)) (sim.Outcome, error)

func (f trialFunc) Trial(ctx context.Context, i int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	return f(ctx, i, rng, trace)
}

func (f trialFunc) Result(outs []sim.Outcome) Result { return Failover{PaperModel()}.Result(outs) }
