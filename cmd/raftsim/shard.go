package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// shardSpec is the --shard flag: run share K (0 <= K < N) of the trials.
type shardSpec struct{ k, n int }

func (s *shardSpec) String() string {
	if s.n == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.k, s.n)
}

func (s *shardSpec) Type() string { return "K/N" }

func (s *shardSpec) Set(v string) error {
	a, b, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("want K/N, e.g. 0/8")
	}
	if n < 1 || n > 1_000_000 {
		return fmt.Errorf("N must be in [1, 1000000]")
	}
	if k < 0 || k >= n {
		return fmt.Errorf("K must be in [0, N-1] (0-based, like a Kubernetes Indexed Job's JOB_COMPLETION_INDEX)")
	}
	s.k, s.n = k, n
	return nil
}

// shardHeader is the first line of a shard file: what ran, so that merge
// can check that the shards belong together and print the output of the
// command they came from.
type shardHeader struct {
	Record  string   `json:"record"` // "shard"
	Tool    string   `json:"tool"`
	Version string   `json:"version"`
	Args    []string `json:"args"` // the command line without --shard
	Shard   int      `json:"shard"`
	Shards  int      `json:"shards"`
	Trials  []int    `json:"trials"` // per experiment, of the whole run
}

// shardJob is one line of a shard file after the header: the
// accumulated outcomes of one experiment's trials of the shard.
type shardJob struct {
	Record string           `json:"record"` // "accumulator"
	Job    int              `json:"job"`
	Label  string           `json:"label"`
	Acc    *sim.Accumulator `json:"acc"`
}

// errShardWritten ends a sharded run after its shard file was written:
// nothing else is printed, exit status 0.
var errShardWritten = errors.New("shard written")

