package election_test

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// TestSharedConfig: nodes made from a Shared Config share their metrics
// state and logger; a node whose Config differs from the first in ID,
// Metrics, MetricsLabels or Logger builds its own, as does every node of a
// Config that is not Shared or whose sink is not a pointer.
func TestSharedConfig(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	mk := func(c election.Config) *election.Node {
		t.Helper()
		n, err := election.NewNode(c, v.Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		return n
	}
	base := validConfig()
	base.Metrics = metrics.NewInmemSink(time.Hour, time.Hour)
	s := base.Shared()
	first, second := mk(s), mk(s)
	require.True(t, election.SharesState(first, second))

	for name, edit := range map[string]func(c *election.Config){
		"ID":            func(c *election.Config) { c.ID = 2 },
		"Metrics":       func(c *election.Config) { c.Metrics = metrics.NewInmemSink(time.Hour, time.Hour) },
		"MetricsLabels": func(c *election.Config) { c.MetricsLabels = []metrics.Label{{Name: "group", Value: "7"}} },
		"Logger":        func(c *election.Config) { c.Logger = hclog.New(&hclog.LoggerOptions{Output: io.Discard}) },
	} {
		c := s
		edit(&c)
		require.False(t, election.SharesState(first, mk(c)), "a Config with another %s", name)
	}
	require.True(t, election.SharesState(first, mk(s)), "the first node's Config still shares")

	require.False(t, election.SharesState(mk(base), mk(base)), "not Shared")
	fan := base
	fan.Metrics = metrics.FanoutSink{metrics.NewInmemSink(time.Hour, time.Hour)}
	fan = fan.Shared()
	require.False(t, election.SharesState(mk(fan), mk(fan)), "a sink that is not a pointer")
}
