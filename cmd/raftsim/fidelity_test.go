package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

func TestTicksCommand(t *testing.T) {
	args := []string{"ticks", "--trials", "20", "--stable-trials", "2", "--window", "10s", "--loss", "0.05"}
	code, out, errb := raftsim(t, args...)
	require.Equal(t, 0, code, errb)
	for _, row := range []string{"exact ", "tick 1ms ", "tick 10ms ", "tick 100ms ", "tick 500ms "} {
		require.Contains(t, out, "\n"+row)
	}
	code, again, _ := raftsim(t, args...)
	require.Equal(t, 0, code)
	require.Equal(t, out, again, "the same seed gives the same output")

	code, out, errb = raftsim(t, append(args, "--json")...)
	require.Equal(t, 0, code, errb)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[3]), &rec))
	require.Equal(t, 100.0, rec["tick_ms"])
	require.Equal(t, 100.0, rec["params"].(map[string]any)["tick_ms"])
	require.Equal(t, "tick 100ms", rec["label"])
	require.Contains(t, rec, "elections_per_node_hour")

	svg := filepath.Join(t.TempDir(), "ticks.svg")
	code, _, errb = raftsim(t, append(args, "--plot", svg)...)
	require.Equal(t, 0, code, errb)
	fi, err := os.Stat(svg)
	require.NoError(t, err)
	require.Positive(t, fi.Size())

	requireUsageError(t, []string{"ticks", "--ticks", "0,7ms"}, "--ticks")
	requireUsageError(t, []string{"ticks", "--ticks", "fast"}, "--ticks")
	requireUsageError(t, []string{"ticks", "--stable-trials", "0"}, "--stable-trials")
	requireUsageError(t, []string{"ticks", "--window", "0s"}, "--window")
}

func TestOcamlRaftModelCommand(t *testing.T) {
	code, out, errb := raftsim(t, "bootstrap", "--model", "ocaml-raft", "--timeout", "150-200ms", "--trials", "50", "--json")
	require.Equal(t, 0, code, errb)
	p := recordParams(t, out)
	require.Equal(t, 1.0, p["short_logs"], "the preset's ineligible server")
	require.Equal(t, true, p["grant_only_as_follower"])
	require.Equal(t, true, p["backoff_on_rejections"])
	require.Equal(t, true, p["heartbeat_offset"])
	require.Equal(t, "normal:5ms,3ms,redraw", p["latency"])
	require.Equal(t, "elected", p["until"])

	code, out, errb = raftsim(t, "sweep", "--experiment", "bootstrap", "--model", "ocaml-raft", "--over", "timeout=150-200ms,150-300ms", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		require.Equal(t, 1.0, recordParams(t, line)["short_logs"])
	}
	code, out, errb = raftsim(t, "bootstrap", "--model", "ocaml-raft", "--trials", "20")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, "1 short log, seed 1")

	requireUsageError(t, []string{"failover", "--model", "ocaml-raft"}, "--model")
}

func TestClockRateFlag(t *testing.T) {
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--clock-rate", "0.001", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, 0.001, recordParams(t, out)["clock_rate"])
	code, out, errb = raftsim(t, "bootstrap", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	require.NotContains(t, recordParams(t, out), "clock_rate")
	requireUsageError(t, []string{"failover", "--clock-rate", "0.9"}, "--clock-rate")
	requireUsageError(t, []string{"failover", "--engine", "etcd", "--clock-rate", "0.001"}, "--clock-rate")
}

func TestShortLogsInDescriptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "--over", "timeout=150-155ms", "--trials", "5"}, ", 2 short logs among the survivors, seed 1"},
		{[]string{"sweep", "--over", "shortlogs=0,2", "--trials", "5"}, ", short logs (swept), seed 1"},
		{[]string{"sweep", "--experiment", "bootstrap", "--over", "timeout=150-155ms", "--trials", "5"}, ", equal logs, seed 1"},
	} {
		code, out, errb := raftsim(t, tc.args...)
		require.Equal(t, 0, code, errb)
		require.Contains(t, strings.SplitN(out, "\n", 2)[0], tc.want, strings.Join(tc.args, " "))
	}
}

// optInFlag checks an opt-in model flag: with value it is in the records'
// params as param (want) and in the description (describes), off it is
// not listed, and bad (a value it refuses) and --engine etcd are usage
// errors.
func optInFlag(t *testing.T, flag, value, param string, want any, describes, bad string) {
	t.Helper()
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--"+flag, value, "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, want, recordParams(t, out)[param])
	code, out, errb = raftsim(t, "failover", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	require.NotContains(t, recordParams(t, out), param, "an opt-in mechanism that is off is not listed")
	code, out, errb = raftsim(t, "paper", "--trials", "20", "--"+flag, value)
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, describes)
	requireUsageError(t, []string{"failover", "--" + flag, bad}, "--"+flag)
	requireUsageError(t, []string{"failover", "--engine", "etcd", "--" + flag, value}, "--"+flag)
}

func TestSendGapFlag(t *testing.T) {
	optInFlag(t, "send-gap", "fixed:50us", "send_gap", "fixed:50µs", "a server's requests leave fixed:50µs apart", "sometimes")
}

func TestPaperScoresTheFigure(t *testing.T) {
	code, out, errb := raftsim(t, "paper", "--trials", "50")
	require.Equal(t, 0, code, errb)
	require.Regexp(t, `figure's data \(p10 p50 p90 p99 of each row\): \d+ of 40 within 10%`, out)
	require.NotContains(t, out, "~434ms", "the tables' column says what the paper's text quotes, not the figure's percentiles")
	code, out, errb = raftsim(t, "paper", "--trials", "20", "--json")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, `"relation":"figure"`)
}

func TestLeaderWritesFlag(t *testing.T) {
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--leader-writes", "0", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, false, recordParams(t, out)["leader_write"])
	code, out, errb = raftsim(t, "failover", "--trials", "20", "--leader-writes", "1")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, "new leader writes before its first heartbeat")
	code, out, errb = raftsim(t, "paper", "--trials", "20")
	require.Equal(t, 0, code, errb)
	require.Contains(t, out, "new leader writes 2 times before its first heartbeat", "the paper model's default")
	requireUsageError(t, []string{"failover", "--leader-writes", "-1"}, "--leader-writes")
	requireUsageError(t, []string{"failover", "--engine", "etcd", "--leader-writes", "2"}, "--leader-writes")
}

func TestCancelBackoffFlag(t *testing.T) {
	optInFlag(t, "cancel-backoff", "2s", "cancel_backoff_ms", 2000.0, "a role or term change cancels unanswered requests (2s backoff)", "-1s")
}

func TestLatenessSpreadFlag(t *testing.T) {
	optInFlag(t, "lateness-spread", "0.5", "lateness_spread", 0.5, "lateness scaled by U[0.5, 1.5] per trial", "2")
	code, out, errb := raftsim(t, "failover", "--trials", "20", "--lateness-spread", "0.5", "--lateness-per-server", "--json")
	require.Equal(t, 0, code, errb)
	require.Equal(t, true, recordParams(t, out)["lateness_per_server"])
	requireUsageError(t, []string{"failover", "--lateness-per-server"}, "--lateness-per-server")
}
