package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBinary()
		os.Exit(code)
	}))
}

// raftsim runs the command in-process and returns its exit status, stdout
// and stderr.
func raftsim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return raftsimCtx(t, context.Background(), args...)
}

func raftsimCtx(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadFlagsExit2NamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"failover", "--trials", "0"}, "--trials"},
		{[]string{"failover", "--trials", "x"}, "--trials"},
		{[]string{"failover", "--timeout", "banana"}, "--timeout"},
		{[]string{"failover", "--timeout", "300ms-150ms"}, "--timeout"},
		{[]string{"failover", "--heartbeat", "200ms"}, "--heartbeat"},
		{[]string{"failover", "--heartbeat", "-1ms"}, "--heartbeat"},
		{[]string{"failover", "--latency", "warp:9"}, "--latency"},
		{[]string{"failover", "--latency", "uniform:5ms,1ms"}, "--latency"},
		{[]string{"failover", "--disk", "normal:1ms"}, "--disk"},
		{[]string{"failover", "--lateness", "x"}, "--lateness"},
		{[]string{"failover", "--nodes", "0"}, "--nodes"},
		{[]string{"failover", "--loss", "1"}, "--loss"},
		{[]string{"failover", "--dup", "-0.1"}, "--dup"},
		{[]string{"failover", "--model", "quantum"}, "--model"},
		{[]string{"failover", "--engine", "zookeeper"}, "--engine"},
		{[]string{"failover", "--plot", "out.jpg"}, "--plot"},
		{[]string{"failover", "--plot", ""}, "--plot"},
		{[]string{"failover", "--plot", "/nonexistent-dir/fig.png"}, "--plot"},
		{[]string{"failover", "--plot", "."}, "--plot"},
		{[]string{"failover", "--trace", "--json"}, "--trace"},
		{[]string{"failover", "--json", "--csv"}, "--csv"},
		{[]string{"failover", "--cdf"}, "--cdf"},
		{[]string{"failover", "--trace-trial", "3"}, "--trace-trial"},
		{[]string{"failover", "--max-time", "0s"}, "--max-time"},
		{[]string{"failover", "--workers", "-1"}, "--workers"},
		{[]string{"failover", "--engine", "hashicorp", "--check"}, "--check"},
		{[]string{"failover", "--bogus"}, "--bogus"},
		{[]string{"bootstrap", "--seed", "-1"}, "--seed"},
		{[]string{"paper", "--trials", "-5"}, "--trials"},
		{[]string{"splitvote", "--l", "0.1,2"}, "--l"},
		{[]string{"splitvote", "--alive", "9"}, "--alive"},
		{[]string{"splitvote", "--sv-model", "x"}, "--sv-model"},
		{[]string{"splitvote", "--range", "-1s"}, "--range"},
		{[]string{"splitvote", "--timeout", "150ms"}, "--timeout"},
		{[]string{"sweep"}, "--over"},
		{[]string{"sweep", "--over", "colour=red"}, "--over"},
		{[]string{"sweep", "--over", "nodes=3,x"}, "--over"},
		{[]string{"sweep", "--over", "nodes=3", "--experiment", "x"}, "--experiment"},
		{[]string{"failover", "--engine", "hashicorp", "--timeout", "150-155ms"}, "--timeout"},
		// --engine hashicorp takes the hashicorp model's settings: a single
		// T is [T, 2T), so the first complaint is about --trace ...
		{[]string{"failover", "--engine", "hashicorp", "--timeout", "100ms", "--trace"}, "--trace"},
		// ... unless another model is asked for.
		{[]string{"failover", "--engine", "hashicorp", "--model", "paper", "--timeout", "100ms"}, "--timeout"},
		{[]string{"failover", "--engine", "hashicorp", "--nodes", "1"}, "--nodes"},
		{[]string{"failover", "--model", "hashicorp", "--timeout", "150-155ms"}, "--timeout"},
		// Issue 10, defect 7: latency specs beyond the trial's time limit.
		{[]string{"failover", "--latency", "uniform:0ns,9223372036854775807ns", "--trials", "3"}, "--latency"},
		{[]string{"failover", "--latency", "normal:2562047h,1000h"}, "--latency"},
		{[]string{"failover", "--disk", "fixed:2m", "--max-time", "1m"}, "--disk"},
		{[]string{"bootstrap", "--lateness", "fixed:2h"}, "--lateness"},
		{[]string{"sweep", "--over", "latency=fixed:2m"}, "--over"},
		{[]string{"sweep", "--over", "nodes=0"}, "--over"},
		{[]string{"sweep", "--over", "timeout=1ns"}, "--over"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { requireUsageError(t, tc.args, tc.flag) })
	}
}

