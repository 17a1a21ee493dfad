package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

// quietSetup is the election package's plain behaviour on a fast, fixed
// network.
func quietSetup(lo, hi time.Duration) Setup {
	return Setup{Nodes: 5, TimeoutMin: lo, TimeoutMax: hi, Network: sim.Network{Latency: sim.Fixed(250 * time.Microsecond)}, ShortLogs: 2}
}

func TestStabilityQuietClusterHasNoElections(t *testing.T) {
	seed := testseed.Seed(t)
	for _, tc := range []struct {
		name  string
		setup Setup
	}{
		{"plain", quietSetup(150*ms, 300*ms)},
		{"prevote", func() Setup { s := quietSetup(150*ms, 300*ms); s.PreVote = true; return s }()},
		{"paper model", PaperModel()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Stability{Setup: tc.setup, For: 5 * time.Minute}
			res, err := sim.Run(context.Background(), []sim.Job{JobOf(e, 2)}, sim.RunOptions{Seed: seed})
			require.NoError(t, err)
			for i, o := range res[0] {
				require.True(t, o.OK, "trial %d never settled", i)
				require.Equal(t, 5*time.Minute, o.Time)
				require.Zero(t, o.Elections, "trial %d", i)
				require.Zero(t, o.PreVotes, "trial %d", i)
				require.Zero(t, o.LeaderChanges, "trial %d", i)
				require.Zero(t, o.Terms, "trial %d", i)
				// Heartbeats every 75ms to 4 followers, and their answers.
				require.InDelta(t, 2*4*(5*time.Minute/(75*ms)), o.Messages, 20, "trial %d", i)
			}
			s := e.Summarize(res[0])
			require.InDelta(t, 5*10.0/60, s.NodeHours, 1e-9)
			require.Zero(t, s.ElectionsPerNodeHour)
		})
	}
}

func TestStabilityLongTailCausesElections(t *testing.T) {
	seed := testseed.Seed(t)
	// Heartbeats every 15ms, timeouts 30-40ms, and a one-way latency whose
	// tail often exceeds the 15ms margin.
	s := quietSetup(30*ms, 40*ms)
	s.Latency = sim.LogNormal(5*ms, 0.8)
	withPV := s
	withPV.PreVote = true
	lossy := quietSetup(50*ms, 100*ms)
	lossy.Loss = 0.05
	jobs := []sim.Job{
		JobOf(Stability{Setup: s, For: 2 * time.Minute}, 2),
		JobOf(Stability{Setup: withPV, For: 2 * time.Minute}, 2),
		JobOf(Stability{Setup: lossy, For: 2 * time.Minute}, 2),
	}
	res, err := sim.Run(context.Background(), jobs, sim.RunOptions{Seed: seed})
	require.NoError(t, err)

	plain := summarizeStability(s.Nodes, res[0])
	require.Greater(t, plain.ElectionsPerNodeHour, 100.0, "%+v", plain)
	require.Positive(t, plain.LeaderChanges)
	require.LessOrEqual(t, plain.LeaderChanges, plain.Elections, "every leader won an election")
	require.Zero(t, plain.PreVotes, "pre-vote is off")
	require.Equal(t, 2, plain.TrialsWithElection)

	pv := summarizeStability(withPV.Nodes, res[1])
	require.Positive(t, pv.PreVotes, "pre-vote rounds are counted separately: %+v", pv)
	require.Greater(t, pv.PreVotesPerNodeHour, 100.0)

	lost := summarizeStability(lossy.Nodes, res[2])
	require.Positive(t, lost.Elections, "5%% loss makes followers miss heartbeats: %+v", lost)
}

func TestSummarizeStability(t *testing.T) {
	outs := []sim.Outcome{
		{Time: 30 * time.Minute, Elections: 3, PreVotes: 5, LeaderChanges: 2, OK: true},
		{Time: 30 * time.Minute, OK: false},
	}
	s := summarizeStability(4, outs)
	require.Equal(t, 2, s.Trials)
	require.Equal(t, 1, s.Unsettled)
	require.Equal(t, time.Hour, s.Measured)
	require.InDelta(t, 4.0, s.NodeHours, 1e-12)
	require.InDelta(t, 0.75, s.ElectionsPerNodeHour, 1e-12)
	require.InDelta(t, 1.25, s.PreVotesPerNodeHour, 1e-12)
	require.InDelta(t, 2.0, s.LeaderChangesPerHour, 1e-12)
	require.Equal(t, 1, s.TrialsWithElection)
	require.Zero(t, summarizeStability(4, nil).ElectionsPerNodeHour)
}

func TestStabilityValidate(t *testing.T) {
	require.ErrorIs(t, Stability{Setup: quietSetup(150*ms, 300*ms), For: -time.Second}.Validate(), ErrInvalidConfig)
	require.ErrorIs(t, Stability{Setup: quietSetup(0, 300*ms)}.Validate(), ErrInvalidConfig)
	require.NoError(t, Stability{Setup: quietSetup(150*ms, 300*ms)}.Validate())
}

