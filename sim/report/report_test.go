package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

const ms = time.Millisecond

// result returns a failover result of the paper model over outs.
func result(label string, outs ...sim.Outcome) experiment.Result {
	r := experiment.Failover{Setup: experiment.PaperModel()}.Result(outs)
	r.Label = label
	return r
}

func TestJSONFieldNames(t *testing.T) {
	s := result("150-300ms", sim.Outcome{Time: 287 * ms, Terms: 2, Splits: 1, OK: true})
	s.Seed = 7
	s.Paper = []experiment.PaperFigure{{Stat: "p50", Relation: "~", Value: 287 * ms}}
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, s, false))
	require.Equal(t, 1, strings.Count(b.String(), "\n"), "one object per line")
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	for _, k := range []string{"experiment", "nodes", "timeout_min_ms", "timeout_max_ms", "trials", "seed", "min_ms", "p10_ms",
		"p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms", "split_vote_rate", "mean_terms", "messages_per_election", "paper"} {
		require.Contains(t, m, k)
	}
	require.Equal(t, "failover", m["experiment"])
	require.Equal(t, 150.0, m["timeout_min_ms"])
	require.Equal(t, 75.0, m["heartbeat_ms"], "the effective heartbeat")
	require.Equal(t, 4.0, m["alive"])
	require.Equal(t, "normal:250µs,50µs", m["latency"])
	require.Equal(t, 287.0, m["p50_ms"])
	require.Equal(t, 0.5, m["split_vote_rate"])
	require.Equal(t, 7.0, m["seed"])
	require.NotContains(t, m, "analytic_split_vote_rate")

	b.Reset()
	meta := Meta{Tool: "raftsim", Version: "v1.2.3", Command: "paper", Model: "paper"}
	require.NoError(t, meta.WriteJSONLines(&b, []experiment.Result{s, s}, true))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	require.Contains(t, m, "cdf")
	require.Equal(t, "v1.2.3", m["version"])
	require.Equal(t, "paper", m["model"])
	require.Equal(t, "result", m["record"])
	require.Equal(t, true, m["percentiles_exact"])
	ps := m["params"].(map[string]any)
	require.Equal(t, true, ps["candidates_wait"])
	require.Equal(t, "uniform:0s,200µs", ps["timer_lateness"])

	sv := experiment.SplitVote{Nodes: 5, Alive: 4, Fraction: 0.1}.Result([]sim.Outcome{{Terms: 1, OK: true}})
	b.Reset()
	require.NoError(t, WriteJSON(&b, sv, false))
	require.Contains(t, b.String(), `"analytic_split_vote_rate":0.0523,`)
	require.Contains(t, b.String(), `"sv_model":"race"`)
	require.NotContains(t, b.String(), "heartbeat_ms")
}

func TestCSVAndTable(t *testing.T) {
	a := result("150-155ms", sim.Outcome{Time: 287 * ms, Terms: 1, OK: true})
	b := result("12-24ms", sim.Outcome{Time: 35 * ms, Terms: 1, OK: true}, sim.Outcome{Time: time.Minute, Terms: 9, Splits: 9})
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []experiment.Result{a, b}))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[0], "record,schema,tool,version,command,model,interrupted,experiment,label,nodes,alive,timeout_min_ms"), lines[0])
	require.Contains(t, lines[0], ",p95_ms,")
	require.Contains(t, lines[0], ",p999_ms,")
	require.Contains(t, lines[0], ",params.candidates_wait,")
	require.Contains(t, lines[1], "150-155ms")

	buf.Reset()
	require.NoError(t, SummaryTable([]experiment.Result{a, b}, false).Write(&buf))
	out := buf.String()
	rows := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, rows, 3)
	require.Equal(t, len([]rune(rows[0])), len([]rune(rows[1])), "aligned:\n%s", out)
	require.Equal(t, len([]rune(rows[0])), len([]rune(rows[2])), "aligned:\n%s", out)
	for _, r := range rows {
		require.Equal(t, strings.TrimRight(r, " "), r, "no trailing spaces")
	}
	require.Contains(t, rows[2], "(1 cut)")
	require.Contains(t, rows[2], ">=60.0s")

	buf.Reset()
	require.NoError(t, WriteCDFCSV(&buf, []experiment.Result{a}))
	require.Equal(t, "label,ms,fraction\n150-155ms,287,1\n", buf.String())
}

