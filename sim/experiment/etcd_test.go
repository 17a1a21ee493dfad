package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
)

// TestEtcdModelConfig: the etcd preset turns on the election options
// that imitate etcd raft (see EtcdModel for the functions of raft.go).
func TestEtcdModelConfig(t *testing.T) {
	s := EtcdModel()
	require.NoError(t, s.Validate())
	ec := s.electionConfig()
	require.Equal(t, 100*ms, ec.Emulate.Tick)
	require.True(t, ec.Emulate.RestartTimerOnFollow, "becomeFollower resets the timer")
	require.True(t, ec.Emulate.StepDownWhenVoteTimedOut, "a timed-out candidate goes back to pre-vote")
	require.False(t, ec.Emulate.WaitForVoteTimeout, "stepCandidate: down at once on a majority of rejections")
	require.False(t, ec.Emulate.KeepTimerOnStepDown)
	require.True(t, ec.PreVote && ec.CheckQuorum && ec.LeaderStickiness)
	require.Equal(t, election.StickyByContact, ec.Stickiness)
	require.Equal(t, election.ResetOnHeartbeat, ec.Detection)
	require.Equal(t, time.Second, ec.StepDownInterval, "checkQuorum every ElectionTick ticks")
	require.Equal(t, 1.0, ec.LeaseRatio)
	require.Equal(t, 100*ms, ec.HeartbeatInterval)
	// Timeouts: whole ticks in [ET, 2ET), every value drawn.
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[time.Duration]bool{}
	for range 2000 {
		d := ec.ElectionJitter.Next(ec.ElectionTimeout, repeated.State{}, rng)
		require.Zero(t, d%(100*ms))
		require.GreaterOrEqual(t, d, time.Second)
		require.Less(t, d, 2*time.Second)
		seen[d] = true
	}
	require.Len(t, seen, 10)
	require.Contains(t, s.Describe(), "ticks of 100ms (heartbeat 1, election 10 ticks)")
}

// TestEtcdTiming: --timeout T means [T, 2T) with a heartbeat, and tick,
// of T/10; other ranges are refused, as etcd cannot draw them.
func TestEtcdTiming(t *testing.T) {
	m, err := ModelNamed("etcd")
	require.NoError(t, err)
	s := m.Setup()
	require.NoError(t, m.Timing(&s, 500*ms, 500*ms, 0))
	require.Equal(t, []time.Duration{500 * ms, time.Second, 50 * ms, 50 * ms}, []time.Duration{s.TimeoutMin, s.TimeoutMax, s.Heartbeat, s.Tick})
	require.NoError(t, s.Validate())
	require.NoError(t, m.Timing(&s, time.Second, 2*time.Second, 200*ms))
	require.Equal(t, 200*ms, s.Tick, "etcd's heartbeat is one tick")
	var fe *sim.FieldError
	require.ErrorAs(t, m.Timing(&s, time.Second, 1500*ms, 0), &fe)
	require.Equal(t, "TimeoutMax", fe.Field)
	require.ErrorIs(t, m.Tune(&TuneConfig{}), ErrInvalidConfig)
}

func TestTickValidate(t *testing.T) {
	for _, tc := range []struct {
		edit  func(*Setup)
		field string
	}{
		{func(s *Setup) { s.Tick = -ms }, "Tick"},
		{func(s *Setup) { s.TimeoutMin = 1050 * ms }, "TimeoutMin"},
		{func(s *Setup) { s.TimeoutMax = 1950 * ms }, "TimeoutMax"},
		{func(s *Setup) { s.TimeoutMax = s.TimeoutMin }, "TimeoutMax"},
		{func(s *Setup) { s.Heartbeat = 150 * ms }, "Heartbeat"},
		{func(s *Setup) { s.Granularity = ms }, "Granularity"},
		{func(s *Setup) { s.TimerLateness = sim.Fixed(ms) }, "TimerLateness"},
	} {
		s := EtcdModel()
		tc.edit(&s)
		err := s.Validate()
		var fe *sim.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
		require.True(t, errors.Is(err, ErrInvalidConfig))
	}
}

// TestEtcdModelTicks: in a simulated failover under the etcd model every
// election a node starts comes on one of its ticks: the instants of one
// node's election starts on a timer differ by whole ticks (the nodes'
// phases differ), whatever the message latency.
func TestEtcdModelTicks(t *testing.T) {
	seed := testseed.Seed(t)
	s := EtcdModel()
	s.PreVote = false // more rounds, more starts to check
	s.Latency = sim.Uniform(1*ms, 30*ms)
	starts := map[string][]time.Duration{}
	repeats := 0 // starts after a node's first one in a trial
	for i := 0; i < 1000 && repeats < 20; i++ {
		var lines []string
		_, err := Failover{Setup: s}.Trial(context.Background(), i, sim.TrialRand(seed, i), func(l string) { lines = append(lines, l) })
		require.NoError(t, err)
		for _, l := range lines {
			// Starts on a timer: "1194.605ms  n4   ElectionStart t2 Candidate (election timeout)".
			if !strings.Contains(l, "ElectionStart") || !strings.Contains(l, "timeout)") {
				continue
			}
			var at time.Duration
			var node string
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			if d, err := time.ParseDuration(f[0]); err == nil {
				at, node = d, f[1]
				key := fmt.Sprintf("%d/%s", i, node)
				if len(starts[key]) > 0 {
					repeats++
				}
				starts[key] = append(starts[key], at)
			}
		}
	}
	require.GreaterOrEqual(t, repeats, 20, "enough repeated starts to check")
	for key, ts := range starts {
		for _, at := range ts[1:] {
			// The trace prints microseconds: allow their rounding.
			off := (at - ts[0]) % (100 * ms)
			require.True(t, off <= time.Microsecond || off >= 100*ms-time.Microsecond, "%s: %v", key, ts)
		}
	}
}
