package experiment

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

func partitionSummary(t *testing.T, s Setup, shape string, seed uint64) StabilitySummary {
	t.Helper()
	sh, err := ShapeNamed(shape)
	require.NoError(t, err)
	p := Partition{Stability: Stability{Setup: s, For: time.Minute}, Shape: sh}
	require.NoError(t, p.Validate())
	outs, err := sim.Run(context.Background(), []sim.Job{JobOf(p, 2)}, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	return p.Summarize(outs[0])
}

// TestPartitionShapes: with pre-vote and check-quorum, a shape that
// leaves the leader connected to a majority costs no election and no
// leaderless time; without pre-vote and check-quorum (whose voters refuse
// candidates while they hear the leader), a follower cut from the leader
// keeps deposing it; with the leader in the minority, the majority side
// elects a new leader once.
func TestPartitionShapes(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	s.PreVote, s.CheckQuorum = true, true
	for _, sh := range []string{"follower-cut", "bare-quorum", "chain", "one-way"} {
		sum := partitionSummary(t, s, sh, seed)
		require.Zero(t, sum.Unsettled, sh)
		require.Zero(t, sum.Elections, sh)
		require.Zero(t, sum.LeaderChanges, sh)
		require.Zero(t, sum.Leaderless, sh)
		require.Positive(t, sum.PreVotes, "%s: the cut-off servers keep trying", sh)
	}
	minority := partitionSummary(t, s, "leader-minority", seed)
	require.Equal(t, 2, minority.LeaderChanges, "one new leader per window")
	require.Positive(t, minority.Leaderless)
	require.Less(t, minority.Leaderless, 2*time.Second)
	s.PreVote, s.CheckQuorum = false, false
	cut := partitionSummary(t, s, "follower-cut", seed)
	require.Greater(t, cut.LeaderChanges, 10)
	require.Positive(t, cut.Leaderless)
}

func TestPartitionShapeLayout(t *testing.T) {
	for _, tc := range []struct {
		shape string
		nodes int
		cut   [][2]election.ID // leader 1, followers 2..n
		kept  [][2]election.ID
	}{
		{"follower-cut", 5, [][2]election.ID{{1, 2}, {2, 1}}, [][2]election.ID{{1, 3}, {2, 3}}},
		{"bare-quorum", 5, [][2]election.ID{{1, 4}, {5, 1}}, [][2]election.ID{{1, 2}, {1, 3}, {4, 5}, {4, 2}}},
		{"leader-minority", 5, [][2]election.ID{{1, 3}, {2, 5}}, [][2]election.ID{{1, 2}, {3, 5}}},
		{"chain", 5, [][2]election.ID{{2, 1}, {2, 4}, {1, 5}}, [][2]election.ID{{2, 3}, {3, 1}, {1, 4}, {4, 5}}},
		{"one-way", 3, [][2]election.ID{{1, 2}}, [][2]election.ID{{2, 1}, {1, 3}, {2, 3}}},
	} {
		sh, err := ShapeNamed(tc.shape)
		require.NoError(t, err)
		s := PlainModel().WithNodes(tc.nodes)
		c, err := sim.NewCluster(s.Config(sim.TrialRand(1, 0)))
		require.NoError(t, err)
		var f []election.ID
		for _, id := range c.IDs()[1:] {
			f = append(f, id)
		}
		sh.apply(c, 1, f)
		for _, l := range tc.cut {
			require.False(t, c.Linked(l[0], l[1]), "%s: %d->%d", tc.shape, l[0], l[1])
		}
		for _, l := range tc.kept {
			require.True(t, c.Linked(l[0], l[1]), "%s: %d->%d", tc.shape, l[0], l[1])
		}
		c.Close()
	}
}

func TestPartitionValidate(t *testing.T) {
	sh, err := ShapeNamed("chain")
	require.NoError(t, err)
	_, err = ShapeNamed("donut")
	requireField(t, err, "Shape")
	requireField(t, Partition{Stability: Stability{Setup: PlainModel()}}.Validate(), "Shape")
	requireField(t, Partition{Stability: Stability{Setup: PlainModel().WithNodes(2)}, Shape: sh}.Validate(), "Nodes")
	requireField(t, Partition{Stability: Stability{Setup: PlainModel(), For: -1}, Shape: sh}.Validate(), "For")
	require.Equal(t, "partition", Partition{Stability: Stability{Setup: PlainModel()}, Shape: sh}.Result(nil).Experiment)
}
