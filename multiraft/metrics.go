package multiraft

import (
	"strconv"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/internal/msink"
)

// A Host's metrics go to its election template's sink (Config.Election.
// Metrics; *metrics.BlackholeSink turns them all off). A group's node
// labels its metrics node=<ID>, its host's ID (election.Node does), and
// the host's own metrics carry the same label, so that the hosts sharing
// one sink stay apart; with Config.GroupLabels a node's metrics also
// carry group=<ID> (election.Config.MetricsLabels). Every
// LivenessInterval the host reports:
//
//	raftick.host.groups               gauge    groups on the host
//	raftick.host.hibernating          gauge    of them hibernating
//	raftick.host.behind               gauge    1 while the host runs late (Stats.Behind)
//	raftick.host.lateness             gauge    how late its last periodic check ran (ms)
//	raftick.host.failover_queued      gauge    groups queued to fail over (Stats.FailoverQueued)
//	raftick.host.failover_in_flight   gauge    woken to fail over, no leader yet
//	raftick.host.batches_in           counter  batches received since the last report
//	raftick.host.batches_out          counter  batches sent since the last report
//	raftick.host.wakes                counter  groups woken since the last report
//	raftick.host.lagging_skips        counter  silences held as a backlog's (Stats.LaggingSkips)
//
// With Coalesce, every heartbeat tick also samples
//
//	raftick.host.tick_lateness        sample   how late the tick began (ms): every
//	                                           leader's CheckQuorum judged in it
//	                                           was due at its deadline
//	raftick.host.quorum_heard         counter  leaders whose CheckQuorum the tick
//	                                           passed at its start, from the peers'
//	                                           answers to the last tick (they sample
//	                                           no leader.last_contact)
//
// Cardinality: the host's metrics make one series each per host. The
// nodes' make one per host per metric (and per label value, such as a
// step-down's reason) without GroupLabels, and one per group with it: at
// a hundred thousand groups that is a hundred thousand series per metric,
// which few metric stores take; leave GroupLabels off at scale and use
// Status or an Observer for a single group.

var (
	keyHostGroups       = []string{"raftick", "host", "groups"}
	keyHostHibernating  = []string{"raftick", "host", "hibernating"}
	keyHostBehind       = []string{"raftick", "host", "behind"}
	keyHostLateness     = []string{"raftick", "host", "lateness"}
	keyHostFoQueued     = []string{"raftick", "host", "failover_queued"}
	keyHostFoInFlight   = []string{"raftick", "host", "failover_in_flight"}
	keyHostBatchesIn    = []string{"raftick", "host", "batches_in"}
	keyHostBatchesOut   = []string{"raftick", "host", "batches_out"}
	keyHostWakes        = []string{"raftick", "host", "wakes"}
	keyHostLaggingSkips = []string{"raftick", "host", "lagging_skips"}
	keyHostTickLateness = []string{"raftick", "host", "tick_lateness"}
	keyHostQuorumHeard  = []string{"raftick", "host", "quorum_heard"}
)

// hostMetrics is what a host reports; nil when metrics are off. Its
// fields are touched only by the liveness ping timer's callback (last)
// or read only.
type hostMetrics struct {
	sink   msink.Sink
	labels []metrics.Label // node=<the host's ID>
	last   Stats           // at the last report, for the counters' deltas
}

// newHostMetrics returns the metrics of host id whose template's sink is
// s, or nil if s turns metrics off.
func newHostMetrics(s metrics.MetricSink, id uint64) *hostMetrics {
	sink := msink.Resolve(s)
	if sink == nil {
		return nil
	}
	return &hostMetrics{sink: sink, labels: []metrics.Label{{Name: "node", Value: strconv.FormatUint(id, 10)}}}
}

// groupLabels returns the template's labels followed by group g's.
func groupLabels(template []metrics.Label, g GroupID) []metrics.Label {
	return append(template[:len(template):len(template)], metrics.Label{Name: "group", Value: strconv.FormatUint(uint64(g), 10)})
}

// report reports s, the host's Stats now.
func (m *hostMetrics) report(s Stats) {
	k, l := m.sink, m.labels
	k.SetGaugeWithLabels(keyHostGroups, float32(s.Groups), l)
	k.SetGaugeWithLabels(keyHostHibernating, float32(s.Hibernating), l)
	behind := float32(0)
	if s.Behind {
		behind = 1
	}
	k.SetGaugeWithLabels(keyHostBehind, behind, l)
	k.SetGaugeWithLabels(keyHostLateness, float32(s.Lateness.Seconds()*1000), l)
	k.SetGaugeWithLabels(keyHostFoQueued, float32(s.FailoverQueued), l)
	k.SetGaugeWithLabels(keyHostFoInFlight, float32(s.FailoverInFlight), l)
	k.IncrCounterWithLabels(keyHostBatchesIn, float32(s.BatchesReceived-m.last.BatchesReceived), l)
	k.IncrCounterWithLabels(keyHostBatchesOut, float32(s.Batches-m.last.Batches), l)
	k.IncrCounterWithLabels(keyHostWakes, float32(s.Wakes-m.last.Wakes), l)
	k.IncrCounterWithLabels(keyHostLaggingSkips, float32(s.LaggingSkips-m.last.LaggingSkips), l)
	m.last = s
}

// quorumHeard counts the leaders whose CheckQuorum the tick's per-peer
// tally vouched for (see beats.go): their checks, done at the tick's
// start, sample no raftick.election.leader.last_contact.
func (m *hostMetrics) quorumHeard(n int) {
	m.sink.IncrCounterWithLabels(keyHostQuorumHeard, float32(n), m.labels)
}

// tickLateness samples how late a heartbeat tick began.
func (m *hostMetrics) tickLateness(late time.Duration) {
	m.sink.AddSampleWithLabels(keyHostTickLateness, float32(late.Seconds()*1000), m.labels)
}