// requireUsageError runs raftsim with args and checks that it exits with
// status 2 and one line on stderr naming flag, and no Go name.
func requireUsageError(t *testing.T, args []string, flag string) {
	t.Helper()
	code, out, errOut := raftsim(t, args...)
	require.Equal(t, 2, code, "stderr: %s", errOut)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	require.Contains(t, errOut, flag)
	require.True(t, strings.HasPrefix(errOut, "raftsim: "), errOut)
	noGoNames(t, errOut)
}

// goName matches a Go identifier of two words or more (TimeoutMin,
// ShortLogs) or a qualified field (Setup.Nodes).
var goName = regexp.MustCompile(`\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\b[A-Z][a-z]+\.[A-Z]`)

// noGoNames checks that a message for the user names no Go field.
func noGoNames(t *testing.T, msg string) {
	t.Helper()
	require.False(t, goName.MatchString(msg), "a Go name reached the user: %q", msg)
}

func TestUnknownCommandAndArgs(t *testing.T) {
	code, _, errOut := raftsim(t, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown command "frobnicate"`)
	code, _, errOut = raftsim(t, "failover", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected argument "extra"`)
}

func TestHelp(t *testing.T) {
	code, out, _ := raftsim(t)
	require.Equal(t, 0, code)
	require.Contains(t, out, "raftsim paper")
	for _, sub := range []string{"paper", "failover", "bootstrap", "splitvote", "sweep", "tune"} {
		code, out, errOut := raftsim(t, sub, "--help")
		require.Equal(t, 0, code, sub)
		require.Empty(t, errOut)
		require.Contains(t, out, "Usage:")
		require.Contains(t, out, "--seed", sub)
	}
}

func TestPaperReduced(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "fig16.svg")
	code, out, errOut := raftsim(t, "paper", "--trials", "60", "--plot", plot, "--max-time", "20s")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"Figure 16 (top)", "Figure 16 (bottom)", "150-150ms", "150-155ms", "12-24ms",
		"median ~287ms", "max ~513ms", "mean ~35.0ms", "The paper's figures beside the simulator's", "shape (as in the paper)"} {
		require.Contains(t, out, want)
	}
	b, err := os.ReadFile(plot)
	require.NoError(t, err)
	require.Contains(t, string(b), "<svg")
}

func TestJSONIsDeterministic(t *testing.T) {
	args := []string{"paper", "--seed", "7", "--json", "--trials", "40", "--max-time", "20s"}
	_, first, _ := raftsim(t, args...)
	_, second, _ := raftsim(t, args...)
	require.Equal(t, first, second)
	var arr []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(first, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "JSON Lines: one object per line")
		arr = append(arr, m)
	}
	require.Len(t, arr, 11)
	for _, k := range []string{"experiment", "nodes", "timeout_min_ms", "timeout_max_ms", "trials", "seed", "min_ms",
		"p10_ms", "p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms", "split_vote_rate", "mean_terms"} {
		require.Contains(t, arr[0], k)
	}
	require.Equal(t, 7.0, arr[0]["seed"])
	require.Equal(t, "failover", arr[0]["experiment"])

	// The number of workers (and GOMAXPROCS) changes nothing.
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		_, out, _ := raftsim(t, args...)
		runtime.GOMAXPROCS(old)
		require.Equal(t, first, out, "GOMAXPROCS=%d", procs)
	}
	_, out, _ := raftsim(t, append(args, "--workers", "3")...)
	require.Equal(t, first, out)
}

func TestFailoverOutputs(t *testing.T) {
	code, out, _ := raftsim(t, "failover", "--timeout", "150-200ms", "--trials", "50", "--json")
	require.Equal(t, 0, code)
	require.Equal(t, 1, strings.Count(out, "\n"))
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, 150.0, m["timeout_min_ms"])
	require.Equal(t, 200.0, m["timeout_max_ms"])
	require.Equal(t, 50.0, m["trials"])

	code, out, _ = raftsim(t, "failover", "--trials", "30", "--csv", "--model", "plain", "--latency", "normal:5ms,2ms", "--disk", "none")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "record,schema,tool,version,command,model,interrupted,experiment,label,nodes"), out)
	require.Contains(t, out, "normal:5ms,2ms")

	code, out, _ = raftsim(t, "failover", "--trials", "30", "--model", "hashicorp", "--timeout", "100ms", "--prevote")
	require.Equal(t, 0, code)
	require.Contains(t, out, "100-200ms")
	require.Contains(t, out, "last-contact detection")
	require.Contains(t, out, "(pre-)votes refused while a leader is known")
	require.Contains(t, out, "per-follower heartbeats every [hb, 2hb)")
	require.Contains(t, out, "heartbeat 10ms")
}

