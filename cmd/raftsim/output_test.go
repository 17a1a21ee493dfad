package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJSONLinesSchema: every --json output is JSON Lines, and every
// object describes itself: what wrote it, the seed, every model
// parameter, the trial counts and which statistics are lower bounds.
func TestJSONLinesSchema(t *testing.T) {
	common := []string{"record", "tool", "version", "command", "seed", "params"}
	result := append(append([]string(nil), common...), "experiment", "trials", "censored", "no_leader", "measured",
		"lower_bounds", "percentiles_exact", "min_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms")
	for _, tc := range []struct {
		args  []string
		lines int
	}{
		{[]string{"paper", "--trials", "20", "--max-time", "20s"}, 11},
		{[]string{"failover", "--trials", "20"}, 1},
		{[]string{"failover", "--trials", "20", "--model", "hashicorp", "--timeout", "100ms"}, 1},
		{[]string{"bootstrap", "--trials", "20"}, 1},
		{[]string{"splitvote", "--trials", "200"}, 3},
		{[]string{"sweep", "--over", "nodes=3,5,7", "--trials", "20"}, 3},
		{[]string{"tune", "--min", "100ms", "--spread", "1", "--trials", "20", "--stable-trials", "1", "--stable-for", "1m"}, 2},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			code, out, errOut := raftsim(t, append(tc.args, "--json")...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.Len(t, lines, tc.lines)
			for _, l := range lines {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(l), &m), "one object per line: %s", l)
				want := result
				switch m["record"] {
				case "tune-candidate":
					want = append(append([]string(nil), common...), "objective_ms", "objective_ci95_low_ms", "objective_ci95_high_ms",
						"unnecessary_ci95_low", "unnecessary_ci95_high", "failover_censored", "lower_bounds", "p95_ms", "p999_ms", "status")
				case "tune-verdict":
					want = append(append([]string(nil), common...), "best", "runner_up", "runner_up_margin_ms", "decided")
				}
				for _, k := range want {
					require.Contains(t, m, k, "%s: %s", m["record"], l)
				}
				require.Equal(t, "raftsim", m["tool"])
				require.Equal(t, tc.args[0], m["command"])
				if tc.args[0] != "splitvote" {
					require.Contains(t, m, "model")
					ps := m["params"].(map[string]any)
					for _, k := range []string{"nodes", "latency", "disk", "timer_lateness", "granularity_ms", "candidates_wait", "max_time_ms"} {
						require.Contains(t, ps, k)
					}
				}
				noGoNames(t, l)
			}
		})
	}
}

// TestJSONLinesSchemaOwnRecords: the subcommands that write records of
// their own (partition, multiraft) are self-describing too.
func TestJSONLinesSchemaOwnRecords(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"partition", "--model", "plain", "--shape", "chain", "--prevote", "--checkquorum", "--for", "1m", "--trials", "1"},
			[]string{"model", "shape", "elections_per_hour", "leader_changes_per_hour", "leaderless_s_per_hour", "params"}},
		{[]string{"multiraft", "--groups", "300", "--nodes", "3"},
			[]string{"params", "trials", "p50_ms", "p99_ms", "max_ms", "before", "after"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			code, out, errOut := raftsim(t, append(tc.args, "--json")...)
			require.Equal(t, 0, code, errOut)
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(l), &m), "one object per line: %s", l)
				for _, k := range append([]string{"record", "tool", "version", "command", "seed"}, tc.want...) {
					require.Contains(t, m, k, l)
				}
				require.Equal(t, "raftsim", m["tool"])
				require.Equal(t, tc.args[0], m["command"])
				if ps, ok := m["params"].(map[string]any); ok && tc.args[0] != "multiraft" {
					require.Contains(t, ps, "timer_lateness")
				}
				noGoNames(t, l)
			}
			code, again, _ := raftsim(t, append(tc.args, "--json")...)
			require.Equal(t, 0, code)
			require.Equal(t, out, again, "the same seed gives the same records")
		})
	}
}

