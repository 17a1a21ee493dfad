package msink

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/go-metrics"
)

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

// The metric names of raftick follow one convention: the prefix
// "raftick", then one subsystem (wheel, election, host), then one or more
// lower-case snake_case words, joined by dots:
// raftick.wheel.late_fires, raftick.host.batches_in,
// raftick.election.vote.refused. Labels (node, group, reason, from) carry
// the rest.
var nameRule = regexp.MustCompile(`^raftick\.(wheel|election|host)(\.[a-z][a-z0-9_]*)+$`)

// CheckName returns an error unless name (a flattened key, with any
// ";label=value" suffix of go-metrics' InmemSink) follows the convention
// and belongs to subsystem.
func CheckName(name, subsystem string) error {
	key, _, _ := strings.Cut(name, ";")
	if !nameRule.MatchString(key) || !strings.HasPrefix(key, "raftick."+subsystem+".") {
		return fmt.Errorf("metric %q: want raftick.%s.lower_snake_case words", key, subsystem)
	}
	return nil
}
