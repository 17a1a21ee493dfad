package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// A Job is a batch of independent trials of one experiment. Trial must be
// a pure function of its index and rng (and of values captured when the
// job was built): it runs on any worker goroutine, concurrently with other
// trials, and must not share mutable state with them.
//
// Trial returns an error when the trial cannot be trusted: it broke (a
// callback panicked, the cluster could not be built) or it was
// interrupted by ctx (then it returns ctx's error, and Run counts the
// trial as unfinished). ctx is for cancellation only; a trial checks it
// now and then (Config.Context).
//
// A job runs the trials First, First+1, ..., First+Trials-1 (so a job can
// extend an earlier one with more trials of the same streams). Weight is
// the relative cost of one of its trials for Progress (0 means 1).
type Job struct {
	Trials int
	Trial  func(ctx context.Context, i int, rng *rand.Rand) (Outcome, error)
	First  int
	Weight int
}

// A TrialError reports a trial that failed: which one and with which
// seed, so that it can be run again alone (its random source is
// TrialRand(Seed, Index)).
type TrialError struct {
	Job   int    // index of the job in Run's list
	Index int    // trial index within the job
	Seed  uint64 // RunOptions.Seed
	Err   error
}

func (e *TrialError) Error() string {
	return fmt.Sprintf("sim: trial %d (seed %d) failed: %v", e.Index, e.Seed, e.Err)
}

func (e *TrialError) Unwrap() error { return e.Err }

// RunOptions controls Run.
type RunOptions struct {
	// Seed is the root of every trial's random stream: trial i of every
	// job draws from TrialRand(Seed, i). Two jobs therefore see the same
	// random numbers at the same trial index (common random numbers), so
	// a row of `raftsim paper` is reproduced exactly by the matching
	// single `raftsim failover` run with the same seed.
	Seed uint64
	// Workers is the number of goroutines running trials; <= 0 means
	// runtime.GOMAXPROCS(0). It changes speed only, never results.
	Workers int
	// Progress, if not nil, is called as trials finish with the number
	// finished so far and the total, each trial counted Job.Weight times.
	// It is called from worker goroutines, one call at a time, with done
	// strictly increasing (a count overtaken by a later one is skipped),
	// so the last call of a run that was not interrupted has done ==
	// total. It must be cheap.
	Progress func(done, total int)
	// Shard and Shards split the trials among independent runs: with
	// Shards > 1 the run does only trials i with i % Shards == Shard (0 <=
	// Shard < Shards), still drawing from TrialRand(Seed, i), so the
	// shards' outcomes together are exactly the unsharded run's. Shards
	// <= 1 runs every trial.
	Shard, Shards int
}

