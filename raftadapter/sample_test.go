package raftadapter

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	sampleTrials    = flag.Int("failover.trials", 0, "TestFailoverSample: number of trials (0 skips the test)")
	sampleTimeout   = flag.Duration("failover.timeout", 100*time.Millisecond, "TestFailoverSample: HeartbeatTimeout = ElectionTimeout")
	sampleTransport = flag.String("failover.transport", "inmem", "TestFailoverSample: inmem or tcp")
	samplePreVote   = flag.Bool("failover.prevote", true, "TestFailoverSample: pre-vote on")
)

// TestFailoverSample measures a failover sample on real hashicorp/raft
// nodes and prints its percentiles. It is a measurement, run on demand:
//
//	go test ./raftadapter -run TestFailoverSample -failover.trials=20 -v
func TestFailoverSample(t *testing.T) {
	if *sampleTrials == 0 {
		t.Skip("measurement; enable with -failover.trials=N")
	}
	if testing.Short() {
		t.Skip("long real-time run")
	}
	kind, err := ParseTransportKind(*sampleTransport)
	require.NoError(t, err)
	cfg := DefaultFailoverConfig()
	cfg.Cluster = testClusterConfig(t, kind, *sampleTimeout)
	cfg.Cluster.Timing.PreVote = *samplePreVote
	cfg.Trials = *sampleTrials
	start := time.Now()
	trials, err := FailoverTrials(context.Background(), cfg)
	require.NoError(t, err)
	var fo, det, el []time.Duration
	extraTerms := 0
	for _, tr := range trials {
		checkTrial(t, tr)
		fo = append(fo, tr.Failover)
		det = append(det, tr.Detected)
		el = append(el, tr.Elected)
		if tr.NewTerm-tr.OldTerm > 1 {
			extraTerms++
		}
	}
	pct := func(xs []time.Duration, p float64) time.Duration {
		s := slices.Clone(xs)
		slices.Sort(s)
		i := int(p*float64(len(s))+0.5) - 1 // nearest rank
		return s[max(0, min(i, len(s)-1))]
	}
	for _, row := range []struct {
		name string
		xs   []time.Duration
	}{{"detected", det}, {"elected", el}, {"failover", fo}} {
		t.Logf("%-8s min %-12v p50 %-12v p90 %-12v max %v", row.name,
			pct(row.xs, 0), pct(row.xs, 0.5), pct(row.xs, 0.9), pct(row.xs, 1))
	}
	t.Logf("%d trials on %s, HT=ET=%v, prevote=%v: %d needed more than one term; wall time %v",
		len(trials), kind, *sampleTimeout, *samplePreVote, extraTerms, time.Since(start).Round(time.Millisecond))
}
