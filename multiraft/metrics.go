package multiraft

import (
	"strconv"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/internal/msink"
)

// A Host's metrics go to its election template's sink (Config.Election.
// Metrics; *metrics.BlackholeSink turns them all off). Every metric of
// the host and of its groups' nodes carries the label host=<ID>, so that
// the hosts sharing one sink stay apart; with Config.GroupLabels a node's
// metrics also carry group=<ID>. Every LivenessInterval the host reports:
//
//	raftick.host.groups        gauge    groups on the host
//	raftick.host.hibernating   gauge    of them hibernating
//	raftick.host.behind        gauge    1 while the host runs late (Stats.Behind)
//	raftick.host.lateness      gauge    how late its last periodic check ran (ms)
//	raftick.host.batchesIn     counter  batches received since the last report
//	raftick.host.batchesOut    counter  batches sent since the last report
//	raftick.host.wakes         counter  groups woken since the last report
//	raftick.host.laggingSkips  counter  timers held back while behind (Stats.LaggingSkips)
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
	keyHostBatchesIn    = []string{"raftick", "host", "batchesIn"}
	keyHostBatchesOut   = []string{"raftick", "host", "batchesOut"}
	keyHostWakes        = []string{"raftick", "host", "wakes"}
	keyHostLaggingSkips = []string{"raftick", "host", "laggingSkips"}
)

// labeledSink is a metrics.MetricSink that adds labels to every metric
// before handing it to inner.
type labeledSink struct {
	inner  msink.Sink
	labels []metrics.Label
}

// with returns l followed by the sink's labels.
func (s *labeledSink) with(l []metrics.Label) []metrics.Label {
	if len(l) == 0 {
		return s.labels
	}
	return append(l[:len(l):len(l)], s.labels...)
}

func (s *labeledSink) SetGauge(key []string, val float32) {
	s.inner.SetGaugeWithLabels(key, val, s.labels)
}

func (s *labeledSink) SetGaugeWithLabels(key []string, val float32, labels []metrics.Label) {
	s.inner.SetGaugeWithLabels(key, val, s.with(labels))
}

func (s *labeledSink) EmitKey(key []string, val float32) {
	s.inner.SetGaugeWithLabels(key, val, s.labels)
}

func (s *labeledSink) IncrCounter(key []string, val float32) {
	s.inner.IncrCounterWithLabels(key, val, s.labels)
}

func (s *labeledSink) IncrCounterWithLabels(key []string, val float32, labels []metrics.Label) {
	s.inner.IncrCounterWithLabels(key, val, s.with(labels))
}

func (s *labeledSink) AddSample(key []string, val float32) {
	s.inner.AddSampleWithLabels(key, val, s.labels)
}

func (s *labeledSink) AddSampleWithLabels(key []string, val float32, labels []metrics.Label) {
	s.inner.AddSampleWithLabels(key, val, s.with(labels))
}

// hostMetrics is what a host reports; nil when metrics are off.
type hostMetrics struct {
	sink *labeledSink // the host's metrics, and its nodes' without GroupLabels
	last Stats        // at the last report, for the counters' deltas
}

// newHostMetrics returns the metrics of host id whose template's sink is
// s, or nil if s turns metrics off.
func newHostMetrics(s metrics.MetricSink, id uint64) *hostMetrics {
	inner := msink.Resolve(s)
	if inner == nil {
		return nil
	}
	host := metrics.Label{Name: "host", Value: strconv.FormatUint(id, 10)}
	return &hostMetrics{sink: &labeledSink{inner: inner, labels: []metrics.Label{host}}}
}

// nodeSink returns the sink of group g's node: the host's, or with
// groupLabel a sink that also labels the group.
func (m *hostMetrics) nodeSink(g GroupID, groupLabel bool) metrics.MetricSink {
	if !groupLabel {
		return m.sink
	}
	labels := append(m.sink.labels[:len(m.sink.labels):len(m.sink.labels)],
		metrics.Label{Name: "group", Value: strconv.FormatUint(uint64(g), 10)})
	return &labeledSink{inner: m.sink.inner, labels: labels}
}

// report reports s, the host's Stats now.
func (m *hostMetrics) report(s Stats) {
	k := m.sink
	k.SetGauge(keyHostGroups, float32(s.Groups))
	k.SetGauge(keyHostHibernating, float32(s.Hibernating))
	behind := float32(0)
	if s.Behind {
		behind = 1
	}
	k.SetGauge(keyHostBehind, behind)
	k.SetGauge(keyHostLateness, float32(s.Lateness.Seconds()*1000))
	k.IncrCounter(keyHostBatchesIn, float32(s.BatchesReceived-m.last.BatchesReceived))
	k.IncrCounter(keyHostBatchesOut, float32(s.Batches-m.last.Batches))
	k.IncrCounter(keyHostWakes, float32(s.Wakes-m.last.Wakes))
	k.IncrCounter(keyHostLaggingSkips, float32(s.LaggingSkips-m.last.LaggingSkips))
	m.last = s
}
