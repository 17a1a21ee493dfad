package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// params returns the params member of the single JSON record in out.
func recordParams(t *testing.T, out string) map[string]any {
	t.Helper()
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &rec))
	return rec["params"].(map[string]any)
}

func TestShortLogsFlag(t *testing.T) {
	code, out, errb := raftsim(t, "bootstrap", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, 0.0, recordParams(t, out)["short_logs"], "a bootstrap has equal logs by default")
	code, out, errb = raftsim(t, "bootstrap", "--trials", "20", "--short-logs", "2", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, 2.0, recordParams(t, out)["short_logs"])
	code, out, errb = raftsim(t, "bootstrap", "--trials", "20", "--short-logs", "2")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, ", 2 short logs, seed 1")

	code, out, errb = raftsim(t, "failover", "--trials", "20", "--short-logs", "0", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, 0.0, recordParams(t, out)["short_logs"])
	code, out, errb = raftsim(t, "failover", "--trials", "20")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, ", 2 short logs among the survivors, seed 1")
	code, out, errb = raftsim(t, "failover", "--trials", "20", "--short-logs", "0")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, ", equal logs, seed 1")

	requireUsageError(t, []string{"failover", "--short-logs", "-1"}, "--short-logs")
	requireUsageError(t, []string{"failover", "--short-logs", "4"}, "--short-logs")
	requireUsageError(t, []string{"bootstrap", "--engine", "etcd", "--short-logs", "1"}, "--short-logs")
}

func TestTimersAtCrashFlag(t *testing.T) {
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--timers-at-crash", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, true, recordParams(t, out)["timers_at_crash"])
	code, out, errb = raftsim(t, "failover", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	require.NotContains(t, recordParams(t, out), "timers_at_crash", "an opt-in mechanism that is off is not listed")
	code, out, errb = raftsim(t, "failover", "--trials", "20", "--timers-at-crash")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, "survivors' timers start at the crash")
	requireUsageError(t, []string{"failover", "--engine", "etcd", "--timers-at-crash"}, "--timers-at-crash")
	requireUsageError(t, []string{"failover", "--engine", "hashicorp", "--timers-at-crash"}, "--timers-at-crash")
}

func TestNormalRedrawSpec(t *testing.T) {
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--latency", "normal:5ms,3ms,redraw", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, "normal:5ms,3ms,redraw", recordParams(t, out)["latency"])
	requireUsageError(t, []string{"failover", "--latency", "normal:5ms,3ms,maybe"}, "--latency")
}
