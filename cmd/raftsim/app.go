package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// usageError is a bad flag, argument or value: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// flagError returns a usage error naming the flag.
func flagError(flag string, format string, args ...any) error {
	return usageError{fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, args...))}
}

// errInterrupted is returned after partial results were printed.
var errInterrupted = errors.New("interrupted")

// run executes raftsim with args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, args: args}
	return a.exit(a.execute(ctx))
}

// execute runs the command line.
func (a *app) execute(ctx context.Context) error {
	root := a.rootCmd()
	root.SetArgs(a.args)
	return root.ExecuteContext(ctx)
}

// exit reports err on stderr and returns the exit status: 0 for
// success, 130 after an interrupt, 2 for bad usage, 1 for a failure (a
// failed trial is reported with its seed and how to reproduce it).
func (a *app) exit(err error) int {
	var ue usageError
	var tf trialFailure
	switch {
	case err == nil, errors.Is(err, errShardWritten):
		return 0
	case errors.Is(err, errInterrupted):
		return 130
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "raftsim: %v\n", oneLine(err))
		return 2
	case errors.As(err, &tf):
		fmt.Fprintf(a.stderr, "raftsim: %s: trial %d (seed %d) failed: %v\n", tf.what, tf.err.Index, tf.err.Seed, oneLine(tf.err.Err))
		fmt.Fprintf(a.stderr, "raftsim: the run is deterministic; reproduce it with: raftsim %s\n", strings.Join(a.args, " "))
		if tf.traceable {
			fmt.Fprintf(a.stderr, "raftsim: see the trial's events with: raftsim %s --trace --trace-trial %d\n", strings.Join(a.args, " "), tf.err.Index)
		}
		return 1
	default:
		fmt.Fprintf(a.stderr, "raftsim: %v\n", oneLine(err))
		return 1
	}
}

// trialFailure is a trial that failed: exit status 1.
type trialFailure struct {
	what      string // the experiment, e.g. "failover 150-300ms"
	err       *sim.TrialError
	traceable bool // --trace shows this trial's experiment
}

func (e trialFailure) Error() string { return e.what + ": " + e.err.Error() }
func (e trialFailure) Unwrap() error { return e.err }

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

// app holds the command's arguments and outputs.
type app struct {
	args           []string
	stdout, stderr io.Writer
	// progressAfter is how long a run must take before a progress bar
	// appears (on a terminal only).
	progressAfter time.Duration
	// forceProgress shows the bar even if stderr is not a terminal (tests).
	forceProgress bool
	// progressEvery is --progress: the period of the progress lines when
	// stderr is not a terminal; progressDefault is its default.
	progressEvery, progressDefault time.Duration
	// shard is the --shard flag: run one share of the trials and write
	// a shard file (see merge).
	shard shardSpec
	// merged, when not nil, are the merged outcomes of the shards of this
	// command line (merge): runExperiments returns them instead of running
	// mergedTrials trials.
	merged       []sim.Accumulator
	mergedTrials []int
	// started, if not nil, is called once when the run has work to show:
	// its first trial finished (multiraft: its run began). Tests
	// interrupt the run there.
	started     func()
	startedOnce sync.Once
}

