package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim/experiment"
)

// summaryJSON is the JSON form of a Result. Field names are part of the
// command line's contract (see cmd/raftsim).
type summaryJSON struct {
	Experiment          string       `json:"experiment"`
	Label               string       `json:"label,omitempty"`
	Nodes               int          `json:"nodes"`
	Alive               int          `json:"alive,omitempty"`
	TimeoutMinMS        float64      `json:"timeout_min_ms"`
	TimeoutMaxMS        float64      `json:"timeout_max_ms"`
	HeartbeatMS         float64      `json:"heartbeat_ms,omitempty"`
	Latency             string       `json:"latency,omitempty"`
	Disk                string       `json:"disk,omitempty"`
	Loss                float64      `json:"loss,omitempty"`
	PreVote             bool         `json:"prevote,omitempty"`
	CheckQuorum         bool         `json:"checkquorum,omitempty"`
	Model               string       `json:"model,omitempty"`
	LatencyFraction     float64      `json:"latency_fraction,omitempty"`
	Trials              int          `json:"trials"`
	TimedOut            int          `json:"timed_out"`
	Seed                uint64       `json:"seed"`
	MinMS               float64      `json:"min_ms"`
	P10MS               float64      `json:"p10_ms"`
	P50MS               float64      `json:"p50_ms"`
	MeanMS              float64      `json:"mean_ms"`
	P90MS               float64      `json:"p90_ms"`
	P99MS               float64      `json:"p99_ms"`
	MaxMS               float64      `json:"max_ms"`
	SplitVoteRate       float64      `json:"split_vote_rate"`
	MeanTerms           float64      `json:"mean_terms"`
	MessagesPerElection float64      `json:"messages_per_election"`
	Analytic            *float64     `json:"analytic_split_vote_rate,omitempty"`
	Paper               []paperJSON  `json:"paper,omitempty"`
	CDF                 [][2]float64 `json:"cdf,omitempty"`
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

func toJSON(s experiment.Result, withCDF bool) summaryJSON {
	j := summaryJSON{
		Experiment: s.Experiment, Label: s.Label, Nodes: s.Setup.Nodes, Alive: s.Alive,
		TimeoutMinMS: toMS(s.Setup.TimeoutMin), TimeoutMaxMS: toMS(s.Setup.TimeoutMax), HeartbeatMS: toMS(s.Setup.Heartbeat),
		Latency: spec(s.Setup.Latency), Disk: spec(s.Setup.Disk), Loss: s.Setup.Loss, PreVote: s.Setup.PreVote, CheckQuorum: s.Setup.CheckQuorum,
		Model: s.Model, LatencyFraction: s.LatencyFraction,
		Trials: s.Trials, TimedOut: s.TimedOut, Seed: s.Seed,
		MinMS: toMS(s.Min), P10MS: toMS(s.P10), P50MS: toMS(s.P50), MeanMS: toMS(s.Mean),
		P90MS: toMS(s.P90), P99MS: toMS(s.P99), MaxMS: toMS(s.Max),
		SplitVoteRate: round6(s.SplitVoteRate), MeanTerms: round6(s.MeanTerms),
		MessagesPerElection: round6(s.MessagesPerElection),
	}
	if !math.IsNaN(s.Analytic) {
		a := round6(s.Analytic)
		j.Analytic = &a
	}
	for _, f := range s.Paper {
		j.Paper = append(j.Paper, paperJSON{Stat: f.Stat, Relation: f.Relation, MS: toMS(f.Value), SimMS: toMS(f.Statistic(s.Summary))})
	}
	if withCDF {
		for _, p := range s.CDF() {
			j.CDF = append(j.CDF, [2]float64{toMS(p.Time), round6(p.Fraction)})
		}
	}
	return j
}

// WriteJSON writes one JSON object for r, on one line. With cdf it
// includes the CDF as [ms, fraction] pairs.
func WriteJSON(w io.Writer, r experiment.Result, cdf bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(toJSON(r, cdf))
}

// WriteJSONArray writes the results as one indented JSON array.
func WriteJSONArray(w io.Writer, rs []experiment.Result, cdf bool) error {
	arr := make([]summaryJSON, len(rs))
	for i, r := range rs {
		arr[i] = toJSON(r, cdf)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(arr)
}

var csvHeader = []string{
	"experiment", "label", "nodes", "alive", "timeout_min_ms", "timeout_max_ms", "heartbeat_ms",
	"latency", "disk", "loss", "prevote", "checkquorum", "trials", "timed_out", "seed",
	"min_ms", "p10_ms", "p50_ms", "mean_ms", "p90_ms", "p99_ms", "max_ms",
	"split_vote_rate", "mean_terms", "messages_per_election", "analytic_split_vote_rate",
}

// WriteCSV writes a header and one row per result.
func WriteCSV(w io.Writer, ss []experiment.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, s := range ss {
		j := toJSON(s, false)
		an := ""
		if j.Analytic != nil {
			an = f(*j.Analytic)
		}
		row := []string{
			j.Experiment, j.Label, strconv.Itoa(j.Nodes), strconv.Itoa(j.Alive),
			f(j.TimeoutMinMS), f(j.TimeoutMaxMS), f(j.HeartbeatMS),
			j.Latency, j.Disk, f(j.Loss), strconv.FormatBool(j.PreVote), strconv.FormatBool(j.CheckQuorum),
			strconv.Itoa(j.Trials), strconv.Itoa(j.TimedOut), strconv.FormatUint(j.Seed, 10),
			f(j.MinMS), f(j.P10MS), f(j.P50MS), f(j.MeanMS), f(j.P90MS), f(j.P99MS), f(j.MaxMS),
			f(j.SplitVoteRate), f(j.MeanTerms), f(j.MessagesPerElection), an,
		}
		if err := cw.Write(row); err != nil {
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
// figures.
func SummaryTable(ss []experiment.Result, paper bool) Table {
	t := Table{Header: []string{"timeout", "trials", "min", "p10", "p50", "mean", "p90", "p99", "max", "split", "terms", "msgs"}}
	if paper {
		t.Header = append(t.Header, "paper says")
	}
	for _, s := range ss {
		cap := func(d time.Duration) string {
			if s.TimedOut > 0 && d >= s.Max {
				return ">=" + fmtMS(d)
			}
			return fmtMS(d)
		}
		trials := strconv.Itoa(s.Trials)
		if s.TimedOut > 0 {
			trials += fmt.Sprintf(" (%d cut)", s.TimedOut)
		}
		row := []string{s.Label, trials, cap(s.Min), cap(s.P10), cap(s.P50), cap(s.Mean), cap(s.P90), cap(s.P99), cap(s.Max),
			fmt.Sprintf("%.1f%%", 100*s.SplitVoteRate), fmt.Sprintf("%.2f", s.MeanTerms), fmt.Sprintf("%.0f", s.MessagesPerElection)}
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
			if s.TimedOut > 0 && v >= s.Max {
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
	fmt.Fprintln(w, "The paper's figures beside the simulator's:")
	if err := WriteComparison(w, rs); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := fmt.Fprintln(w, PaperShape(rs))
	return err
}
