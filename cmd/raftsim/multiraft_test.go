package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMultiraftBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"multiraft", "--groups", "0"}, "--groups"},
		{[]string{"multiraft", "--nodes", "1"}, "--nodes"},
		{[]string{"multiraft", "--replicas", "9"}, "--replicas"},
		{[]string{"multiraft", "--active", "1.5"}, "--active"},
		{[]string{"multiraft", "--hibernate-after", "-1s"}, "--hibernate-after"},
		{[]string{"multiraft", "--coalesce", "maybe"}, "--coalesce"},
		{[]string{"multiraft", "--timeout", "2s-1s"}, "--timeout"},
		{[]string{"multiraft", "--heartbeat", "5s"}, "--heartbeat"},
		{[]string{"multiraft", "--latency", "warp:9"}, "--latency"},
		{[]string{"multiraft", "--settle", "0s"}, "--settle"},
		{[]string{"multiraft", "--engine", "etcd"}, "--engine"},
	} {
		code, out, errs := raftsim(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errs)
		require.Empty(t, out)
		require.Contains(t, errs, tc.flag, "%v", tc.args)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
}

func TestMultiraftRun(t *testing.T) {
	args := []string{"multiraft", "--groups", "500", "--active", "0.1", "--timeout", "150ms-300ms",
		"--hibernate-after", "200ms", "--warmup", "500ms", "--window", "500ms", "--settle", "2s"}
	code, out, errs := raftsim(t, args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "node 1 crashed, leading 100 groups; 100 of them have a leader again")
	require.Contains(t, out, "groups it did not lead that elected a leader: 0")
	code, jout, errs := raftsim(t, append(args, "--json")...)
	require.Equal(t, 0, code, errs)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(jout), &r))
	require.Equal(t, 1, strings.Count(jout, "\n"), "JSON Lines: one object")
	require.EqualValues(t, 100, r["recovered"])
	require.EqualValues(t, 0, r["unaffected_new_leaders"])
	before := r["before"].(map[string]any)
	require.Less(t, before["batches"], before["messages"], "coalescing on")
}

// TestMultiraftRealtime: --engine realtime runs the experiment in real
// time and says so; timing is not asserted.
func TestMultiraftRealtime(t *testing.T) {
	// Timeouts of 100-200ms and a settle of 1.5s leave room for a loaded
	// machine's hosts to fall behind (and hold elections) and recover.
	code, out, errs := raftsim(t, "multiraft", "--engine", "realtime", "--groups", "50", "--timeout", "100ms-200ms",
		"--hibernate-after", "150ms", "--warmup", "300ms", "--window", "100ms", "--settle", "1500ms")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "real time\n")
	require.Contains(t, out, "node 1 crashed, leading 10 groups; 10 of them have a leader again")
}
