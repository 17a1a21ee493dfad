package election_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/msink"
)

// nodeLabel matches the node label of a flattened InmemSink key.
var nodeLabel = regexp.MustCompile(`;node=[0-9]+`)

// metricNames returns the counter and sample names an InmemSink holds,
// with their labels but node's.
func metricNames(s *metrics.InmemSink) (counters, samples []string) {
	for _, iv := range s.Data() {
		for k := range iv.Counters {
			counters = append(counters, nodeLabel.ReplaceAllString(k, ""))
		}
		for k := range iv.Samples {
			samples = append(samples, nodeLabel.ReplaceAllString(k, ""))
		}
	}
	slices.Sort(counters)
	slices.Sort(samples)
	return slices.Compact(counters), slices.Compact(samples)
}

// TestMetricNames runs a 3-node group with PreVote and CheckQuorum through
// an election, a leader crash and a re-election, reporting to a per-node
// InmemSink, and checks the raftick.* names the package documentation
// lists.
func TestMetricNames(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	c := newCluster(t, clusterOpts{n: 3, delay: time.Millisecond, seed: 12, config: func(c *election.Config) {
		c.ElectionTimeout = 150 * time.Millisecond
		c.PreVote, c.CheckQuorum = true, true
		c.Metrics = sink
	}})
	c.startAll(t)
	require.True(t, c.runUntil(5*time.Second, func() bool { _, ok := c.stableLeader(); return ok }))
	old, _ := c.stableLeader()
	c.v.AdvanceBy(time.Second) // step-down checks sample the leader's last contact
	c.crash(old)
	require.True(t, c.runUntil(c.v.Now()+5*time.Second, func() bool { l, ok := c.stableLeader(); return ok && l != old }))
	// The new leader loses its quorum: a check-quorum step-down.
	l, _ := c.stableLeader()
	for _, id := range c.ids {
		if id != l && id != old {
			c.crash(id)
		}
	}
	require.True(t, c.runUntil(c.v.Now()+5*time.Second, func() bool { return len(c.leaders()) == 0 }))
	c.v.AdvanceBy(time.Second)

	counters, samples := metricNames(sink)
	for _, want := range []string{
		"raftick.election.state.follower",
		"raftick.election.state.precandidate",
		"raftick.election.state.candidate",
		"raftick.election.state.leader",
		"raftick.election.transition.heartbeat_timeout",
		"raftick.election.transition.leader_lease_timeout",
		"raftick.election.prevote.started",
		"raftick.election.prevote.won",
		"raftick.election.prevote.granted",
		"raftick.election.started",
		"raftick.election.won",
		"raftick.election.vote.granted",
		"raftick.election.stepdown;reason=check_quorum;from=leader",
	} {
		require.Contains(t, counters, want, "counters: %v", counters)
	}
	require.Contains(t, samples, "raftick.election.leader.last_contact")
	for _, k := range append(counters, samples...) {
		require.NoError(t, msink.CheckName(k, "election"))
	}
}

// TestMetricsElectionLostAndRefused: a candidate whose vote is refused
// counts a lost election and the refusal's reason.
func TestMetricsElectionLostAndRefused(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	c := newCluster(t, clusterOpts{n: 3, delay: time.Millisecond, seed: 5, config: func(c *election.Config) {
		c.Metrics = sink
	}})
	c.logs[1].index, c.logs[1].term = 0, 0 // n1's log is behind
	c.logs[2].index, c.logs[2].term = 5, 1
	c.logs[3].index, c.logs[3].term = 5, 1
	c.startAll(t)
	require.NoError(t, c.nodes[1].Campaign())
	c.v.AdvanceBy(10 * time.Millisecond)
	counters, _ := metricNames(sink)
	require.Contains(t, counters, "raftick.election.vote.refused;reason=log_not_up_to_date", "counters: %v", counters)
	require.Contains(t, counters, "raftick.election.lost", "counters: %v", counters)
	require.Contains(t, counters, "raftick.election.stepdown;reason=lost_election;from=candidate", "counters: %v", counters)
}

// TestMetricsGlobalSinkByDefault: with Config.Metrics nil a node reports to
// go-metrics' global sink, as hashicorp/raft does; a BlackholeSink turns
// metrics off altogether.
func TestMetricsGlobalSinkByDefault(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	conf := metrics.DefaultConfig("")
	conf.EnableRuntimeMetrics, conf.EnableHostname = false, false
	_, err := metrics.NewGlobal(conf, sink)
	require.NoError(t, err)
	defer func() {
		_, _ = metrics.NewGlobal(conf, &metrics.BlackholeSink{})
	}()

	v := newVirtual(t)
	defer v.Stop()
	n := newSolo(t, v.Wheel, soloConfig())
	require.True(t, n.MetricsOn())
	require.NoError(t, n.Start())
	v.AdvanceTo(time.Second)
	counters, _ := metricNames(sink)
	require.Contains(t, counters, "raftick.election.won")

	off := soloConfig()
	off.Metrics = &metrics.BlackholeSink{}
	require.False(t, newSolo(t, v.Wheel, off).MetricsOn())
}

// TestMetricsLabelNodesApart is issue 35: every node on one sink merged
// into one series. A node's metrics carry its ID as the label node, and
// Config.MetricsLabels after it, so three nodes of a group keep three
// series apart on one InmemSink.
func TestMetricsLabelNodesApart(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	c := newCluster(t, clusterOpts{n: 3, delay: time.Millisecond, seed: 12, config: func(c *election.Config) {
		c.ElectionTimeout = 150 * time.Millisecond
		c.PreVote, c.CheckQuorum = true, true
		c.Metrics = sink
		c.MetricsLabels = []metrics.Label{{Name: "group", Value: "g7"}}
	}})
	c.startAll(t)
	require.True(t, c.runUntil(5*time.Second, func() bool { _, ok := c.stableLeader(); return ok }))
	leader, _ := c.stableLeader()
	c.v.AdvanceBy(time.Second)

	counts := map[string]int{}
	var samples []string
	for _, iv := range sink.Data() {
		for k, v := range iv.Counters {
			counts[k] += v.Count
		}
		for k := range iv.Samples {
			samples = append(samples, k)
		}
	}
	for _, id := range c.ids {
		key := fmt.Sprintf("raftick.election.state.follower;node=%d;group=g7", id)
		require.Equal(t, 1, counts[key], "%s in %v", key, counts)
	}
	require.Equal(t, 1, counts[fmt.Sprintf("raftick.election.state.leader;node=%d;group=g7", leader)])
	require.Contains(t, samples, fmt.Sprintf("raftick.election.leader.last_contact;node=%d;group=g7", leader))
	for k := range counts {
		require.Regexp(t, `;node=[123];group=g7(;|$)`, k, "every series names its node, then the group")
	}

	// The label node is the node's own; names must be set and distinct.
	for _, ls := range [][]metrics.Label{{{Name: "node", Value: "x"}}, {{Value: "x"}}, {{Name: "g", Value: "1"}, {Name: "g", Value: "2"}}} {
		cfg := validConfig()
		cfg.MetricsLabels = ls
		require.ErrorIs(t, cfg.Validate(), election.ErrInvalidConfig, "%v", ls)
	}
}
