package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim/report"
)

// schemaRuns are small runs of every subcommand that writes records.
var schemaRuns = [][]string{
	{"paper", "--trials", "20", "--max-time", "20s"},
	{"failover", "--trials", "20"},
	{"failover", "--trials", "20", "--model", "hashicorp", "--timeout", "100ms", "--cdf"},
	{"failover", "--engine", "etcd", "--trials", "10"},
	{"bootstrap", "--trials", "20"},
	{"splitvote", "--trials", "200"},
	{"sweep", "--over", "nodes=3,5", "--trials", "20"},
	{"tune", "--min", "100ms", "--spread", "1", "--trials", "20", "--stable-trials", "1", "--stable-for", "1m"},
	{"partition", "--model", "plain", "--shape", "chain", "--prevote", "--checkquorum", "--for", "1m", "--trials", "1"},
	{"multiraft", "--groups", "300", "--nodes", "3"},
	{"ticks", "--trials", "20", "--stable-trials", "1", "--window", "1m", "--ticks", "0,10ms"},
}

// TestRecordsFollowTheSchema: every record every subcommand writes, as
// JSON Lines and as CSV, has exactly the fields of its kind in the schema
// that "raftsim help records" prints, with their types.
func TestRecordsFollowTheSchema(t *testing.T) {
	for _, args := range schemaRuns {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := raftsim(t, append(args, "--json")...)
			require.Equal(t, 0, code, errOut)
			recs := checkJSONRecords(t, args[0], out)
			require.NotEmpty(t, recs)
			for _, r := range recs {
				require.Equal(t, false, r["interrupted"])
				require.Equal(t, r["trials"], r["trials_requested"], "a run not interrupted finishes what it was asked")
				// The heartbeat in params is the one used, not a 0 that
				// means "derived", where one interval is fixed.
				hb, ok := r["params"].(map[string]any)["heartbeat_ms"].(json.Number)
				if ok && r["record"] != "tune-verdict" && r["engine"] != "hashicorp" {
					require.NotEqual(t, json.Number("0"), hb, "%s record: params.heartbeat_ms", r["record"])
				}
			}
			if args[0] == "multiraft" || slices.Contains(args, "--cdf") {
				return // no --csv
			}
			code, out, errOut = raftsim(t, append(args, "--csv")...)
			require.Equal(t, 0, code, errOut)
			checkCSVRecords(t, args[0], out)
		})
	}
}

// specOf returns the fields of a record kind, the envelope first.
func specOf(t *testing.T, kind string) map[string]fieldSpec {
	t.Helper()
	m := map[string]fieldSpec{}
	for _, f := range envelope {
		m[f.name] = f
	}
	for _, r := range recordSpecs {
		if r.kind == kind {
			for _, f := range r.fields {
				m[f.name] = f
			}
			return m
		}
	}
	t.Fatalf("record kind %q is not in the schema", kind)
	return nil
}

// checkJSONRecords checks each line of out against the schema and
// returns the records.
func checkJSONRecords(t *testing.T, command, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		require.NoError(t, dec.Decode(&m), "one object per line: %s", line)
		kind, _ := m["record"].(string)
		spec := specOf(t, kind)
		interrupted, _ := m["interrupted"].(bool)
		for name, v := range m {
			f, ok := spec[name]
			require.True(t, ok, "%s record: field %q is not in the schema (raftsim help records)", kind, name)
			require.True(t, hasType(v, f.typ), "%s record: %s = %v is not a %s", kind, name, v, f.typ)
		}
		for name, f := range spec {
			if f.when == always || f.when == unlessStopped && !interrupted {
				require.Contains(t, m, name, "%s record lacks %q: %s", kind, name, line)
			}
		}
		require.Equal(t, json.Number(itoa(report.SchemaVersion)), m["schema"])
		require.Equal(t, "raftsim", m["tool"])
		require.Equal(t, command, m["command"])
		require.NotEmpty(t, m["model"])
		done, _ := m["trials"].(json.Number).Int64()
		asked, _ := m["trials_requested"].(json.Number).Int64()
		require.LessOrEqual(t, done, asked)
		noGoNames(t, line)
		recs = append(recs, m)
	}
	return recs
}

func itoa(n int) string { return strconv.Itoa(n) }

// hasType reports whether a decoded JSON value has the schema type typ.
func hasType(v any, typ string) bool {
	for _, alt := range strings.Split(typ, " or ") {
		switch alt {
		case "null":
			if v == nil {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok && !strings.ContainsAny(n.String(), ".eE") {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		}
	}
	return false
}

// checkCSVRecords checks that the CSV header names schema fields (and
// params.NAME columns) and that every row has a cell per column.
func checkCSVRecords(t *testing.T, command, out string) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err, "CSV with one cell per column in every row:\n%s", out)
	require.GreaterOrEqual(t, len(rows), 2)
	hdr := rows[0]
	require.Equal(t, "record", hdr[0])
	for _, row := range rows[1:] {
		spec := specOf(t, row[0])
		for i, col := range hdr {
			if strings.HasPrefix(col, "params.") {
				continue
			}
			_, ok := spec[col]
			require.True(t, ok, "%s: CSV column %q is not in the schema", command, col)
			if col == "command" {
				require.Equal(t, command, row[i])
			}
		}
	}
}

// TestRecordsHelpIsInDocs: docs/raftsim-records.md carries the schema as
// "raftsim help records" prints it.
func TestRecordsHelpIsInDocs(t *testing.T) {
	var b bytes.Buffer
	writeRecordsHelp(&b)
	doc, err := os.ReadFile("../../docs/raftsim-records.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), b.String(),
		"docs/raftsim-records.md must hold the output of raftsim help records; regenerate it with: go run ./cmd/raftsim help records")
	code, out, _ := raftsim(t, "help", "records")
	require.Equal(t, 0, code)
	require.Contains(t, out, strings.TrimRight(b.String(), "\n"))
}

// TestHelpDefinesColumns: the help of every command that prints an
// experiment table defines its columns and points to the record schema.
func TestHelpDefinesColumns(t *testing.T) {
	for _, cmd := range []string{"paper", "failover", "bootstrap", "sweep"} {
		code, out, _ := raftsim(t, cmd, "--help")
		require.Equal(t, 0, code)
		for _, want := range []string{"split (the fraction", "terms (the mean", "msgs (the mean", `"raftsim help records"`} {
			require.Contains(t, out, want, "%s --help", cmd)
		}
	}
	code, out, _ := raftsim(t, "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "p50_ms", "the help names the statistics as the records do")
	require.Contains(t, out, "exits with\nstatus 130")
}

// TestEverySubcommandIsChecked: each subcommand that runs an experiment
// is among the runs whose records and interrupts the tests check, so a
// new subcommand cannot leave the schema unnoticed.
func TestEverySubcommandIsChecked(t *testing.T) {
	a := &app{}
	for _, c := range a.rootCmd().Commands() {
		name := c.Name()
		if !c.Runnable() || name == "merge" || name == "completion" || name == "help" {
			continue
		}
		for _, runs := range map[string][][]string{"schemaRuns": schemaRuns, "interruptRuns": interruptRuns} {
			if name == "compare" {
				continue // no records: TestInterruptCompare checks its interrupt
			}
			found := false
			for _, args := range runs {
				found = found || args[0] == name
			}
			if !found {
				t.Errorf("raftsim %s has no run in the tests' lists (schemaRuns, interruptRuns)", name)
			}
		}
	}
}
