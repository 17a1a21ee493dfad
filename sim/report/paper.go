package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/raftick/raftick/sim/experiment"
)

// paperJSON is one figure the paper quotes, with the simulator's, in a
// result record.
type paperJSON struct {
	Stat     string  `json:"stat"`
	Relation string  `json:"relation"`
	MS       float64 `json:"ms"`
	SimMS    float64 `json:"sim_ms"`
}

// WriteComparison writes the paper's quoted figures next to the
// simulator's, one line each.
func WriteComparison(w io.Writer, ss []experiment.Result) error {
	t := Table{Header: []string{"range", "statistic", "paper", "simulated"}}
	for _, s := range ss {
		for _, f := range s.Paper {
			if !f.Quoted() {
				continue
			}
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
	if _, err := fmt.Fprintln(w, PaperShape(rs)); err != nil {
		return err
	}
	return WriteFigureAgreement(w, rs)
}

// WriteFigureAgreement writes how many percentiles (p10, p50, p90, p99 of
// each row) of rs come within experiment.FigureTolerance of the measured
// trials behind Figure 16, and lists the others.
func WriteFigureAgreement(w io.Writer, rs []experiment.Result) error {
	cells := experiment.Figure16Cells(rs)
	if len(cells) == 0 {
		return nil
	}
	agree := 0
	var off []string
	for _, c := range cells {
		if c.Agrees() {
			agree++
			continue
		}
		off = append(off, fmt.Sprintf("%s %s %s vs %s (%+.0f%%)", c.Label, c.Stat, fmtMS(c.Simulated), fmtMS(c.Measured), 100*c.Error()))
	}
	_, err := fmt.Fprintf(w, "figure's data (p10 p50 p90 p99 of each row): %d of %d within %.0f%%\n", agree, len(cells), 100*experiment.FigureTolerance)
	for i := 0; err == nil && i < len(off); i += 3 {
		_, err = fmt.Fprintf(w, "  off: %s\n", strings.Join(off[i:min(i+3, len(off))], "; "))
	}
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
