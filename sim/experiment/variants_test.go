package experiment

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
)

func TestSetupSetVariants(t *testing.T) {
	s := PaperModel()
	for _, kv := range [][2]string{
		{"candidatetimeout", "75-100ms"}, {"candidatebackoff", "true"}, {"crash", "2"}, {"crashoffset", "0"},
		{"until", "majority"}, {"leaderwrites", "3"}, {"timerswait", "false"}, {"rearmafterterm", "false"},
		{"noise", "fixed:1ms"}, {"shortlogs", "1"},
	} {
		require.NoError(t, s.Set(kv[0], kv[1]), kv)
	}
	require.Equal(t, [2]time.Duration{75 * ms, 100 * ms}, [2]time.Duration{s.CandidateMin, s.CandidateMax})
	require.True(t, s.CandidateBackoff && s.CrashAfterHeartbeat)
	require.False(t, s.TimersWait || s.RearmAfterTermWrite)
	require.Equal(t, 2, s.Crash)
	require.Equal(t, UntilMajority, s.Until)
	require.Equal(t, 3, s.LeaderWrites)
	require.Equal(t, "fixed:1ms", s.TimerLateness.String(), "noise is the old name of lateness")
	require.NoError(t, s.Validate())
	d := s.Describe()
	for _, want := range []string{"candidate timeout 75-100ms", "candidate backoff", "2 servers crash", "crash right after a heartbeat", "until majority", "writes 3 times"} {
		require.Contains(t, d, want)
	}
	require.NoError(t, s.Set("candidatetimeout", "0"))
	require.Zero(t, s.CandidateMin)
	require.NoError(t, s.Set("crashoffset", "uniform"))
	require.False(t, s.CrashAfterHeartbeat)
	for _, kv := range [][2]string{
		{"candidatetimeout", "9-1ms"}, {"candidatebackoff", "x"}, {"crash", "0"}, {"crash", "two"},
		{"crashoffset", "1ms"}, {"until", "forever"}, {"leaderwrites", "-1"}, {"timerswait", "x"},
	} {
		require.Equal(t, kv[1], requireField(t, s.Set(kv[0], kv[1]), kv[0]).Value, kv)
	}
}

func TestSetupValidateVariants(t *testing.T) {
	for _, tc := range []struct {
		edit  func(s *Setup)
		field string
	}{
		{func(s *Setup) { s.CandidateMin = 10 * ms }, "CandidateMin"},
		{func(s *Setup) { s.CandidateMax = 10 * ms }, "CandidateMin"},
		{func(s *Setup) { s.CandidateMin, s.CandidateMax = 20*ms, 10*ms }, "CandidateMax"},
		{func(s *Setup) { s.Crash, s.ShortLogs = 3, 0 }, "Crash"},
		{func(s *Setup) { s.Crash = -1 }, "Crash"},
		{func(s *Setup) { s.Crash, s.ShortLogs = 2, 3 }, "ShortLogs"},
		{func(s *Setup) { s.CrashAfterHeartbeat, s.Settle = true, 100*ms }, "CrashAfterHeartbeat"},
		{func(s *Setup) { s.Until = 9 }, "Until"},
		{func(s *Setup) { s.LeaderWrites = 101 }, "LeaderWrites"},
	} {
		s := PaperModel()
		tc.edit(&s)
		requireField(t, s.Validate(), tc.field)
	}
	s := PaperModel()
	s.Crash = 2 // 3 of 5 survive, one with a full log besides the 2 short ones
	require.NoError(t, s.Validate())
	s = PaperModel().WithNodes(3)
	s.Crash = 2
	requireField(t, s.Validate(), "Crash")
}

func TestCandidateTimeoutAndBackoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 1))
	s := PlainModel()
	s.CandidateMin, s.CandidateMax = 40*ms, 60*ms
	ec := s.electionConfig()
	require.Equal(t, 40*ms, ec.VoteTimeout)
	require.Equal(t, 150*ms, ec.ElectionTimeout)
	for range 100 {
		d := ec.VoteJitter.Next(ec.VoteTimeout, repeated.State{}, rng)
		require.True(t, d >= 40*ms && d < 60*ms, d)
		e := ec.ElectionJitter.Next(ec.ElectionTimeout, repeated.State{}, rng)
		require.True(t, e >= 150*ms && e < 300*ms, e)
	}
	s.CandidateBackoff = true
	ec = s.electionConfig()
	for k := range 14 {
		d := ec.VoteJitter.Next(ec.VoteTimeout, repeated.State{Consecutive: k}, rng)
		f := time.Duration(1) << min(k, MaxBackoffShift)
		require.True(t, d >= 40*ms*f && d < 60*ms*f, "round %d: %v", k, d)
	}
	// The follower's timer does not back off.
	require.Less(t, ec.ElectionJitter.Next(ec.ElectionTimeout, repeated.State{Consecutive: 5}, rng), 300*ms)
	// Backoff doubles the timeout, not the lateness (a fixed ms here):
	// 150ms (no range) is 1200ms after 3 failed rounds, plus 1ms.
	s = PaperModel()
	s.TimeoutMax = s.TimeoutMin
	s.TimerLateness = sim.Fixed(ms)
	s.CandidateBackoff = true
	ec = s.electionConfig()
	require.Equal(t, 1201*ms, ec.VoteJitter.Next(ec.VoteTimeout, repeated.State{Consecutive: 3}, rng))
	require.Equal(t, 151*ms, ec.ElectionJitter.Next(ec.ElectionTimeout, repeated.State{Consecutive: 3}, rng))
}

