package multiraft_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/msink"
	"github.com/raftick/raftick/multiraft"
)

// TestMetricsLabels: two hosts reporting to one sink keep their series
// apart by the node label (the host's ID), on the host's metrics and on
// its nodes'; with GroupLabels the nodes' metrics also carry the group.
func TestMetricsLabels(t *testing.T) {
	for _, groupLabels := range []bool{false, true} {
		v := newTestWheel(t)
		sink := metrics.NewInmemSink(time.Hour, time.Hour)
		net := multiraft.NewMemNetwork(v.Wheel, time.Millisecond)
		for id := election.ID(1); id <= 2; id++ {
			cfg := multiraft.DefaultConfig()
			cfg.ID = id
			cfg.Election.ElectionTimeout = 150 * time.Millisecond
			cfg.Election.Metrics = sink
			cfg.HibernateAfter = 0
			cfg.GroupLabels = groupLabels
			h, err := multiraft.NewHost(cfg, v.Wheel, net.Transport())
			require.NoError(t, err)
			t.Cleanup(h.Stop)
			net.Attach(h)
			for g := multiraft.GroupID(1); g <= 2; g++ {
				require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: g, Voters: []election.ID{1, 2},
					Storage: election.NewMemoryStorage(), Leader: election.ID(g)}))
			}
		}
		v.AdvanceBy(time.Second)
		names := map[string]bool{}
		for _, iv := range sink.Data() {
			for k := range iv.Gauges {
				names[k] = true
			}
			for k := range iv.Counters {
				names[k] = true
			}
			for k := range iv.Samples {
				names[k] = true
			}
		}
		require.True(t, names["raftick.host.groups;node=1"], "%v", names)
		require.True(t, names["raftick.host.groups;node=2"], "%v", names)
		nodes := 0
		for k := range names {
			if strings.HasPrefix(k, "raftick.host.") {
				require.NoError(t, msink.CheckName(k, "host"))
				continue
			}
			require.NoError(t, msink.CheckName(k, "election"))
			nodes++
			require.Contains(t, k, ";node=", "a node's metric %q without its host", k)
			if groupLabels {
				require.Contains(t, k, ";group=", "a node's metric %q without its group", k)
			} else {
				require.NotContains(t, k, "group=", k)
			}
		}
		require.NotZero(t, nodes, "the nodes report metrics too: %v", names)
	}
}