// withoutShard returns args without the flags that do not change the
// output: --shard and --workers, and their values (shards may run with
// different worker counts).
func withoutShard(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--shard", a == "--workers":
			i++
		case strings.HasPrefix(a, "--shard="), strings.HasPrefix(a, "--workers="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// runShard runs the --shard share of the trials of exps and writes the
// shard file (JSON Lines: a header, then one accumulator per experiment)
// to stdout.
func (a *app) runShard(ctx context.Context, what string, exps []experiment.Experiment, trials []int, seed uint64, workers int) error {
	jobs := make([]sim.Job, len(exps))
	labels := make([]string, len(exps))
	for i, e := range exps {
		jobs[i] = experiment.JobOf(e, trials[i])
		d := e.Result(nil)
		labels[i] = d.Experiment + " " + d.Label
	}
	return a.runShardJobs(ctx, what, jobs, labels, sim.RunOptions{Seed: seed, Workers: workers}, len(exps) == 1)
}

// runShardJobs runs the --shard share of the trials of jobs (labels
// name them in messages) and writes the shard file to stdout; it returns
// errShardWritten when it did.
func (a *app) runShardJobs(ctx context.Context, what string, jobs []sim.Job, labels []string, opts sim.RunOptions, traceable bool) error {
	update, finish := a.progress(what + " shard " + a.shard.String())
	opts.Progress, opts.Shard, opts.Shards = update, a.shard.k, a.shard.n
	accs := sim.Accumulate(ctx, jobs, opts)
	finish()
	var te *sim.TrialError
	switch {
	case errors.As(accs.Err, &te):
		return trialFailure{what: labels[te.Job], err: te, traceable: traceable}
	case accs.Err != nil && ctx.Err() != nil:
		fmt.Fprintln(a.stderr, "raftsim: interrupted: the shard is incomplete and was not written")
		return errInterrupted
	case accs.Err != nil:
		return accs.Err
	}
	trials := make([]int, len(jobs))
	for i, j := range jobs {
		trials[i] = j.Trials
	}
	w := bufio.NewWriter(a.stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	h := shardHeader{Record: "shard", Tool: "raftsim", Version: version(), Args: withoutShard(a.args), Shard: a.shard.k, Shards: a.shard.n, Trials: trials}
	if err := enc.Encode(h); err != nil {
		return err
	}
	for j := range accs.Accs {
		if err := enc.Encode(shardJob{Record: "accumulator", Job: j, Label: labels[j], Acc: &accs.Accs[j]}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return errShardWritten
}

// mergedJobs returns the merged accumulators in place of running jobs
// (merge), after checking that the shards ran the same trials.
func (a *app) mergedJobs(jobs []sim.Job) sim.Accumulated {
	trials := make([]int, len(jobs))
	for i, j := range jobs {
		trials[i] = j.Trials
	}
	if !slices.Equal(trials, a.mergedTrials) {
		return sim.Accumulated{Err: usageError{fmt.Errorf("merge: the shards ran %v trials, this command %v", a.mergedTrials, trials)}}
	}
	return sim.Accumulated{Accs: a.merged}
}

// readShards reads shard files and checks that they are the N shards of
// one run, each once: the same tool version, command line and trials.
// It returns the header and the merged accumulators, one per experiment.
func readShards(paths []string) (shardHeader, []sim.Accumulator, error) {
	var first shardHeader
	var merged []sim.Accumulator
	seen := map[int]string{}
	for _, p := range paths {
		h, accs, err := readShard(p)
		if err != nil {
			return first, nil, err
		}
		if len(seen) == 0 {
			first = h
			merged = make([]sim.Accumulator, len(h.Trials))
		} else {
			switch {
			case h.Version != first.Version:
				return first, nil, fmt.Errorf("%s: written by raftsim %s, %s by %s", p, h.Version, paths[0], first.Version)
			case !slices.Equal(h.Args, first.Args):
				return first, nil, fmt.Errorf("%s: a shard of `raftsim %s`, %s of `raftsim %s`", p, strings.Join(h.Args, " "), paths[0], strings.Join(first.Args, " "))
			case h.Shards != first.Shards || !slices.Equal(h.Trials, first.Trials):
				return first, nil, fmt.Errorf("%s: one of %d shards, %s one of %d", p, h.Shards, paths[0], first.Shards)
			}
		}
		if other, dup := seen[h.Shard]; dup {
			return first, nil, fmt.Errorf("%s and %s are both shard %d/%d", other, p, h.Shard, h.Shards)
		}
		seen[h.Shard] = p
		if len(accs) != len(merged) {
			return first, nil, fmt.Errorf("%s: %d experiments, want %d", p, len(accs), len(merged))
		}
		for j := range accs {
			merged[j].Merge(&accs[j])
		}
	}
	var missing []string
	for k := range first.Shards {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Shards))
		}
	}
	if len(missing) > 0 {
		return first, nil, fmt.Errorf("missing shards: %s", strings.Join(missing, ", "))
	}
	return first, merged, nil
}

// readShard reads one shard file.
func readShard(path string) (shardHeader, []sim.Accumulator, error) {
	var h shardHeader
	f, err := os.Open(path)
	if err != nil {
		return h, nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	if err := dec.Decode(&h); err != nil || h.Record != "shard" || h.Shards < 1 || h.Shard < 0 || h.Shard >= h.Shards {
		return h, nil, fmt.Errorf("%s: not a raftsim shard file (written with --shard)", path)
	}
	accs := make([]sim.Accumulator, len(h.Trials))
	for j := range accs {
		var sj shardJob
		sj.Acc = &accs[j]
		if err := dec.Decode(&sj); err != nil || sj.Record != "accumulator" || sj.Job != j {
			if errors.Is(err, io.EOF) {
				return h, nil, fmt.Errorf("%s: truncated: %d of %d experiments", path, j, len(accs))
			}
			return h, nil, fmt.Errorf("%s: experiment %d: not a raftsim shard record", path, j)
		}
		if want := sim.ShardTrials(h.Trials[j], h.Shard, h.Shards); accs[j].Trials() != want {
			return h, nil, fmt.Errorf("%s: experiment %d has %d trials, want %d", path, j, accs[j].Trials(), want)
		}
	}
	return h, accs, nil
}
