package raftadapter_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/raftadapter"
)

// TestRPCTimeoutFloors: an RPC deadline in nanoseconds (a unit
// forgotten) is refused naming the field and the value with its unit;
// the timing's own floors are hashicorp/raft's (Timing.Validate).
func TestRPCTimeoutFloors(t *testing.T) {
	c := raftadapter.DefaultClusterConfig()
	c.RPCTimeout = 500
	require.ErrorContains(t, c.Validate(), "ClusterConfig.RPCTimeout 500ns: is below the floor of 1ms")
	b := raftadapter.DefaultBridgeConfig()
	b.ID, b.RespondTimeout = 1, 500
	require.ErrorContains(t, b.Validate(), "BridgeConfig.RespondTimeout 500ns: is below the floor of 1ms")
	tm := raftadapter.DefaultTiming()
	tm.ElectionTimeout = 150
	require.ErrorContains(t, tm.Validate(), "Timing.ElectionTimeout (150ns)")
}

// TestConfigErrorsAreFieldErrors: the configs' errors name their field
// in a *election.FieldError wrapping ErrInvalidConfig.
func TestConfigErrorsAreFieldErrors(t *testing.T) {
	c := raftadapter.DefaultClusterConfig()
	c.Nodes = 0
	err := c.Validate()
	require.ErrorIs(t, err, raftadapter.ErrInvalidConfig)
	var fe *election.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "ClusterConfig.Nodes", fe.Field)
	require.Equal(t, 0, fe.Value)
}