func smallTune() TuneConfig {
	s := quietSetup(0, 0)
	s.Latency = sim.LogNormal(5*ms, 0.8)
	return TuneConfig{
		Base:                    s,
		Mins:                    []time.Duration{30 * ms, 80 * ms, 200 * ms},
		Spreads:                 []float64{0.2, 1},
		Objective:               "p90",
		MaxElectionsPerNodeHour: 20,
		FailoverTrials:          60,
		StableTrials:            2,
		StableFor:               2 * time.Minute,
		MaxRounds:               -1, // one round: TestTuneRefines refines
	}
}

func TestTuneChoosesBestFeasible(t *testing.T) {
	seed := testseed.Seed(t)
	cfg := smallTune()
	r, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	require.Len(t, r.Candidates, 6)
	require.Equal(t, "p90", r.Config.Objective)

	feasible := 0
	for i, c := range r.Candidates {
		require.Equal(t, cfg.Mins[i/2], c.TimeoutMin)
		require.Equal(t, spreadMax(c.TimeoutMin, cfg.Spreads[i%2]), c.TimeoutMax)
		require.True(t, c.Complete)
		require.Equal(t, cfg.FailoverTrials, c.Failover.Trials)
		require.Equal(t, cfg.StableTrials, c.Stability.Trials)
		require.Equal(t, c.Failover.P90, c.Objective)
		require.Equal(t, c.Stability.ElectionsPerNodeHour, c.Unnecessary)
		_, hi := PoissonInterval(c.Stability.Elections, c.Stability.NodeHours)
		want := c.Stability.Unsettled == 0 && hi <= cfg.MaxElectionsPerNodeHour
		require.Equal(t, want, c.Feasible, "candidate %d: %+v", i, c.Stability)
		if c.Feasible {
			feasible++
		}
	}
	// The grid straddles the bound: the smallest timeouts, next to the
	// 15ms heartbeat, are unstable under the long tail; 200ms is not.
	require.False(t, r.Candidates[0].Feasible)
	require.True(t, r.Candidates[len(r.Candidates)-1].Feasible)
	require.Less(t, feasible, len(r.Candidates))

	require.GreaterOrEqual(t, r.Best, 0)
	best := r.Candidates[r.Best]
	require.True(t, best.Feasible)
	for i, c := range r.Candidates {
		if c.Feasible {
			require.LessOrEqual(t, best.Objective, c.Objective, "candidate %d beats the recommendation", i)
		}
	}

	// The same seed gives the same result, whatever the workers.
	r2, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed, Workers: 3})
	require.NoError(t, err)
	require.Equal(t, r.Best, r2.Best)
	for i := range r.Candidates {
		require.Equal(t, r.Candidates[i].Failover.Summary, r2.Candidates[i].Failover.Summary)
		require.Equal(t, r.Candidates[i].Stability, r2.Candidates[i].Stability)
	}
}

func TestTuneNothingFeasible(t *testing.T) {
	seed := testseed.Seed(t)
	cfg := smallTune()
	cfg.Mins = cfg.Mins[:1]
	cfg.MaxElectionsPerNodeHour = 0
	r, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	require.Equal(t, -1, r.Best)
}

func TestTuneInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Tune(ctx, smallTune(), sim.RunOptions{Seed: 1})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, r.Candidates, 6)
	require.Equal(t, -1, r.Best)
	for _, c := range r.Candidates {
		require.False(t, c.Complete)
		require.False(t, c.Feasible)
	}
}