// TrialRand returns the random source of trial index i under seed: a PCG
// generator whose two state words are splitmix64 mixes of (seed, i), so
// neighbouring seeds and indices give unrelated streams.
func TrialRand(seed uint64, i int) *rand.Rand {
	a := splitmix64(seed ^ 0x9e3779b97f4a7c15)
	b := splitmix64(a ^ uint64(i)*0xbf58476d1ce4e5b9)
	return rand.New(rand.NewPCG(splitmix64(a+uint64(i)), b))
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Run runs every trial of every job across opts.Workers goroutines and
// returns the outcomes per job in trial order, so the result does not
// depend on the number of workers or on scheduling. If ctx is cancelled,
// workers stop the trials they are running (as soon as the trials check
// ctx), start no new one, and Run returns the trials that finished (still
// in trial order, with gaps removed) together with ctx.Err(). A nil ctx
// means context.Background().
//
// If a trial fails (returns an error other than ctx's, or panics), Run
// starts no new trial, waits for the running ones and returns a
// *TrialError for the failed trial of the lowest (job, index); the
// outcomes it returns then are only the trials that finished.
//
// Run keeps every outcome; Summaries keeps memory independent of the
// number of trials.
func Run(ctx context.Context, jobs []Job, opts RunOptions) ([][]Outcome, error) {
	type indexed struct {
		i int
		o Outcome
	}
	parts := make([][]indexed, len(jobs))
	var mu sync.Mutex
	err := Stream(ctx, jobs, opts, func(j, i int, o Outcome) {
		mu.Lock()
		parts[j] = append(parts[j], indexed{i, o})
		mu.Unlock()
	})
	res := make([][]Outcome, len(jobs))
	for j, p := range parts {
		slices.SortFunc(p, func(a, b indexed) int { return cmp.Compare(a.i, b.i) })
		res[j] = make([]Outcome, len(p))
		for k, x := range p {
			res[j][k] = x.o
		}
	}
	return res, err
}

// Summaries runs the trials like Run but keeps only a Summary per job
// (an Accumulator each): its memory does not grow with the number of
// trials beyond SampleCap times per job. The summaries are of the trials
// that finished, and do not depend on the number of workers.
func Summaries(ctx context.Context, jobs []Job, opts RunOptions) ([]Summary, error) {
	accs := Accumulate(ctx, jobs, opts)
	sums := make([]Summary, len(jobs))
	for j := range accs.Accs {
		sums[j] = accs.Accs[j].Summary()
	}
	return sums, accs.Err
}

// Accumulated is the result of Accumulate: one Accumulator per job and
// the run's error (as Run's).
type Accumulated struct {
	Accs []Accumulator
	Err  error
}

// Accumulate runs the trials like Run and adds each finished trial's
// outcome to its job's Accumulator, for callers that merge the
// accumulators of several runs (shards) before summarizing.
func Accumulate(ctx context.Context, jobs []Job, opts RunOptions) Accumulated {
	accs := make([]Accumulator, len(jobs))
	locks := make([]sync.Mutex, len(jobs))
	err := Stream(ctx, jobs, opts, func(j, _ int, o Outcome) {
		locks[j].Lock()
		accs[j].Add(o)
		locks[j].Unlock()
	})
	return Accumulated{accs, err}
}

// ShardTrials returns the number of the trials of a job of n trials
// that shard k of shards runs (RunOptions.Shard): the job's trials
// First+k, First+k+shards, First+k+2*shards, ... below First+n.
func ShardTrials(n, k, shards int) int {
	if shards <= 1 {
		return max(n, 0)
	}
	if n <= k {
		return 0
	}
	return (n - k + shards - 1) / shards
}

// Stream runs the trials like Run and hands each finished trial's outcome
// to sink(job, index, outcome) instead of keeping it. sink is called from
// the worker goroutines, concurrently and in no particular order; it must
// be safe for that. Stream keeps nothing per trial, so its memory does not
// depend on the number of trials. It returns Run's error.
func Stream(ctx context.Context, jobs []Job, opts RunOptions, sink func(job, i int, o Outcome)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent) // cancelled by a failed trial too
	defer cancel()
	var failMu sync.Mutex
	var fail *TrialError // guarded by failMu: the failure of the lowest (job, index)
	failed := func(j, i int, err error) {
		failMu.Lock()
		defer failMu.Unlock()
		if fail == nil || j < fail.Job || j == fail.Job && i < fail.Index {
			fail = &TrialError{Job: j, Index: i, Seed: opts.Seed, Err: err}
		}
		cancel()
	}
	shard, shards := opts.Shard, max(opts.Shards, 1)
	total, work := 0, 0
	starts := make([]int, len(jobs)+1)
	weights := make([]int64, len(jobs))
	for j, job := range jobs {
		starts[j] = total
		n := ShardTrials(job.Trials, shard, shards)
		total += n
		weights[j] = int64(max(job.Weight, 1))
		work += n * max(job.Weight, 1)
	}
	starts[len(jobs)] = total

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, total), 1)

	var next, finished atomic.Int64
	var progMu sync.Mutex
	var reported int64 // guarded by progMu
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := 0
			for parent.Err() == nil && ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= total {
					return
				}
				for starts[j+1] <= k {
					j++
				}
				i := jobs[j].First + shard + (k-starts[j])*shards
				o, err := runTrial(ctx, jobs[j], i, TrialRand(opts.Seed, i))
				if err != nil {
					if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
						failed(j, i, err)
					}
					continue
				}
				sink(j, i, o)
				n := finished.Add(weights[j])
				if opts.Progress != nil {
					progMu.Lock()
					if n > reported {
						reported = n
						opts.Progress(int(n), work)
					}
					progMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if fail != nil {
		return fail
	}
	return parent.Err()
}

// runTrial runs one trial, turning a panic into an error.
func runTrial(ctx context.Context, job Job, i int, rng *rand.Rand) (o Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sim: trial panicked: %v", r)
		}
	}()
	return job.Trial(ctx, i, rng)
}
