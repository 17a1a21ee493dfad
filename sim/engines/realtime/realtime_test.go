package realtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// quick is a setup whose real-time trials take about 150ms, with room
// for a loaded machine's lateness.
func quick() experiment.Setup {
	s := experiment.PlainModel()
	s.TimeoutMin, s.TimeoutMax = 50*time.Millisecond, 100*time.Millisecond
	s.Latency = sim.Fixed(500 * time.Microsecond)
	s.MaxTime = 30 * time.Second
	return s
}

// TestFailoverAndBootstrap: a few trials of each experiment on real
// time finish with a leader elected in a term above the old one, and the
// engine measures its own lateness. Nothing about timing is asserted (the
// machine may be loaded).
func TestFailoverAndBootstrap(t *testing.T) {
	seed := testseed.Seed(t)
	for _, pvcq := range []bool{false, true} {
		s := quick()
		s.PreVote, s.CheckQuorum = pvcq, pvcq
		if pvcq {
			s.Loss = 0.05
		}
		stats := &Stats{}
		e := Engine{Stats: stats, WheelPerServer: pvcq}
		for i, x := range []experiment.Experiment{Failover{s, e}, Bootstrap{s, e}} {
			rs, err := experiment.Run(context.Background(), []experiment.Experiment{x}, []int{3}, sim.RunOptions{Seed: seed, Workers: 2})
			require.NoError(t, err)
			r := rs[0]
			require.Equal(t, Model, r.Model)
			require.Equal(t, 3, r.Trials, "experiment %d", i)
			require.Zero(t, r.Summary.TimedOut)
			require.GreaterOrEqual(t, r.Summary.MeanTerms, 1.0)
			require.Positive(t, r.Summary.P50)
		}
		require.Positive(t, stats.Delivery().Count, "the carrier measured its deliveries")
		require.NotEmpty(t, stats.Delivery().Sample)
	}
}

// TestRunInterrupted: a cancelled context ends a trial's Run with the
// context's error, and the cluster closes cleanly.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := quick()
	var c experiment.Cluster
	c, err := Engine{}.NewCluster(ctx, s, sim.TrialRand(1, 0), experiment.Hooks{})
	require.NoError(t, err)
	require.NoError(t, c.Start())
	go cancel()
	require.False(t, c.Run(time.Hour, func() bool { return false }))
	require.ErrorIs(t, c.Err(), context.Canceled)
	c.Close()
}

// TestCheckRefusesLateness: the real-time engine refuses the modelled
// timer lateness.
func TestCheckRefusesLateness(t *testing.T) {
	s := quick()
	require.NoError(t, Check(s))
	s.TimerLateness = sim.Fixed(time.Millisecond)
	var fe *sim.FieldError
	require.ErrorAs(t, Check(s), &fe)
	require.Equal(t, "TimerLateness", fe.Field)
	s = quick()
	s.LatenessSpread = 0.5
	require.ErrorIs(t, Check(s), ErrInvalidConfig)
}

// TestCarrier: messages arrive in the order of their arrival times (ties
// in the order sent), late by what the carrier reports, and a stopped
// carrier refuses more. The clock stands still while the messages are
// sent, so that their arrival times are the delays given however slowly
// the test runs (a goroutine descheduled between two Sends on a loaded
// machine reordered them), and runs from the start after.
func TestCarrier(t *testing.T) {
	start := time.Now()
	var sending atomic.Bool
	sending.Store(true)
	now := func() time.Duration {
		if sending.Load() {
			return 0
		}
		return time.Since(start)
	}
	got := make(chan election.Message, 4)
	c := newCarrier(now, func(m election.Message, due time.Duration) {
		require.GreaterOrEqual(t, now(), due, "never early")
		got <- m
	})
	require.NoError(t, c.Send(election.Message{Term: 3}, 3*time.Millisecond))
	require.NoError(t, c.Send(election.Message{Term: 1}, 0))
	require.NoError(t, c.Send(election.Message{Term: 2}, time.Millisecond))
	sending.Store(false)
	for want := uint64(1); want <= 3; want++ {
		require.Equal(t, want, (<-got).Term)
	}
	require.GreaterOrEqual(t, now(), 3*time.Millisecond, "never early")
	c.stop()
	require.ErrorIs(t, c.Send(election.Message{}, 0), errStopped)
	c.stop() // idempotent
}
