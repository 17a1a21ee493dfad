package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim/experiment"
)

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
		if !s.MessagesMeasured() {
			row[13] = "-"
		}
		if paper {
			var q []string
			for _, f := range s.Paper {
				if f.Quoted() { // the figure's percentiles have their own summary
					q = append(q, describeFigure(f))
				}
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
		row := []string{
			strconv.Itoa(s.Setup.Nodes), strconv.Itoa(s.Alive), strconv.FormatFloat(s.LatencyFraction, 'g', -1, 64), s.Model,
			strconv.Itoa(s.Trials), fmt.Sprintf("%.3f%%", 100*s.SplitVoteRate), an, diff, fmt.Sprintf("%.3fpp", 100*se),
		}
		if s.Trials == 0 { // a row that never ran (interrupted) measured nothing
			row[5], row[7], row[8] = "-", "-", "-"
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
