package msink

import (
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
)

func TestResolve(t *testing.T) {
	if Resolve(&metrics.BlackholeSink{}) != nil {
		t.Fatal("a BlackholeSink must turn metrics off (nil)")
	}
	if _, ok := Resolve(nil).(global); !ok {
		t.Fatal("nil must mean the global sink")
	}
	s := metrics.NewInmemSink(time.Hour, time.Hour)
	if Resolve(s) != Sink(s) {
		t.Fatal("a configured sink must be used as is")
	}

	// The global sink is read at each call, so metrics.NewGlobal after
	// the component was created still takes effect.
	g := Resolve(nil)
	conf := metrics.DefaultConfig("")
	conf.EnableRuntimeMetrics, conf.EnableHostname = false, false
	if _, err := metrics.NewGlobal(conf, s); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = metrics.NewGlobal(conf, &metrics.BlackholeSink{}) }()
	g.IncrCounterWithLabels([]string{"raftick", "x"}, 1, nil)
	g.SetGaugeWithLabels([]string{"raftick", "g"}, 2, nil)
	g.AddSampleWithLabels([]string{"raftick", "s"}, 3, nil)
	iv := s.Data()[0]
	if _, ok := iv.Counters["raftick.x"]; !ok {
		t.Fatalf("counter not in the global sink: %v", iv.Counters)
	}
	if _, ok := iv.Gauges["raftick.g"]; !ok {
		t.Fatalf("gauge not in the global sink: %v", iv.Gauges)
	}
	if _, ok := iv.Samples["raftick.s"]; !ok {
		t.Fatalf("sample not in the global sink: %v", iv.Samples)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []struct{ name, sub string }{
		{"raftick.wheel.late_fires", "wheel"}, {"raftick.host.batches_in;node=1", "host"},
		{"raftick.election.vote.refused;reason=stale", "election"},
	} {
		if err := CheckName(ok.name, ok.sub); err != nil {
			t.Error(err)
		}
	}
	for _, bad := range []struct{ name, sub string }{
		{"raftick.host.batchesIn", "host"}, {"raftick.state.leader", "election"}, {"raftick.wheel", "wheel"},
		{"raftick.wheel.fired", "host"}, {"raft.wheel.fired", "wheel"}, {"raftick.wheel.Late", "wheel"},
	} {
		if CheckName(bad.name, bad.sub) == nil {
			t.Errorf("%s (%s) passed", bad.name, bad.sub)
		}
	}
}