// markStarted calls a.started the first time it is called.
func (a *app) markStarted() {
	if a.started != nil {
		a.startedOnce.Do(a.started)
	}
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "raftsim",
		Short: "Simulate Raft leader elections in virtual time",
		Long: `raftsim runs leader-election experiments on simulated Raft clusters: the
election package's nodes on one virtual timing wheel that carries every
timer and every message in flight, so thousands of elections run per second
and a seed reproduces a run byte for byte.

Start with "raftsim paper", which reproduces Figure 16 of the Raft paper.

Output: a table on stdout (progress and messages on stderr), or with --json
JSON Lines (one self-describing object per line) or with --csv the same
fields as columns. Every subcommand's records follow one schema: each says
what wrote it (tool, version, command), the model, the seed, every model
parameter ("params", durations in ms), the trials requested and finished,
and whether an interrupt stopped the run; statistics are in ms (min_ms,
p10_ms, p50_ms, mean_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms). See
"raftsim help records" for every field.

Ctrl-C stops a run after the trials in progress: it prints what finished,
marked as interrupted, gives no verdict or recommendation, and exits with
status 130.

Large runs scale out: --shard K/N runs one share of the trials anywhere,
and "raftsim merge" prints the output of the whole run from the shards.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	a.addProgressFlag(root)
	root.SuggestionsMinimumDistance = 2 // "did you mean failover?" for failovr or faliover
	root.PersistentFlags().Var(&a.shard, "shard", "run only share `K/N` of the trials (K from 0 to N-1) and print a shard file for raftsim merge")
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if err := misspelledCommand(root, cmd, a.args); err != nil {
			return err
		}
		return usageError{flagParseError(err)}
	})
	root.AddCommand(a.paperCmd(), a.failoverCmd(), a.bootstrapCmd(), a.splitVoteCmd(), a.sweepCmd(), a.tuneCmd(), a.partitionCmd(), a.multiraftCmd(), a.ticksCmd(), a.compareCmd())
	root.Version = version()
	root.SetVersionTemplate(versionLine() + "\n")
	root.AddCommand(a.mergeCmd(), a.recordsHelp())
	return root
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q (see --help)", cmd.CommandPath(), args[0])}
	}
	return nil
}

// stderrIsTerminal reports whether stderr is an interactive terminal.
func (a *app) stderrIsTerminal() bool {
	if a.forceProgress {
		return true
	}
	f, ok := a.stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress returns a Run progress callback and a function to call when
// the run ends. A bar appears on stderr only when stderr is a terminal and
// the run has lasted progressAfter (one second by default).
func (a *app) progress(what string) (func(done, total int), func()) {
	return a.progressBar(what, true)
}

// progressBar is progress with the count of trials shown (count) or only
// the percentage of the work (trials weighted by their cost).
func (a *app) progressBar(what string, count bool) (func(done, total int), func()) {
	update, finish := a.bar(what, count)
	if a.started == nil {
		return update, finish
	}
	return func(done, total int) {
		a.markStarted()
		if update != nil {
			update(done, total)
		}
	}, finish
}

// bar is progressBar without the started mark.
func (a *app) bar(what string, count bool) (func(done, total int), func()) {
	if !a.stderrIsTerminal() {
		return a.progressLines(what, count)
	}
	after := a.progressAfter
	if after == 0 {
		after = time.Second
	}
	var bar *progressbar.ProgressBar
	return everyTick(100*time.Millisecond, func(elapsed time.Duration, d, t int64) {
		if bar == nil && elapsed >= after && t > 0 {
			opts := []progressbar.Option{
				progressbar.OptionSetWriter(a.stderr),
				progressbar.OptionSetDescription(what),
				progressbar.OptionSetPredictTime(false),
				progressbar.OptionSetElapsedTime(false),
				progressbar.OptionThrottle(100 * time.Millisecond),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionSetWidth(30)}
			if count {
				opts = append(opts, progressbar.OptionShowCount())
			}
			bar = progressbar.NewOptions64(t, opts...)
		}
		if bar != nil {
			bar.Describe(what + eta(elapsed, d, t))
			_ = bar.Set64(d)
		}
	}, func() {
		if bar != nil {
			_ = bar.Clear()
		}
	})
}

// eta estimates the time left from the whole run's average speed so far
// (work done in elapsed), so that it moves steadily; it reads e.g.
// " (1m20s left)".
func eta(elapsed time.Duration, done, total int64) string {
	if done <= 0 || total <= done {
		return ""
	}
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	return " (" + left.Round(time.Second).String() + " left)"
}

// runExperiments runs trials[i] trials of exps[i] and summarizes them. On
// an interrupt it summarizes what finished and reports interrupted; a
// failed trial is a trialFailure.
func (a *app) runExperiments(ctx context.Context, what string, exps []experiment.Experiment, trials []int, seed uint64, workers int) (rs []experiment.Result, interrupted bool, err error) {
	switch {
	case a.merged != nil:
		if !slices.Equal(trials, a.mergedTrials) {
			return nil, false, usageError{fmt.Errorf("merge: the shards ran %v trials, this command %v", a.mergedTrials, trials)}
		}
		return experiment.Results(exps, a.merged, seed), false, nil
	case a.shard.n > 0:
		return nil, false, a.runShard(ctx, what, exps, trials, seed, workers)
	}
	total := 0
	for _, n := range trials {
		total += n
	}
	update, finish := a.progress(what)
	start := time.Now()
	rs, err = experiment.Run(ctx, exps, trials, sim.RunOptions{Seed: seed, Workers: workers, Progress: update})
	finish()
	done := 0
	for _, r := range rs {
		done += r.Trials
	}
	var te *sim.TrialError
	switch {
	case errors.As(err, &te):
		d := exps[te.Job].Result(nil)
		return rs, false, trialFailure{what: d.Experiment + " " + d.Label, err: te, traceable: len(exps) == 1}
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(a.stderr, "raftsim: interrupted: showing the %d of %d trials that finished\n", done, total)
		return rs, true, nil
	case err != nil:
		return rs, false, err
	}
	if time.Since(start) > time.Second || a.forceProgress {
		w := workers
		if w <= 0 {
			w = runtime.GOMAXPROCS(0)
		}
		fmt.Fprintf(a.stderr, "raftsim: %d trials in %.1fs on %d workers\n", total, time.Since(start).Seconds(), w)
	}
	return rs, false, nil
}

// reportChecked says, for --check, how many of the trials of rs had their
// servers' events checked for election safety (every trial on simulated
// servers; a violation would have failed the run). The race model of
// splitvote has no servers.
func (a *app) reportChecked(o *opts, rs []experiment.Result) {
	if !o.check {
		return
	}
	checked, race := 0, 0
	for _, r := range rs {
		if r.Model == "race" {
			race += r.Trials
		} else {
			checked += r.Trials
		}
	}
	fmt.Fprintf(a.stderr, "raftsim: --check: election safety held in all %d trials checked", checked)
	if race > 0 {
		fmt.Fprintf(a.stderr, " (%d trials of the race model have no servers to check)", race)
	}
	fmt.Fprintln(a.stderr)
}

// flagParseError rewrites pflag's error for a value that does not parse
// (which quotes strconv's) as "--flag VALUE: must be ...".
func flagParseError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	want := map[string]string{
		"int": "an integer", "uint64": "a non-negative integer", "float64": "a number",
		"duration": "a duration (e.g. 150ms)", "bool": "true or false",
	}[ive.GetFlag().Value.Type()]
	if want == "" {
		// A flag of this command's own type: its Set says what is wrong.
		if cause := errors.Unwrap(ive); cause != nil {
			return fmt.Errorf("--%s %q: %v", ive.GetFlag().Name, ive.GetValue(), cause)
		}
		want = "a " + ive.GetFlag().Value.Type()
	}
	return fmt.Errorf("--%s %q: must be %s", ive.GetFlag().Name, ive.GetValue(), want)
}