func TestTrace(t *testing.T) {
	code, out, _ := raftsim(t, "failover", "--timeout", "150-155ms", "--trace", "--trace-trial", "2", "--seed", "3")
	require.Equal(t, 0, code)
	require.Contains(t, out, "# failover 150-155ms, seed 3, trial 2")
	require.Contains(t, out, "crash")
	require.Contains(t, out, "LeaderKnown")
	require.Contains(t, out, "# finished")
	_, again, _ := raftsim(t, "failover", "--timeout", "150-155ms", "--trace", "--trace-trial", "2", "--seed", "3")
	require.Equal(t, out, again)
}

func TestSplitVoteCommand(t *testing.T) {
	code, out, _ := raftsim(t, "splitvote", "--trials", "3000", "--json")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &m))
	require.Equal(t, "splitvote", m["experiment"])
	require.InDelta(t, 0.1808, m["analytic_split_vote_rate"], 1e-4)
	require.InDelta(t, 0.1808, m["split_vote_rate"], 0.03)

	code, out, _ = raftsim(t, "splitvote", "--trials", "500", "--sv-model", "cluster", "--l", "0.2")
	require.Equal(t, 0, code)
	require.Contains(t, out, "cluster")
	require.Contains(t, out, "18.080%")

	code, out, _ = raftsim(t, "splitvote", "--trials", "500", "--latency", "uniform:10ms,20ms")
	require.Equal(t, 0, code)
	require.Contains(t, out, "uniform")
}

func TestSweepCommand(t *testing.T) {
	code, out, errOut := raftsim(t, "sweep", "--over", "timeout=150-155ms,150-300ms", "--over", "latency=fixed:250us;fixed:1ms", "--trials", "40")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "timeout=150-155ms latency=fixed:250us")
	require.Contains(t, out, "timeout=150-300ms latency=fixed:1ms")
	code, out, _ = raftsim(t, "sweep", "--experiment", "bootstrap", "--over", "prevote=false,true", "--trials", "20", "--json")
	require.Equal(t, 0, code)
	require.Equal(t, 2, strings.Count(out, "\n"))
	require.Contains(t, out, `"experiment":"bootstrap"`)
}

func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code, out, errOut := raftsimCtx(t, ctx, "failover", "--trials", "100000")
	require.Equal(t, 130, code)
	require.Contains(t, errOut, "interrupted")
	require.Contains(t, out, "timeout") // the table of what finished (nothing) is still printed
}

// TestInterruptInsideTrial (issue 10, defect 8): an interrupt stops the
// trial that is running, not only the trials to come. A partition window
// of a minute with heartbeats every 100µs runs for seconds of wall time;
// cancelled while it runs, the command returns at once with what
// finished (nothing).
func TestInterruptInsideTrial(t *testing.T) {
	long := []string{"partition", "--shape", "follower-cut", "--heartbeat", "100µs", "--for", "1m", "--trials", "1"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel) // while the trial runs
	code, out, errOut := raftsimCtx(t, ctx, long...)
	require.Equal(t, 130, code, errOut)
	require.Contains(t, errOut, "interrupted: showing the windows that finished")
	require.Contains(t, out, "follower-cut")

	// --trace of a trial that runs for seconds of wall time.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	code, out, _ = raftsimCtx(t, ctx, append(long, "--trace")...)
	require.Equal(t, 130, code)
	require.Contains(t, out, "# interrupted")
}

// TestWatchInterrupts: the first interrupt cancels the run's context; a
// second one exits at once with status 130.
func TestWatchInterrupts(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var errb bytes.Buffer
	ctx, stop := watchInterrupts(context.Background(), sigs, &errb, func(code int) { exited <- code })
	require.NoError(t, ctx.Err())
	sigs <- os.Interrupt
	<-ctx.Done()
	require.Empty(t, exited, "the first interrupt only stops the trials")
	sigs <- os.Interrupt
	require.Equal(t, 130, <-exited)
	stop()
	require.Contains(t, errb.String(), "interrupt again to quit at once")
	require.Contains(t, errb.String(), "second interrupt")

	// Without a signal, stop releases the watcher and cancels the context.
	ctx, stop = watchInterrupts(context.Background(), make(chan os.Signal), io.Discard, func(int) { t.Error("exit called") })
	stop()
	require.Error(t, ctx.Err())
}

