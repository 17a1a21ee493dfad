package experiment

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

// TestPaperShape runs a reduced `raftsim paper` (fewer trials) and checks
// the shape the paper reports: no randomness (150-150ms) is far slower
// than a little (150-155ms), which is slower than 150-300ms at the median,
// and more randomness cuts the tail.
func TestPaperShape(t *testing.T) {
	seed := testseed.Seed(t)
	base := PaperModel()
	base.MaxTime = 30 * time.Second
	n := 300
	if raceEnabled || testing.Short() {
		n = 120
	}
	var exps []Experiment
	var trials []int
	for _, e := range PaperExperiments(base) {
		exps = append(exps, e)
		trials = append(trials, n)
		if e.Row.Min == e.Row.Max {
			trials[len(trials)-1] = 12
		}
	}
	ss, err := Run(context.Background(), exps, trials, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	for i, s := range ss {
		t.Logf("%-10s p50 %v p99 %v split %.1f%%", s.Label, s.P50, s.P99, 100*s.SplitVoteRate)
		quoted := PaperRows()[i].Quoted
		require.Equal(t, len(quoted), len(slices.DeleteFunc(slices.Clone(s.Paper), func(f PaperFigure) bool { return !f.Quoted() })), "the row's quoted figures travel in its result")
		if len(quoted) > 0 {
			require.Equal(t, quoted, s.Paper[:len(quoted)])
		}
		fig, ok := FigureRow(s.Label)
		require.True(t, ok, "every row of the paper is in the figure's data")
		require.Len(t, s.Paper, len(quoted)+len(FigurePercentiles), "then the figure's percentiles")
		for j, f := range s.Paper[len(quoted):] {
			require.Equal(t, PaperFigure{Stat: FigurePercentiles[j], Relation: "figure", Value: fig[j]}, f)
		}
		require.Equal(t, seed, s.Seed)
	}
	none, little, more := ss[0], ss[2], ss[5]
	require.Greater(t, none.P50, 10*little.P50, "150-150 far slower than 150-155")
	require.Greater(t, none.P50, 3*time.Second)
	require.Greater(t, little.P50, more.P50, "150-155 slower than 150-300 at the median")
	require.Greater(t, little.P99, ss[4].P99, "more randomness cuts the tail")
	require.Greater(t, little.SplitVoteRate, more.SplitVoteRate)
	// Bottom panel: a smaller minimum timeout elects faster.
	require.Less(t, ss[6].P50, ss[7].P50)
	require.Less(t, ss[7].P50, ss[8].P50)
	require.Less(t, ss[8].P50, ss[9].P50)
	// The quoted figures land in the paper's neighbourhood even with few
	// trials (the full run is compared in README).
	require.InDelta(t, 287, float64(little.P50)/1e6, 60)
	require.InDelta(t, 35, float64(ss[6].Mean)/1e6, 10)
}

func TestPaperRows(t *testing.T) {
	rows := PaperRows()
	total := 0
	for _, r := range rows {
		total += r.Trials
	}
	require.Equal(t, 10100, total)
	require.Len(t, PaperExperiments(PaperModel()), len(rows))
	quoted := 0
	for _, r := range rows {
		quoted += len(r.Quoted)
	}
	require.Equal(t, 5, quoted)
	require.Equal(t, []int{100, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, PaperTrials(0))
	require.Equal(t, []int{4, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40}, PaperTrials(40))
	require.Equal(t, 1, PaperTrials(5)[0])
}

func TestBroadcastTimes(t *testing.T) {
	s := Setup{Nodes: 5, Network: sim.Network{Latency: sim.Fixed(ms), Disk: sim.Fixed(2 * ms)}}
	bt := BroadcastTimes(s)
	require.Equal(t, 4*ms, bt.RoundTripWrite)
	require.Equal(t, 6*ms, bt.VoteRound) // two writes at the voter
	s.DiskBlocks = true
	require.Equal(t, 8*ms, BroadcastTimes(s).VoteRound) // and the candidate's own first
	s.GroupCommit = true
	require.Equal(t, 6*ms, BroadcastTimes(s).VoteRound)
}

func TestFailoverTrial(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 300*ms
	var lines []string
	o, err := Failover{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), func(l string) { lines = append(lines, l) })
	require.NoError(t, err)
	require.True(t, o.OK)
	// Detection alone takes at least the minimum timeout minus a heartbeat
	// interval, and the election adds at least a broadcast.
	require.Greater(t, o.Time, 75*ms)
	require.Less(t, o.Time, 2*time.Second)
	require.GreaterOrEqual(t, o.Terms, 1)
	require.Equal(t, o.Terms-1, o.Splits)
	require.Positive(t, o.Messages)
	text := strings.Join(lines, "\n")
	require.Contains(t, text, "setup done")
	require.Contains(t, text, "heartbeat broadcast; crash in")
	require.Contains(t, text, "crash")
	require.Contains(t, text, "LeaderElected")
	// Same rng state, same trial.
	again, err := Failover{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), nil)
	require.NoError(t, err)
	require.Equal(t, o, again)
}

func TestFailoverShortLogsNeverWin(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 155*ms
	for i := range 30 {
		var short []string
		var winner string
		_, err := Failover{s}.Trial(context.Background(), i, sim.TrialRand(seed, i), func(l string) {
			if k := strings.Index(l, "short logs: ["); k >= 0 {
				short = strings.Fields(strings.Trim(l[k+len("short logs: "):], "[]"))
			}
			if strings.Contains(l, "LeaderElected") && !strings.Contains(l, " t1 ") {
				winner = strings.TrimPrefix(strings.Fields(l)[1], "n")
			}
		})
		require.NoError(t, err)
		require.Len(t, short, 2)
		require.NotContains(t, short, winner, "trial %d: a short log won", i)
	}
}

func TestBootstrapTrial(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel().WithNodes(3)
	s.PreVote = true
	o, err := Bootstrap{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), nil)
	require.NoError(t, err)
	require.True(t, o.OK)
	require.GreaterOrEqual(t, o.Time, 150*ms)
	require.GreaterOrEqual(t, o.Terms, 1)
}

func TestTimedOutTrial(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 150*ms
	s.TimerLateness = nil // identical timeouts forever: never converges
	s.MaxTime = 2 * time.Second
	o, err := Failover{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), nil)
	require.NoError(t, err)
	require.False(t, o.OK)
	require.Equal(t, 2*time.Second, o.Time)
	require.Equal(t, o.Terms, o.Splits)
}
