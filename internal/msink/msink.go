package msink

import "github.com/hashicorp/go-metrics"

// Sink is the part of a go-metrics sink raftick uses.
type Sink interface {
	IncrCounterWithLabels(key []string, val float32, labels []metrics.Label)
	SetGaugeWithLabels(key []string, val float32, labels []metrics.Label)
	AddSampleWithLabels(key []string, val float32, labels []metrics.Label)
}

// Resolve returns the sink to report to for a configured s: nil (report
// nothing, compute nothing) for a *metrics.BlackholeSink, the global sink
// for nil, s otherwise.
func Resolve(s metrics.MetricSink) Sink {
	switch s := s.(type) {
	case nil:
		return global{}
	case *metrics.BlackholeSink:
		return nil
	default:
		return s
	}
}

// global reports through go-metrics' global instance as it is at the time
// of each call (metrics.NewGlobal may replace it), like hashicorp/raft.
type global struct{}

func (global) IncrCounterWithLabels(key []string, val float32, labels []metrics.Label) {
	metrics.IncrCounterWithLabels(key, val, labels)
}

func (global) SetGaugeWithLabels(key []string, val float32, labels []metrics.Label) {
	metrics.SetGaugeWithLabels(key, val, labels)
}

func (global) AddSampleWithLabels(key []string, val float32, labels []metrics.Label) {
	metrics.AddSampleWithLabels(key, val, labels)
}