// TestCensoredAreLowerBounds: statistics at a time limit that cut trials
// are marked as lower bounds, in JSON, CSV and the table.
func TestCensoredAreLowerBounds(t *testing.T) {
	args := []string{"failover", "--timeout", "150-151ms", "--max-time", "1s", "--trials", "40"}
	code, out, errOut := raftsim(t, append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Positive(t, m["censored"])
	require.Contains(t, m["lower_bounds"], "max_ms")
	require.Contains(t, m["lower_bounds"], "mean_ms")
	_, csvOut, _ := raftsim(t, append(args, "--csv")...)
	require.Contains(t, csvOut, "max_ms")
	_, table, _ := raftsim(t, args...)
	require.Contains(t, table, " cut)")
	require.Contains(t, table, ">=1000ms")
}

// TestRefusedBeforeRunning (issue 13, point 2): setups that cannot
// measure what was asked are refused, exit 2, saying why.
func TestRefusedBeforeRunning(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
		why  string
	}{
		{[]string{"failover", "--nodes", "1"}, "--nodes", "not a majority"},
		{[]string{"failover", "--nodes", "2"}, "--nodes", "not a majority"},
		{[]string{"paper", "--nodes", "2"}, "--nodes", "not a majority"},
		{[]string{"failover", "--latency", "fixed:200ms"}, "--latency", "before its votes arrive"},
		{[]string{"failover", "--timeout", "1h-2h"}, "--timeout", "time limit"},
		{[]string{"bootstrap", "--timeout", "90s"}, "--timeout", "time limit"},
		{[]string{"failover", "--loss", "0.999"}, "--loss", "beyond the trial's time limit"},
		{[]string{"failover", "--loss", "0.9"}, "--loss", "beyond the trial's time limit"},
		{[]string{"sweep", "--over", "nodes=2,3"}, "--over", "nodes=2"},
		{[]string{"sweep", "--over", "loss=0.1,0.99"}, "--over", "loss"},
		{[]string{"tune", "--min", "10ms", "--latency", "fixed:20ms"}, "--latency", "before its votes arrive"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := raftsim(t, tc.args...)
			require.Equal(t, 2, code, errOut)
			require.Empty(t, out)
			require.Contains(t, errOut, tc.flag)
			require.Contains(t, errOut, tc.why)
			require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			noGoNames(t, errOut)
		})
	}
	// Half the messages lost still elects within the limit: measured.
	code, _, errOut := raftsim(t, "failover", "--loss", "0.5", "--trials", "10")
	require.Equal(t, 0, code, errOut)
}

// TestSweepOverNodes (issue 13, point 1): the sweep of sweep --help's
// own example runs, adapting the short logs to each size.
func TestSweepOverNodes(t *testing.T) {
	code, out, errOut := raftsim(t, "sweep", "--over", "nodes=3,5,7", "--trials", "30")
	require.Equal(t, 0, code, errOut)
	for _, n := range []string{"nodes=3", "nodes=5", "nodes=7"} {
		require.Contains(t, out, n)
	}
	require.Contains(t, out, "servers (swept)", "the header does not print the base value of a swept parameter")
	require.NotContains(t, out, "5 servers")
	code, out, errOut = raftsim(t, "sweep", "--over", "nodes=3,5,7", "--trials", "20", "--json")
	require.Equal(t, 0, code, errOut)
	var shortLogs []float64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		shortLogs = append(shortLogs, m["params"].(map[string]any)["short_logs"].(float64))
	}
	require.Equal(t, []float64{0, 2, 2}, shortLogs)
}

// TestPlotFile (issue 13, points 4 and 5): the figure is written in the
// format of its extension, and stderr says where.
func TestPlotFile(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"pdf", "svg", "png"} {
		path := filepath.Join(dir, "fig."+ext)
		code, _, errOut := raftsim(t, "paper", "--trials", "10", "--max-time", "5s", "--plot", path)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, errOut, "wrote the figure to "+path)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Greater(t, len(b), 1000)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	code, out, _ := raftsim(t, "--version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "raftsim "), out)
	code, out, _ = raftsim(t, "completion", "bash")
	require.Equal(t, 0, code)
	require.Contains(t, out, "bash completion")
	code, out, _ = raftsim(t, "failover", "--help")
	require.Equal(t, 0, code)
	for _, want := range []string{"lognormal:5ms,0.8", "standard deviation", "Model presets", "hashicorp", "plain"} {
		require.Contains(t, out, want)
	}
}
