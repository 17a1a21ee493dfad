package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRealtimeEngine: failover and bootstrap run a few trials on the
// real-time engine and print the usual table; nothing about their timing
// is asserted.
func TestRealtimeEngine(t *testing.T) {
	for _, cmd := range []string{"failover", "bootstrap"} {
		code, out, errOut := raftsim(t, cmd, "--engine", "raftick-realtime", "--timeout", "50-100ms", "--latency", "fixed:500us", "--trials", "3")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "on raftick nodes in real time")
		require.Contains(t, out, "50-100ms ")
	}
}

// TestRealtimeRefuses: what the real-time engine cannot honour is a usage
// error naming the flag.
func TestRealtimeRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"failover", "--engine", "raftick-realtime", "--lateness", "fixed:1ms"}, "--lateness"},
		{[]string{"failover", "--engine", "raftick-realtime", "--model", "paper"}, "--lateness"},
		{[]string{"failover", "--engine", "raftick-realtime", "--lateness-spread", "0.5"}, "--lateness-spread"},
		{[]string{"bootstrap", "--engine", "raftick-realtime", "--lateness", "fixed:1ms"}, "--lateness"},
		{[]string{"--shard", "0/2", "failover", "--engine", "raftick-realtime"}, "--shard"},
		{[]string{"compare", "--table", "--timeout", "1s"}, "--timeout"},
		{[]string{"compare", "--alpha", "1"}, "--alpha"},
		{[]string{"compare", "--lateness", "fixed:1ms"}, "--lateness"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { requireUsageError(t, tc.args, tc.flag) })
	}
}

// TestCompare: compare prints the three runs, the differences per
// percentile, the test and the lateness it measured.
func TestCompare(t *testing.T) {
	code, out, errOut := raftsim(t, "compare", "--timeout", "50-100ms", "--latency", "fixed:500us", "--trials", "4")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"virtual ", "real time ", "virtual+lateness ", "p99", "Kolmogorov–Smirnov, virtual vs real time: D = ", "targets", "real-time lateness measured: timers"} {
		require.Contains(t, out, want)
	}
}
