package multiraftsim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/multiraftsim"
)

func TestRunSmall(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		c := multiraftsim.DefaultConfig()
		c.Groups, c.Active, c.Coalesce = 1000, 0.05, coalesce
		c.Warmup, c.Window, c.Settle = 2*time.Second, time.Second, 6*time.Second
		r, err := multiraftsim.Run(context.Background(), c)
		require.NoError(t, err)
		t.Logf("%+v", r)
		require.NoError(t, r.Safety)
		require.Equal(t, c.Groups/5, r.Affected, "node 1 leads a fifth of the groups")
		require.Equal(t, r.Affected, r.Recovered, "every affected group has a leader again")
		require.Zero(t, r.UnaffectedNewLeaders, "no other group changes leader")
		require.LessOrEqual(t, r.P99, 2*c.TimeoutMax)
		require.Greater(t, r.Before.Messages, 0.0)
		if coalesce {
			require.Less(t, r.Before.Batches, r.Before.Messages/5)
		}
	}
}

func TestValidate(t *testing.T) {
	c := multiraftsim.DefaultConfig()
	c.Active = 2
	require.ErrorIs(t, c.Validate(), multiraftsim.ErrInvalidConfig)
	c = multiraftsim.DefaultConfig()
	c.Replicas = 9
	var fe *sim.FieldError
	require.ErrorAs(t, c.Validate(), &fe)
	require.Equal(t, "Replicas", fe.Field)
}

// TestRunRealtime: the experiment on a real-time wheel, small and fast:
// every group node 1 led has a leader again and nobody else changed
// leader. Nothing about timing is asserted (the machine may be loaded):
// not even that no other group changed leader, which a host stalled for
// a timeout by a loaded machine may rightly do.
func TestRunRealtime(t *testing.T) {
	c := multiraftsim.DefaultConfig()
	c.Groups, c.Active, c.Realtime = 50, 0.1, true
	// Timeouts of 100-200ms and a settle of 1.5s leave room for a loaded
	// machine's hosts to fall behind (and hold elections) and recover.
	c.TimeoutMin, c.TimeoutMax = 100*time.Millisecond, 200*time.Millisecond
	c.HibernateAfter = 150 * time.Millisecond
	c.Warmup, c.Window, c.Settle = 300*time.Millisecond, 100*time.Millisecond, 1500*time.Millisecond
	r, err := multiraftsim.Run(context.Background(), c)
	require.NoError(t, err)
	require.NoError(t, r.Safety)
	require.Equal(t, c.Groups/5, r.Affected)
	require.Equal(t, r.Affected, r.Recovered, "every affected group has a leader again")
	t.Logf("recovery p50 %v p99 %v; other groups that elected: %d", r.P50, r.P99, r.UnaffectedNewLeaders)
	require.GreaterOrEqual(t, r.VirtualTotal, c.Warmup+2*c.Window+c.Settle, "the run waited in real time")
}