// TestCandidateVariantsInFailover: at 150-150ms on the plain model,
// every split repeats itself; a separate candidate timeout range breaks
// the tie, and backoff spreads the rounds further.
func TestCandidateVariantsInFailover(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	s.TimeoutMin, s.TimeoutMax, s.MaxTime = 150*ms, 150*ms, 10*time.Second
	// 200 trials: the candidate range saves about a sixth of a term on
	// average (0.08 to 0.30 over 30 seeds at 200 trials), too little for
	// 40 trials to show on every seed (seed 17 gave equal means).
	const trials = 200
	base := runFailover(t, s, seed, trials)
	s.CandidateMin, s.CandidateMax = 50*ms, 100*ms
	cand := runFailover(t, s, seed, trials)
	require.Less(t, cand.MeanTerms, base.MeanTerms)
	s.CandidateBackoff = true
	back := runFailover(t, s, seed, trials)
	require.Zero(t, back.TimedOut)
}

func runFailover(t *testing.T, s Setup, seed uint64, trials int) sim.Summary {
	t.Helper()
	rs, err := Run(context.Background(), []Experiment{Failover{s}}, []int{trials}, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	return rs[0].Summary
}

func TestFailoverCrashesK(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.Crash = 2
	var lines []string
	o, err := Failover{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), func(l string) { lines = append(lines, l) })
	require.NoError(t, err)
	require.True(t, o.OK)
	crashes := 0
	for _, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), " crash") {
			crashes++
		}
	}
	require.Equal(t, 2, crashes, strings.Join(lines, "\n"))
	sum := runFailover(t, s, seed, 100)
	require.Zero(t, sum.TimedOut, "one full-log survivor can always win")
}

// TestCrashOffset: crashed right after a heartbeat, the survivors wait a
// whole minimum timeout; at a uniform point, up to a heartbeat less.
func TestCrashOffset(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	after := s
	after.CrashAfterHeartbeat = true
	require.GreaterOrEqual(t, runFailover(t, after, seed, 200).Min, s.TimeoutMin)
	require.Less(t, runFailover(t, s, seed, 200).Min, s.TimeoutMin)
}

// TestUntil: for the same trial, the leader is elected no later than a
// majority knows it, and a majority no later than everyone.
func TestUntil(t *testing.T) {
	seed := testseed.Seed(t)
	for _, mk := range []func(Setup) Experiment{
		func(s Setup) Experiment { return Failover{s} },
		func(s Setup) Experiment { return Bootstrap{s} },
	} {
		var prev []time.Duration
		for _, u := range []Until{UntilElected, UntilMajority, UntilAll} {
			s := PaperModel()
			s.Until = u
			e := mk(s)
			var times []time.Duration
			for i := range 30 {
				o, err := e.Trial(context.Background(), i, sim.TrialRand(seed, i), nil)
				require.NoError(t, err)
				require.True(t, o.OK)
				times = append(times, o.Time)
			}
			for i := range prev {
				require.LessOrEqual(t, prev[i], times[i], "%s trial %d", u, i)
			}
			prev = times
		}
	}
	def, err := Bootstrap{PaperModel()}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), nil)
	require.NoError(t, err)
	s := PaperModel()
	s.Until = UntilMajority
	maj, err := Bootstrap{s}.Trial(context.Background(), 0, sim.TrialRand(seed, 0), nil)
	require.NoError(t, err)
	require.Equal(t, def, maj, "bootstrap's own stopping point is a majority")
	u, err := ParseUntil("all")
	require.NoError(t, err)
	require.Equal(t, UntilAll, u)
	b, err := u.MarshalText()
	require.NoError(t, err)
	require.Equal(t, "all", string(b))
	_, err = ParseUntil("never")
	requireField(t, err, "Until")
}