func TestTuneConfigValidate(t *testing.T) {
	ok := smallTune()
	require.NoError(t, ok.Validate())
	require.NoError(t, TuneConfig{Base: quietSetup(0, 0)}.Validate(), "defaults are valid")
	for _, tc := range []struct {
		name  string
		edit  func(*TuneConfig)
		field string
	}{
		{"objective", func(c *TuneConfig) { c.Objective = "p42" }, "Objective"},
		{"bound", func(c *TuneConfig) { c.MaxElectionsPerNodeHour = -1 }, "MaxElectionsPerNodeHour"},
		{"trials", func(c *TuneConfig) { c.FailoverTrials = -1 }, "FailoverTrials"},
		{"stable for", func(c *TuneConfig) { c.StableFor = -time.Second }, "StableFor"},
		{"spread", func(c *TuneConfig) { c.Spreads = []float64{-0.5} }, "Spreads"},
		{"min", func(c *TuneConfig) { c.Mins = []time.Duration{0} }, "Mins"},
		{"heartbeat", func(c *TuneConfig) { c.Base.Heartbeat = 50 * ms }, "Heartbeat"},
		{"heartbeat ratio", func(c *TuneConfig) { c.HeartbeatRatio = 1 }, "HeartbeatRatio"},
		{"settle ratio", func(c *TuneConfig) { c.SettleRatio = -1 }, "SettleRatio"},
		{"nodes", func(c *TuneConfig) { c.Base.Nodes = 0 }, "Nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := smallTune()
			tc.edit(&c)
			err := c.Validate()
			requireField(t, err, tc.field)
			_, err = Tune(context.Background(), c, sim.RunOptions{})
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestTuneRatios(t *testing.T) {
	c := TuneConfig{Base: HashicorpModel(), HeartbeatRatio: 0.1, SettleRatio: 1}
	c.Base.Heartbeat = 0
	s := c.candidate(80*ms, 1)
	require.Equal(t, 8*ms, s.Heartbeat)
	require.Equal(t, 80*ms, s.Settle)
	require.Equal(t, 160*ms, s.TimeoutMax)
	v, ok := ObjectiveValue(sim.Summary{P50: 1, P90: 2, P99: 3, Mean: 4, Max: 5}, "mean")
	require.True(t, ok)
	require.Equal(t, time.Duration(4), v)
	_, ok = ObjectiveValue(sim.Summary{}, "median")
	require.False(t, ok)
}

func TestTuneCountPreVotes(t *testing.T) {
	seed := testseed.Seed(t)
	cfg := smallTune()
	cfg.Base.PreVote = true
	cfg.Mins = cfg.Mins[:1] // 30ms: many failed pre-vote rounds, no elections
	cfg.Spreads = cfg.Spreads[1:]
	cfg.FailoverTrials = 20
	cfg.MaxElectionsPerNodeHour = 5
	only, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	cfg.CountPreVotes = true
	both, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	a, b := only.Candidates[0], both.Candidates[0]
	require.Equal(t, a.Stability, b.Stability, "the same runs")
	require.Positive(t, a.Stability.PreVotes)
	require.Equal(t, a.Stability.ElectionsPerNodeHour, a.Unnecessary)
	require.InDelta(t, a.Stability.ElectionsPerNodeHour+a.Stability.PreVotesPerNodeHour, b.Unnecessary, 1e-9)
	require.Equal(t, a.RateHigh <= 5, a.Feasible, "feasible when the rate's 95%% interval lies under the bound")
	require.False(t, b.Feasible, "pre-vote rounds %v per node-hour exceed the bound", b.Unnecessary)
	require.Equal(t, "elections and pre-votes", both.RoundsCounted())
	require.Equal(t, "elections", only.RoundsCounted())
}

// TestTuneRefines: a close decision gets more trials, in rounds that
// continue the candidates' trial streams, until it is stable or the
// rounds run out; the result does not depend on the workers, and the
// runner-up is named.
func TestTuneRefines(t *testing.T) {
	seed := testseed.Seed(t)
	cfg := smallTune()
	cfg.Mins = []time.Duration{80 * ms, 200 * ms}
	cfg.Spreads = []float64{0.5, 1}
	cfg.MaxRounds = 2
	var rounds []int
	r, err := TuneWith(context.Background(), cfg, sim.RunOptions{Seed: seed}, func(ctx context.Context, round int, jobs []sim.Job, opts sim.RunOptions) sim.Accumulated {
		rounds = append(rounds, round)
		if round > 0 {
			for _, j := range jobs {
				require.Equal(t, j.First, j.Trials, "a round doubles a candidate's trials, continuing its streams")
			}
		}
		return sim.Accumulate(ctx, jobs, opts)
	})
	require.NoError(t, err)
	require.Equal(t, len(rounds)-1, r.Rounds)
	require.LessOrEqual(t, r.Rounds, 2)
	if r.Rounds < 2 {
		require.True(t, r.Decided, "stopped early only when decided")
	}
	require.Equal(t, r.Decided, r.Undecided == "")
	if r.Best >= 0 {
		b := r.Candidates[r.Best]
		require.LessOrEqual(t, b.ObjectiveLow, b.Objective)
		if b.ObjectiveBounded {
			require.GreaterOrEqual(t, b.ObjectiveHigh, b.Objective)
		}
		require.LessOrEqual(t, b.RateHigh, cfg.MaxElectionsPerNodeHour)
		require.NotEqual(t, r.Best, r.RunnerUp)
	}
	r2, err := Tune(context.Background(), cfg, sim.RunOptions{Seed: seed, Workers: 1})
	require.NoError(t, err)
	require.Equal(t, r.Best, r2.Best)
	require.Equal(t, r.RunnerUp, r2.RunnerUp)
	require.Equal(t, r.Rounds, r2.Rounds)
	for i := range r.Candidates {
		require.Equal(t, r.Candidates[i].Failover.Trials, r2.Candidates[i].Failover.Trials)
		require.Equal(t, r.Candidates[i].Objective, r2.Candidates[i].Objective)
	}
}
