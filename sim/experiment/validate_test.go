package experiment_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// TestRunValidatesFirst: every exported entry point that runs a Setup
// (Run, Accumulate, RunFailover, RunBootstrap) refuses an invalid one
// before running anything, with Validate's error naming the field, not a
// row of statistics or a recovered panic.
func TestRunValidatesFirst(t *testing.T) {
	ms := time.Millisecond
	reversed := experiment.PaperModel()
	reversed.TimeoutMin, reversed.TimeoutMax = 300*ms, 150*ms
	unitless := experiment.PaperModel()
	unitless.TimeoutMin, unitless.TimeoutMax = 150, 300
	two := experiment.PaperModel()
	two.Nodes = 2 // with the paper's 2 short logs
	for _, tc := range []struct {
		name  string
		s     experiment.Setup
		field string
	}{{"reversed", reversed, "TimeoutMax"}, {"unitless", unitless, "TimeoutMin"}, {"two nodes", two, "ShortLogs"}} {
		for _, e := range []experiment.Experiment{experiment.Failover{Setup: tc.s}, experiment.Bootstrap{Setup: tc.s}} {
			rs, err := experiment.Run(context.Background(), []experiment.Experiment{e}, []int{3}, sim.RunOptions{Seed: 1})
			require.ErrorIs(t, err, experiment.ErrInvalidConfig, tc.name)
			var fe *sim.FieldError
			require.ErrorAs(t, err, &fe, tc.name)
			require.Equal(t, tc.field, fe.Field, tc.name)
			require.Nil(t, rs, "%s: no row for an invalid setup", tc.name)
			acc := experiment.Accumulate(context.Background(), []experiment.Experiment{e}, []int{3}, sim.RunOptions{Seed: 1})
			require.ErrorIs(t, acc.Err, experiment.ErrInvalidConfig, tc.name)
			require.Zero(t, acc.Accs[0].Summary().Trials, tc.name)
		}
		_, err := experiment.RunFailover(context.Background(), experiment.Raftick{}, tc.s, sim.TrialRand(1, 0), nil)
		require.ErrorIs(t, err, experiment.ErrInvalidConfig, tc.name)
		_, err = experiment.RunBootstrap(context.Background(), experiment.Raftick{}, tc.s, sim.TrialRand(1, 0), nil)
		require.ErrorIs(t, err, experiment.ErrInvalidConfig, tc.name)
	}
	// A failover of 2 servers leaves no majority to elect a new leader.
	_, err := experiment.Run(context.Background(), []experiment.Experiment{experiment.Failover{Setup: experiment.PlainModel().WithNodes(2)}}, []int{1}, sim.RunOptions{})
	require.ErrorIs(t, err, experiment.ErrInvalidConfig)
	require.Contains(t, err.Error(), "Nodes 2: cannot elect a leader after the crash")
	_, err = experiment.Run(context.Background(), []experiment.Experiment{experiment.Failover{Setup: reversed}}, nil, sim.RunOptions{})
	require.ErrorIs(t, err, experiment.ErrInvalidConfig, "a trial count per experiment")
}