func TestFmtMS(t *testing.T) {
	for d, want := range map[time.Duration]string{
		287 * ms: "287ms", 35200 * time.Microsecond: "35.2ms", 1230 * time.Microsecond: "1.23ms", 10300 * ms: "10.3s",
	} {
		require.Equal(t, want, fmtMS(d))
	}
	rows := experiment.PaperRows()
	require.Equal(t, "median ~287ms", describeFigure(rows[2].Quoted[0]))
	require.Equal(t, "median >10.0s", describeFigure(rows[0].Quoted[0]))
}

// TestPaperText runs a small paper reproduction and checks the text
// report: both panels, the paper's figures, the comparison and the shape.
func TestPaperText(t *testing.T) {
	s := experiment.PaperModel()
	s.MaxTime = 20 * time.Second
	var exps []experiment.Experiment
	for _, e := range experiment.PaperExperiments(s) {
		exps = append(exps, e)
	}
	rs, err := experiment.Run(context.Background(), exps, experiment.PaperTrials(20), sim.RunOptions{Seed: 7})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WritePaperText(&b, s, 7, rs))
	for _, want := range []string{"(seed 7)", "model: 5 servers", "Figure 16 (top)", "Figure 16 (bottom)", "150-150ms", "12-24ms",
		"median ~287ms", "max ~513ms", "mean ~35.0ms", "The paper's figures beside the simulator's", "shape ("} {
		require.Contains(t, b.String(), want)
	}
	require.Equal(t, "shape: not enough rows", PaperShape(rs[:3]))
	unmeasured := append([]experiment.Result(nil), rs...)
	unmeasured[4] = experiment.PaperExperiments(s)[4].Result(nil)
	require.Equal(t, "shape: not checked, 150-200ms has no measured trial", PaperShape(unmeasured))
	b.Reset()
	require.NoError(t, WriteComparison(&b, unmeasured))
	require.Contains(t, b.String(), "~513ms          -")
}

func TestTuneOutputs(t *testing.T) {
	s := experiment.PaperModel()
	s.Latency = sim.LogNormal(5*ms, 0.8)
	cfg := experiment.TuneConfig{Base: s, Mins: []time.Duration{30 * ms, 150 * ms}, Spreads: []float64{1}, Objective: "p50",
		MaxElectionsPerNodeHour: 10, FailoverTrials: 30, StableTrials: 1, StableFor: 2 * time.Minute}
	r, err := experiment.Tune(context.Background(), cfg, sim.RunOptions{Seed: 1})
	require.NoError(t, err)
	require.Equal(t, 1, r.Best)
	var a bytes.Buffer
	require.NoError(t, Meta{Tool: "raftsim", Version: "v9"}.WriteTuneJSON(&a, r))
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	require.Len(t, lines, 3, "two candidates and the verdict")
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &j))
	require.Equal(t, "tune-candidate", j["record"])
	require.Equal(t, "v9", j["version"])
	require.Equal(t, "lognormal:5ms,0.8", j["params"].(map[string]any)["latency"])
	best := r.Candidates[r.Best]
	require.InDelta(t, best.Objective.Seconds()*1000, j["objective_ms"], 1e-3)
	require.Contains(t, j, "objective_ci95_low_ms")
	require.Contains(t, j, "unnecessary_ci95_high")
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &j))
	require.Equal(t, "tune-verdict", j["record"])
	require.Equal(t, "150-300ms", j["best"])

	var csvOut, table bytes.Buffer
	require.NoError(t, WriteTuneCSV(&csvOut, r))
	require.Equal(t, 3, strings.Count(csvOut.String(), "\n"))
	require.NoError(t, TuneTable(r).Write(&table))
	require.Equal(t, 1, strings.Count(table.String(), "<- best"))
	require.Contains(t, Recommendation(r), "recommended: 150-300ms (p50 ")
	require.Contains(t, Recommendation(r), "95% CI [")

	r.Best = -1
	require.Contains(t, Recommendation(r), "no candidate is feasible")
	a.Reset()
	require.NoError(t, WriteTuneJSON(&a, r))
	require.Contains(t, a.String(), `"best":null`)
}
