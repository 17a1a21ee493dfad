package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
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

// field is one named value of a record, in output order. omit drops it
// from JSON (not from CSV, whose columns are fixed).
type field struct {
	name  string
	value any
	omit  bool
}

// record is the fields of one output object, in order.
type record []field

func (r *record) add(name string, value any) { *r = append(*r, field{name: name, value: value}) }

// opt adds a field that JSON leaves out when it is the zero value.
func (r *record) opt(name string, value any) {
	zero := value == nil || reflect.ValueOf(value).IsZero()
	*r = append(*r, field{name: name, value: value, omit: zero})
}

// writeJSON writes r as one JSON object on one line.
func (r record) writeJSON(w io.Writer) error {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range r {
		if f.omit {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := encode(&b, f.name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encode(&b, f.value); err != nil {
			return err
		}
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// encode appends the compact JSON of v to b (no HTML escaping).
func encode(b *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
	return nil
}

// csvHeader returns the column names of r: a parameter list becomes one
// column per parameter, "params.NAME".
func (r record) csvHeader() []string {
	var h []string
	for _, f := range r {
		if ps, ok := f.value.(paramList); ok {
			for _, p := range ps {
				h = append(h, f.name+"."+p.Name)
			}
			continue
		}
		h = append(h, f.name)
	}
	return h
}

// csvRow returns the values of r as CSV cells: numbers as in JSON,
// lists joined by spaces, objects as JSON, nil empty.
func (r record) csvRow() []string {
	var row []string
	for _, f := range r {
		if ps, ok := f.value.(paramList); ok {
			for _, p := range ps {
				row = append(row, csvCell(p.Value))
			}
			continue
		}
		row = append(row, csvCell(f.value))
	}
	return row
}

func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case *float64:
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'f', -1, 64)
	case []string:
		return strings.Join(x, " ")
	}
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return fmt.Sprint(v)
	}
	return b.String()
}