// panicky is a latency whose every draw panics: a broken model.
type panicky struct{}

func (panicky) Sample(*rand.Rand) time.Duration { panic("broken latency model") }
func (panicky) String() string                  { return "panicky" }

// TestFailedTrialExits1 (issue 10, defect 7): a trial whose wheel
// recovered a callback panic fails the run: exit status 1, the panic,
// the trial and its seed, and how to reproduce it; no result is printed.
func TestFailedTrialExits1(t *testing.T) {
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb, args: []string{"failover", "--seed", "5"}}
	s := experiment.PaperModel()
	s.Latency = panicky{}
	_, _, err := a.runExperiments(context.Background(), "failover", []experiment.Experiment{experiment.Failover{Setup: s}}, []int{20}, 5, 1)
	require.Error(t, err)
	require.Equal(t, 1, a.exit(err))
	require.Empty(t, out.String())
	msg := errb.String()
	require.Contains(t, msg, "raftsim: failover 150-300ms: trial 0 (seed 5) failed")
	require.Contains(t, msg, "broken latency model")
	require.Contains(t, msg, "reproduce it with: raftsim failover --seed 5")
	require.Contains(t, msg, "raftsim failover --seed 5 --trace --trace-trial 0")
}

func TestProgressOnlyOnTerminal(t *testing.T) {
	// Not a terminal (a buffer): nothing on stderr. (Few trials: a run
	// over a second also prints how long it took, and the race detector
	// on a loaded machine got there with 200.)
	code, _, errOut := raftsim(t, "failover", "--trials", "20")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)

	// Forced on, with a short threshold: the bar shows, then the summary line.
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb, forceProgress: true, progressAfter: time.Millisecond}
	root := a.rootCmd()
	root.SetArgs([]string{"failover", "--trials", "300", "--timeout", "150-151ms", "--max-time", "5s"})
	require.NoError(t, root.ExecuteContext(context.Background()))
	require.Contains(t, errb.String(), "trials in")
	require.Contains(t, errb.String(), "failover", "the bar shows its description: %q", errb.String())
}

// TestCheck: --check says how many trials the safety checker passed
// (it checks every trial; the flag only reports), and the output is the
// same with and without it.
func TestCheck(t *testing.T) {
	for _, args := range [][]string{
		{"failover", "--trials", "50", "--json"},
		{"bootstrap", "--engine", "etcd", "--trials", "30", "--json"},
		{"sweep", "--over", "prevote=false,true", "--trials", "20", "--json"},
	} {
		code, plain, _ := raftsim(t, args...)
		require.Equal(t, 0, code)
		code, out, errOut := raftsim(t, append(args, "--check")...)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, plain, out, "%v", args)
		require.Contains(t, errOut, "election safety held in all")
	}
	_, _, errOut := raftsim(t, "failover", "--trials", "50", "--check")
	require.Contains(t, errOut, "raftsim: --check: election safety held in all 50 trials checked")
	_, _, errOut = raftsim(t, "splitvote", "--trials", "100", "--l", "0.1,0.2", "--check")
	require.Contains(t, errOut, "held in all 0 trials checked (200 trials of the race model have no servers to check)")
}

// forged is a failover whose trials forge a heartbeat in the name of a
// follower once the cluster has a leader: a safety violation.
type forged struct{ experiment.Failover }

func (f forged) Trial(ctx context.Context, _ int, rng *rand.Rand, _ func(string)) (sim.Outcome, error) {
	c, err := sim.NewCluster(f.Config(rng))
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	c.RunFor(time.Minute, func() bool {
		return c.Node(1).Status().Role == election.Leader || c.Node(2).Status().Role == election.Leader
	})
	// Server 3 forges a heartbeat to the one of 1 and 2 that follows.
	follower := election.ID(2)
	if c.Node(2).Status().Role == election.Leader {
		follower = 1
	}
	c.Node(follower).Step(election.Message{Type: election.MsgHeartbeat, From: 3, To: follower, Term: c.Node(follower).Status().Term})
	return sim.Outcome{}, c.Err()
}

// TestSafetyViolationExits1: a trial whose servers break election safety
// fails the run with exit status 1, naming the violation.
func TestSafetyViolationExits1(t *testing.T) {
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb, args: []string{"failover", "--check"}}
	_, _, err := a.runExperiments(context.Background(), "failover", []experiment.Experiment{forged{experiment.Failover{Setup: experiment.PaperModel()}}}, []int{5}, 1, 1)
	require.Error(t, err)
	require.Equal(t, 1, a.exit(err))
	require.Contains(t, errb.String(), "election safety violated")
}
