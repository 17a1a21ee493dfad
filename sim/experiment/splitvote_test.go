package experiment

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

func TestSplitVoteAnalytic(t *testing.T) {
	// The thesis' worked example: 5 servers, 4 alive, a 100ms range.
	require.InDelta(t, 0.000592, splitRate(5, 4, 0.01), 1e-6) // "about 0.06%"
	require.InDelta(t, 0.0523, splitRate(5, 4, 0.1), 1e-4)    // "about 5.2%"
	require.InDelta(t, 0.1808, splitRate(5, 4, 0.2), 1e-4)    // "about 18.1%"
	// "a five-server cluster with two failures and l=0.2 will see about
	// half of elections end in split votes"
	require.InDelta(t, 0.5, splitRate(5, 3, 0.2), 0.02)
	// Nine servers, l=0.2: about 15% after two failures, nearly 70% after four.
	require.InDelta(t, 0.15, splitRate(9, 7, 0.2), 0.02)
	require.InDelta(t, 0.70, splitRate(9, 5, 0.2), 0.04)
	for _, tc := range []struct {
		n, s int
		l    float64
		want float64
	}{
		{5, 2, 0.1, 1},    // no majority alive
		{5, 4, 0, 0},      // instant messages never split
		{5, 4, 1, 1},      // messages slower than the whole range
		{5, 4, -1, 0},     // clamped
		{5, 4, 2, 1},      // clamped
		{1, 1, 0.5, 0},    // a single server wins alone
		{2, 2, 0.5, 0.75}, // both needed: split if the second times out within l
		{3, 3, 0.1, splitRate(3, 3, 0.1)},
	} {
		got := splitRate(tc.n, tc.s, tc.l)
		require.InDelta(t, tc.want, got, 1e-12, "n=%d s=%d l=%v", tc.n, tc.s, tc.l)
		require.False(t, math.IsNaN(got))
	}
}

// TestSplitVoteMatchesThesis runs the issue's acceptance check: the
// simulated split rate for n=5, s=4 and l = 0.01, 0.1, 0.2 matches the
// closed form within 1.5 percentage points. 100,000 trials each normally;
// fewer under -race or -short (still several standard errors inside).
func TestSplitVoteMatchesThesis(t *testing.T) {
	seed := testseed.Seed(t)
	trials := 100000
	if raceEnabled || testing.Short() {
		trials = 20000
	}
	for _, l := range []float64{0.01, 0.1, 0.2} {
		sv := SplitVote{Nodes: 5, Alive: 4, Fraction: l}
		res, err := Run(context.Background(), []Experiment{sv}, []int{trials}, sim.RunOptions{Seed: seed})
		require.NoError(t, err)
		s := res[0]
		t.Logf("l=%v: simulated %.3f%%, thesis %.3f%%", l, 100*s.SplitVoteRate, 100*sv.Analytic())
		require.InDelta(t, sv.Analytic(), s.SplitVoteRate, 0.015)
		require.Equal(t, trials, s.Trials)
	}
}

// TestSplitVoteClusterMatchesThesis checks that the election package's
// nodes behave as the model assumes: term 1 splits exactly when too many
// servers time out within l of the first.
func TestSplitVoteClusterMatchesThesis(t *testing.T) {
	seed := testseed.Seed(t)
	trials := 4000
	if raceEnabled || testing.Short() {
		trials = 1500
	}
	for _, tc := range []struct {
		n, s int
		l    float64
	}{{5, 4, 0.1}, {5, 4, 0.2}, {5, 5, 0.2}, {3, 3, 0.3}} {
		sv := SplitVote{Nodes: tc.n, Alive: tc.s, Fraction: tc.l, Model: "cluster"}
		require.NoError(t, sv.Validate())
		res, err := Run(context.Background(), []Experiment{sv}, []int{trials}, sim.RunOptions{Seed: seed})
		require.NoError(t, err)
		s := res[0]
		se := math.Sqrt(sv.Analytic() * (1 - sv.Analytic()) / float64(trials))
		t.Logf("n=%d s=%d l=%v: cluster %.2f%%, thesis %.2f%% (se %.2fpp)", tc.n, tc.s, tc.l, 100*s.SplitVoteRate, 100*sv.Analytic(), 100*se)
		require.InDelta(t, sv.Analytic(), s.SplitVoteRate, 4*se+0.002)
		require.Zero(t, s.TimedOut)
	}
}

func TestSplitVoteValidate(t *testing.T) {
	for _, tc := range []struct {
		sv   SplitVote
		want string
	}{
		{SplitVote{Nodes: 0, Alive: 1}, "Nodes"},
		{SplitVote{Nodes: 5, Alive: 6}, "Alive"},
		{SplitVote{Nodes: 5, Alive: 4, Fraction: 1.5}, "Fraction"},
		{SplitVote{Nodes: 5, Alive: 4, Range: -time.Second}, "Range"},
		{SplitVote{Nodes: 5, Alive: 4, Model: "magic"}, "Model"},
	} {
		err := tc.sv.Validate()
		requireField(t, err, tc.want)
	}
	require.NoError(t, SplitVote{Nodes: 5, Alive: 4, Fraction: 0.1}.Validate())
}

func TestSplitVoteTrace(t *testing.T) {
	var lines []string
	o, err := SplitVote{Nodes: 5, Alive: 4, Fraction: 0.2}.Trial(context.Background(), 0, sim.TrialRand(3, 0), func(s string) { lines = append(lines, s) })
	require.NoError(t, err)
	require.True(t, o.OK)
	require.NotEmpty(t, lines)
	require.Contains(t, lines[0], "times out, votes for itself")
}

func ExamplesplitRate() {
	for _, l := range []float64{0.01, 0.1, 0.2} {
		fmt.Printf("n=5 s=4 l=%.2f: %.2f%%\n", l, 100*splitRate(5, 4, l))
	}
	// Output:
	// n=5 s=4 l=0.01: 0.06%
	// n=5 s=4 l=0.10: 5.23%
	// n=5 s=4 l=0.20: 18.08%
}