type paperJSON struct {
	Stat     string  `json:"stat"`
	Relation string  `json:"relation"`
	MS       float64 `json:"ms"`
	SimMS    float64 `json:"sim_ms"`
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
	r.add("messages_per_election", round6(s.MessagesPerElection))
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

// Table is a text table with a left-aligned first column and
// right-aligned others.
type Table struct {
	Header []string
	Rows   [][]string
}

// Write writes the table with two spaces between columns.
func (t Table) Write(w io.Writer) error {
	width := make([]int, len(t.Header))
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
	}
	var b strings.Builder
	line := func(r []string) {
		var l strings.Builder
		for i, c := range r {
			if i >= len(width) {
				break
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				l.WriteString(c + pad)
			default:
				l.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SummaryTable returns the standard table of timing results; the first
// column is the label. With paper it adds a column with the paper's quoted
// figures. Statistics that are only lower bounds (trials cut at the time
// limit) read ">=", trials that never had a first leader are counted in
// the trials column and left out of the statistics ("-" when no trial
// was measured).
func SummaryTable(ss []experiment.Result, paper bool) Table {
	t := Table{Header: []string{"timeout", "trials", "min", "p10", "p50", "mean", "p90", "p95", "p99", "p99.9", "max", "split", "terms", "msgs"}}
	if paper {
		t.Header = append(t.Header, "paper says")
	}
	for _, s := range ss {
		cap := func(d time.Duration) string {
			switch {
			case s.Measured() == 0:
				return "-"
			case s.TimedOut > 0 && d >= s.Max:
				return ">=" + fmtMS(d)
			}
			return fmtMS(d)
		}
		trials := strconv.Itoa(s.Trials)
		var notes []string
		if s.TimedOut > 0 {
			notes = append(notes, fmt.Sprintf("%d cut", s.TimedOut))
		}
		if s.NoLeader > 0 {
			notes = append(notes, fmt.Sprintf("%d no first leader", s.NoLeader))
		}
		if len(notes) > 0 {
			trials += " (" + strings.Join(notes, ", ") + ")"
		}
		row := []string{s.Label, trials, cap(s.Min), cap(s.P10), cap(s.P50), cap(s.Mean), cap(s.P90), cap(s.P95), cap(s.P99), cap(s.P999), cap(s.Max),
			fmt.Sprintf("%.1f%%", 100*s.SplitVoteRate), fmt.Sprintf("%.2f", s.MeanTerms), fmt.Sprintf("%.0f", s.MessagesPerElection)}
		if s.Measured() == 0 {
			row[11], row[12], row[13] = "-", "-", "-"
		}
		if paper {
			var q []string
			for _, f := range s.Paper {
				q = append(q, describeFigure(f))
			}
			row = append(row, strings.Join(q, ", "))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// SplitVoteTable returns the table of splitvote results with the
// analytic rate beside the simulated one.
func SplitVoteTable(ss []experiment.Result) Table {
	t := Table{Header: []string{"n", "alive", "l", "model", "trials", "split (sim)", "split (thesis)", "diff", "±2se"}}
	for _, s := range ss {
		an, diff := "-", "-"
		if !math.IsNaN(s.Analytic) {
			an = fmt.Sprintf("%.3f%%", 100*s.Analytic)
			diff = fmt.Sprintf("%+.3fpp", 100*(s.SplitVoteRate-s.Analytic))
		}
		se := 0.0
		if s.Trials > 0 {
			p := s.SplitVoteRate
			se = 2 * math.Sqrt(p*(1-p)/float64(s.Trials))
		}
		t.Rows = append(t.Rows, []string{
			strconv.Itoa(s.Setup.Nodes), strconv.Itoa(s.Alive), strconv.FormatFloat(s.LatencyFraction, 'g', -1, 64), s.Model,
			strconv.Itoa(s.Trials), fmt.Sprintf("%.3f%%", 100*s.SplitVoteRate), an, diff, fmt.Sprintf("%.3fpp", 100*se),
		})
	}
	return t
}

// WriteComparison writes the paper's quoted figures next to the
// simulator's, one line each.
func WriteComparison(w io.Writer, ss []experiment.Result) error {
	t := Table{Header: []string{"range", "statistic", "paper", "simulated"}}
	for _, s := range ss {
		for _, f := range s.Paper {
			name, rel := figureWords(f)
			v := f.Statistic(s.Summary)
			simulated := fmtMS(v)
			switch {
			case s.Measured() == 0:
				simulated = "-"
			case s.TimedOut > 0 && v >= s.Max:
				simulated = ">=" + simulated
			}
			t.Rows = append(t.Rows, []string{s.Label, name + fmt.Sprintf(" of %d", s.Trials), rel + fmtMS(f.Value), simulated})
		}
	}
	return t.Write(w)
}

// figureWords returns the statistic's name and the relation's sign of f.
func figureWords(f experiment.PaperFigure) (name, rel string) {
	name = map[string]string{"p50": "median", "mean": "mean", "max": "max"}[f.Stat]
	rel = "~"
	if f.Relation == ">" {
		rel = ">"
	}
	return name, rel
}

// describeFigure returns e.g. "median ~287ms".
func describeFigure(f experiment.PaperFigure) string {
	name, rel := figureWords(f)
	return fmt.Sprintf("%s %s%s", name, rel, fmtMS(f.Value))
}

// PaperShape checks the shape the paper reports on the results of
// experiment.PaperRows (in order) and describes it in one line: no
// randomness is far slower than a little (150-150 vs 150-155ms median),
// a little is slower than more at the median (150-155 vs 150-300ms), and
// more randomness mainly cuts the tail (p99 falls from 150-155 to
// 150-200ms).
func PaperShape(ss []experiment.Result) string {
	if len(ss) < 6 {
		return "shape: not enough rows"
	}
	a, b, c, e := ss[0], ss[2], ss[4], ss[5]
	for _, r := range []experiment.Result{a, b, c, e, ss[3]} {
		if r.Measured() == 0 {
			return "shape: not checked, " + r.Label + " has no measured trial"
		}
	}
	ok := a.P50 > 10*b.P50 && b.P50 > e.P50 && b.P99 > c.P99
	mark := "as in the paper"
	if !ok {
		mark = "NOT as in the paper"
	}
	return fmt.Sprintf("shape (%s): median %s %s >> %s %s > %s %s; p99 %s %s -> %s %s -> %s %s",
		mark, a.Label, fmtMS(a.P50), b.Label, fmtMS(b.P50), e.Label, fmtMS(e.P50),
		b.Label, fmtMS(b.P99), ss[3].Label, fmtMS(ss[3].P99), c.Label, fmtMS(c.P99))
}

// fmtMS formats a duration in milliseconds for tables: "287ms", "35.2ms",
// "1.23ms", "10.3s".
func fmtMS(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case ms >= 10000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}

// WritePaperText writes the text report of `raftsim paper`: the model of
// s and its broadcast times, the table of each panel of Figure 16 with
// the paper's figures beside the simulated ones, the comparison and the
// shape check. rs are the results of experiment.PaperExperiments, in
// order.
func WritePaperText(w io.Writer, s experiment.Setup, seed uint64, rs []experiment.Result) error {
	if err := WritePaperTables(w, s, seed, rs); err != nil {
		return err
	}
	fmt.Fprintln(w, "The paper's figures beside the simulator's:")
	if err := WriteComparison(w, rs); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := fmt.Fprintln(w, PaperShape(rs))
	return err
}

// WritePaperTables writes what WritePaperText writes up to the comparison
// with the paper: the model and both panels' tables. It is all a run
// that was interrupted can say.
func WritePaperTables(w io.Writer, s experiment.Setup, seed uint64, rs []experiment.Result) error {
	bt := experiment.BroadcastTimes(s)
	fmt.Fprintf(w, "Raft paper, Figure 16: time without a leader after the leader crashes (seed %d)\n", seed)
	fmt.Fprintf(w, "model: %s\n", s.Describe())
	fmt.Fprintf(w, "simulated broadcast time: %s (round trip + one write), %s for a vote at a new term (paper: about 15ms)\n\n",
		fmtMS(bt.RoundTripWrite), fmtMS(bt.VoteRound))
	var panels [len(experiment.PaperPanelTitles)][]experiment.Result
	for i, row := range experiment.PaperRows() {
		if i < len(rs) {
			panels[row.Panel] = append(panels[row.Panel], rs[i])
		}
	}
	for i, p := range panels {
		fmt.Fprintln(w, experiment.PaperPanelTitles[i])
		if err := SummaryTable(p, true).Write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}
