package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// Meta is what a program knows about a run that its Results do not say,
// written into every JSON Lines record and CSV row so that each stands
// on its own: the tool and its version, the subcommand, the model preset
// the setup started from, and whether the run was interrupted.
type Meta struct {
	Tool    string // e.g. "raftsim"
	Version string // the tool's version
	Command string // e.g. "paper", "failover", "sweep"
	Model   string // the model preset (raftsim's --model): "paper", "plain", "hashicorp"
	// Interrupted marks every record of a run that was stopped before all
	// its trials ran.
	Interrupted bool
	// Requested are the trials asked for, one per result written, in
	// order; a result with none listed was asked for the trials it ran.
	Requested []int
}

// toMS converts d to milliseconds rounded to the microsecond.
func toMS(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// spec returns the spec of a latency model, "" for none.
func spec(l interface{ String() string }) string {
	if l == nil {
		return ""
	}
	return l.String()
}

// head adds the fields that say what wrote a record and whether its run
// was interrupted.
func (m Meta) head(r *record, kind string) {
	r.add("record", kind)
	r.add("schema", SchemaVersion)
	r.opt("tool", m.Tool)
	r.opt("version", m.Version)
	r.opt("command", m.Command)
	r.opt("model", m.Model)
	r.add("interrupted", m.Interrupted)
}

// requested returns the trials asked for of the i-th result written,
// which ran done of them.
func (m Meta) requested(i, done int) int {
	if i >= 0 && i < len(m.Requested) {
		return m.Requested[i]
	}
	return done
}

// paramList is the parameters of a setup: a JSON object with the
// members in field order, and one CSV column each ("param.NAME").
type paramList []experiment.Param

// params returns the parameters of a setup.
func params(s experiment.Setup) paramList { return paramList(s.Params()) }

// Params returns every parameter of s as the "params" member of a record:
// a JSON object with one member per Setup field, in field order, as the
// records of Meta.WriteJSON carry them (for commands that write records of
// their own, such as partition).
func Params(s experiment.Setup) json.Marshaler { return params(s) }

// splitVoteParams returns the parameters of a splitvote result, whose
// Setup only restates them.
func splitVoteParams(r experiment.Result) paramList {
	lat := "none"
	if r.Setup.Latency != nil {
		lat = r.Setup.Latency.String()
	}
	return paramList{
		{Name: "nodes", Value: r.Setup.Nodes}, {Name: "alive", Value: r.Alive}, {Name: "l", Value: r.LatencyFraction},
		{Name: "range_ms", Value: float64(r.Setup.TimeoutMax-r.Setup.TimeoutMin) / 1e6}, {Name: "latency", Value: lat},
		{Name: "sv_model", Value: r.Model},
	}
}

// MarshalJSON writes the parameters as one object, in order.
func (ps paramList) MarshalJSON() ([]byte, error) {
	var r record
	for _, p := range ps {
		r.add(p.Name, p.Value)
	}
	var b bytes.Buffer
	if err := r.writeJSON(&b); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// stats adds the order statistics and mean of s, in milliseconds.
func (r *record) stats(s sim.Summary) {
	for _, st := range statistics(s) {
		r.add(st.name, toMS(st.v))
	}
}

type statistic struct {
	name string
	v    time.Duration
}

// statistics lists the statistics of s under their field names.
func statistics(s sim.Summary) []statistic {
	return []statistic{{"min_ms", s.Min}, {"p10_ms", s.P10}, {"p50_ms", s.P50}, {"mean_ms", s.Mean}, {"p90_ms", s.P90}, {"p95_ms", s.P95},
		{"p99_ms", s.P99}, {"p999_ms", s.P999}, {"max_ms", s.Max}}
}

// lowerBounds names the statistics of s that are lower bounds: those at
// or above the time limit when some trials were cut there (a censored
// trial's true time is larger than the limit it was counted at).
func lowerBounds(s sim.Summary) []string {
	if s.TimedOut == 0 {
		return nil
	}
	var out []string
	for _, st := range statistics(s) {
		if st.v >= s.Max || st.name == "mean_ms" {
			out = append(out, st.name)
		}
	}
	return out
}

// resultRecord returns the fields of r's output object. The names up to
// messages_per_election are those of earlier versions; the others were
// added with the self-describing records.
func (m Meta) resultRecord(s experiment.Result, requested int, withCDF bool) record {
	var r record
	m.head(&r, "result")
	r.add("experiment", s.Experiment)
	r.opt("label", s.Label)
	r.add("nodes", s.Setup.Nodes)
	r.opt("alive", s.Alive)
	r.add("timeout_min_ms", toMS(s.Setup.TimeoutMin))
	r.add("timeout_max_ms", toMS(s.Setup.TimeoutMax))
	r.opt("heartbeat_ms", toMS(s.Setup.Heartbeat))
	r.opt("latency", spec(s.Setup.Latency))
	r.opt("disk", spec(s.Setup.Disk))
	r.opt("loss", s.Setup.Loss)
	r.opt("prevote", s.Setup.PreVote)
	r.opt("checkquorum", s.Setup.CheckQuorum)
	engine, svModel := engineOf(s)
	r.opt("engine", engine)
	r.opt("sv_model", svModel)
	r.opt("latency_fraction", s.LatencyFraction)
	r.add("trials", s.Trials)
	r.add("trials_requested", requested)
	r.add("timed_out", s.TimedOut)
	r.add("seed", s.Seed)
	r.stats(s.Summary)
	r.add("split_vote_rate", round6(s.SplitVoteRate))
	r.add("mean_terms", round6(s.MeanTerms))
	var msgs *float64 // null when not measured
	if s.MessagesMeasured() {
		m := round6(s.MessagesPerElection)
		msgs = &m
	}
	r.add("messages_per_election", msgs)
	var an *float64
	if !math.IsNaN(s.Analytic) {
		a := round6(s.Analytic)
		an = &a
	}
	r.opt("analytic_split_vote_rate", an)
	var paper []paperJSON
	for _, f := range s.Paper {
		paper = append(paper, paperJSON{Stat: f.Stat, Relation: f.Relation, MS: toMS(f.Value), SimMS: toMS(f.Statistic(s.Summary))})
	}
	r.opt("paper", paper)
	r.add("censored", s.TimedOut)
	r.add("lower_bounds", nonNil(lowerBounds(s.Summary)))
	r.add("no_leader", s.NoLeader)
	r.add("measured", s.Measured())
	r.add("percentiles_exact", s.Exact())
	rel := 0.0
	if !s.Exact() {
		rel = sim.SketchError
	}
	r.add("percentile_rel_error", rel)
	if s.Experiment == "splitvote" {
		r.add("params", splitVoteParams(s))
	} else {
		r.add("params", params(s.Setup))
	}
	if withCDF {
		var cdf [][2]float64
		for _, p := range s.CDF() {
			cdf = append(cdf, [2]float64{toMS(p.Time), round6(p.Fraction)})
		}
		r.opt("cdf", cdf)
	}
	return r
}

// engineOf splits Result.Model into the engine that ran the trials
// (raftick, etcd or hashicorp, as raftsim's --engine names them) and
// splitvote's model (race or cluster).
func engineOf(s experiment.Result) (engine, svModel string) {
	switch {
	case s.Experiment == "splitvote":
		return "", s.Model
	case strings.HasSuffix(s.Model, "-engine"):
		return strings.TrimSuffix(s.Model, "-engine"), ""
	case s.Model == "":
		return "raftick", ""
	}
	return s.Model, ""
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// WriteJSON writes one JSON object for r, on one line, with no Meta.
// With cdf it includes the CDF as [ms, fraction] pairs.
func WriteJSON(w io.Writer, r experiment.Result, cdf bool) error {
	return Meta{}.WriteJSON(w, r, cdf)
}

// WriteJSON writes one self-describing JSON object for r on one line
// (JSON Lines): what wrote it (m), the experiment, seed, every model
// parameter ("params"), the trial counts (trials, censored: cut at the
// time limit, no_leader: never had the first leader, measured), the
// statistics in milliseconds with "lower_bounds" naming those that are
// only lower bounds because of censored trials, and whether the
// percentiles are exact. With cdf it includes the CDF as [ms, fraction]
// pairs.
func (m Meta) WriteJSON(w io.Writer, r experiment.Result, cdf bool) error {
	return m.resultRecord(r, m.requested(0, r.Trials), cdf).writeJSON(w)
}

// WriteJSONLines writes one JSON object per result (see Meta.WriteJSON).
func (m Meta) WriteJSONLines(w io.Writer, rs []experiment.Result, cdf bool) error {
	for i, r := range rs {
		if err := m.resultRecord(r, m.requested(i, r.Trials), cdf).writeJSON(w); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSV writes a header and one row per result, with no Meta.
func WriteCSV(w io.Writer, ss []experiment.Result) error { return Meta{}.WriteCSV(w, ss) }

// WriteCSV writes a header and one row per result, with the fields of
// the JSON records (Meta.WriteJSON) as columns, lists space-separated and
// params as one column per parameter, as the first result (all results
// of one run share an experiment) names them.
func (m Meta) WriteCSV(w io.Writer, ss []experiment.Result) error {
	cw := csv.NewWriter(w)
	first := experiment.Result{}
	if len(ss) > 0 {
		first = ss[0]
	}
	hdr := m.resultRecord(first, 0, false).csvHeader()
	if err := cw.Write(hdr); err != nil {
		return err
	}
	for i, s := range ss {
		if err := cw.Write(m.resultRecord(s, m.requested(i, s.Trials), false).csvRow()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCDFCSV writes the CDF of each result as rows label,ms,fraction.
func WriteCDFCSV(w io.Writer, ss []experiment.Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"label", "ms", "fraction"})
	for _, s := range ss {
		for _, p := range s.CDF() {
			_ = cw.Write([]string{s.Label, strconv.FormatFloat(toMS(p.Time), 'f', -1, 64), strconv.FormatFloat(round6(p.Fraction), 'f', -1, 64)})
		}
	}
	cw.Flush()
	return cw.Error()
}
