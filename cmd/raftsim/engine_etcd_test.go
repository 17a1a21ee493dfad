package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEtcdEngineBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"failover", "--engine", "etcd", "--timeout", "1s-1500ms"}, "--timeout"},
		{[]string{"failover", "--engine", "etcd", "--timeout", "1050ms", "--heartbeat", "100ms"}, "--timeout"},
		{[]string{"failover", "--engine", "etcd", "--timeout", "1s", "--heartbeat", "150ms"}, "--timeout"},
		{[]string{"failover", "--engine", "etcd", "--tick", "0s"}, "--tick"},
		{[]string{"failover", "--engine", "etcd", "--timeout", "1s", "--tick", "30ms"}, "--timeout"},
		{[]string{"failover", "--engine", "etcd", "--election-tick", "1"}, "--election-tick"},
		{[]string{"failover", "--engine", "etcd", "--election-tick", "10", "--timeout", "1s"}, "--election-tick"},
		{[]string{"failover", "--engine", "etcd", "--heartbeat-tick", "10"}, "--heartbeat"},
		{[]string{"failover", "--engine", "etcd", "--heartbeat-tick", "0"}, "--heartbeat-tick"},
		{[]string{"failover", "--engine", "etcd", "--heartbeat-tick", "2", "--heartbeat", "30ms"}, "--heartbeat-tick"},
		{[]string{"failover", "--engine", "etcd", "--nodes", "1"}, "--nodes"},
		// Refused by etcdadapter's own check (ElectionTick <= 2^30), not
		// in a trial.
		{[]string{"failover", "--engine", "etcd", "--tick", "1µs", "--timeout", "2000s-4000s"}, "--timeout"},
		{[]string{"failover", "--engine", "etcd", "--tick", "1ns", "--timeout", "10s-20s"}, "--tick"}, // the heartbeat's floor
		{[]string{"failover", "--engine", "etcd", "--tick", "1µs", "--election-tick", "2000000000", "--max-time", "100000h"}, "--election-tick"},
		{[]string{"failover", "--engine", "etcd", "--model", "paper"}, "--model"},
		{[]string{"failover", "--engine", "etcd", "--lateness", "fixed:1ms"}, "--lateness"},
		{[]string{"failover", "--tick", "100ms"}, "--tick"},
		{[]string{"failover", "--model", "etcd", "--timeout", "150-200ms"}, "--timeout"},
		{[]string{"bootstrap", "--engine", "hashicorp"}, "--engine"},
		{[]string{"bootstrap", "--engine", "zookeeper"}, "--engine"},
		{[]string{"sweep", "--engine", "hashicorp", "--over", "prevote=false,true"}, "--engine"},
		{[]string{"tune", "--model", "etcd"}, "--model"},
	} {
		code, out, errs := raftsim(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Empty(t, out, "%v", tc.args)
		require.Contains(t, errs, tc.flag, "%v", tc.args)
		require.NotContains(t, errs, "Timeout", "%v: no Go field names", tc.args)
		require.NotContains(t, errs, "Node.", "%v: no Go field names", tc.args)
		require.NotContains(t, errs, "failed:", "%v: refused before any trial runs, not as a failed trial", tc.args)
	}
}

// TestEtcdEngineDeterministic: two runs with one seed print the same,
// whatever the number of workers; another seed differs.
func TestEtcdEngineDeterministic(t *testing.T) {
	args := []string{"failover", "--engine", "etcd", "--nodes", "5", "--timeout", "1s", "--latency", "normal:20ms,5ms", "--trials", "60", "--seed", "3"}
	code, a, _ := raftsim(t, args...)
	require.Equal(t, 0, code)
	code, b, _ := raftsim(t, append(args, "--workers", "1")...)
	require.Equal(t, 0, code)
	require.Equal(t, a, b)
	require.Contains(t, a, "failover on etcd raft nodes (virtual time): 5 servers, latency normal:20ms,5ms")
	require.Contains(t, a, "ticks of 100ms (heartbeat 1, election 10 ticks)")
	code, c, _ := raftsim(t, append(args[:len(args)-1], "4")...)
	require.Equal(t, 0, code)
	require.NotEqual(t, a, c)
}

// TestEtcdEngineFlags: the tick flags set what both engines run, and the
// JSON describes the etcd engine.
func TestEtcdEngineFlags(t *testing.T) {
	code, out, _ := raftsim(t, "bootstrap", "--engine", "etcd", "--nodes", "3", "--tick", "50ms", "--election-tick", "20", "--heartbeat-tick", "2", "--trials", "30", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"experiment":"bootstrap"`)
	require.Contains(t, out, `"timeout_min_ms":1000`)
	require.Contains(t, out, `"heartbeat_ms":100`)
	require.Contains(t, out, `"engine":"etcd"`)

	// etcd's vote lease is CheckQuorum: turning it off is one setting.
	code, out, _ = raftsim(t, "failover", "--engine", "etcd", "--checkquorum=false", "--trials", "30", "--json")
	require.Equal(t, 0, code)
	require.NotContains(t, out, `"checkquorum":true`)

	code, out, _ = raftsim(t, "failover", "--model", "etcd", "--tick", "50ms", "--election-tick", "20", "--trials", "30")
	require.Equal(t, 0, code)
	require.Contains(t, out, "ticks of 50ms (heartbeat 1, election 20 ticks)")
	require.Contains(t, out, "1000-2000ms")
}

func TestEtcdEngineSweep(t *testing.T) {
	code, out, _ := raftsim(t, "sweep", "--engine", "etcd", "--timeout", "1s", "--over", "prevote=false,true", "--trials", "40", "--json")
	require.Equal(t, 0, code)
	require.Equal(t, 2, strings.Count(out, `"engine":"etcd"`), out)
	require.Contains(t, out, `"label":"prevote=true"`)
	code, _, errs := raftsim(t, "sweep", "--engine", "etcd", "--over", "timeout=1s-2s", "--trials", "5")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "ticks of 15ms", "the base tick follows the base timeout: a clear refusal")
}
