package experiment

import (
	"math"
	"time"
)

// FigurePercentiles are the percentiles Figure16Cells compares: the 10th,
// 50th, 90th and 99th of each row.
var FigurePercentiles = [4]string{"p10", "p50", "p90", "p99"}

// FigureTolerance is how close a simulated percentile must come to the
// figure's, relatively, for Figure16Cells to count the cell as agreeing.
const FigureTolerance = 0.10

// figure16 holds, per row label, the 10th, 50th, 90th and 99th
// percentiles of the measured trials behind Figure 16, in milliseconds.
//
// They are read from the plot in Ongaro's dissertation sources
// (github.com/ongardie/dissertation, leaderelection/benchmarks-randomness.svg
// and benchmarks-scale.svg; the same data as the paper's figure: they
// give its quoted 287ms median, 513ms worst case and 35ms mean). Each
// curve there is a step CDF with one step per trial, drawn at plotting
// positions (i-1/2)/n; the trial times come from the step positions,
// with the x axis calibrated on its gridlines (logarithmic in the top
// panel, linear in the bottom one), and the percentiles are nearest-rank:
// the ceil(p*n)-th smallest of the n trials (100 for 150-150ms, 1000 for
// every other row). Reading a plot costs a little precision: about 0.1%
// of the value in the top panel and 0.05ms in the bottom one.
var figure16 = map[string][4]float64{
	"150-150ms": {18730.8, 40653.5, 84054.7, 255384.4},
	"150-151ms": {434.27, 1198.13, 3131.50, 5981.42},
	"150-155ms": {119.18, 287.26, 606.34, 1224.22},
	"150-175ms": {106.72, 140.86, 290.95, 462.46},
	"150-200ms": {110.21, 146.35, 193.44, 344.73},
	"150-300ms": {124.42, 171.16, 244.01, 405.43},
	"12-24ms":   {19.72, 30.02, 52.37, 86.80},
	"25-50ms":   {30.53, 42.99, 73.33, 118.02},
	"50-100ms":  {47.47, 66.66, 95.56, 168.05},
	"100-200ms": {85.06, 120.03, 165.47, 272.83},
}

// FigureRow returns the percentiles of the measured trials behind Figure
// 16 for the row labelled label (e.g. "150-155ms"), in the order of
// FigurePercentiles, and whether the figure has that row.
func FigureRow(label string) ([4]time.Duration, bool) {
	v, ok := figure16[label]
	var out [4]time.Duration
	for i, ms := range v {
		out[i] = time.Duration(math.Round(ms * 1e6))
	}
	return out, ok
}

// FigureCell is one percentile of one row of Figure 16: the measured
// value beside the simulated one.
type FigureCell struct {
	Label     string // the row, e.g. "150-151ms"
	Stat      string // "p10", "p50", "p90" or "p99"
	Measured  time.Duration
	Simulated time.Duration
}

// Error returns the simulated value's error relative to the measured
// one, e.g. 0.31 for 31% too slow.
func (c FigureCell) Error() float64 {
	return float64(c.Simulated-c.Measured) / float64(c.Measured)
}

// Agrees reports whether the simulated value is within FigureTolerance of
// the measured one.
func (c FigureCell) Agrees() bool { return math.Abs(c.Error()) <= FigureTolerance }

// Figure16Cells returns the cells of every result whose label is a row
// of Figure 16 (each row once, so the 150-300ms row of the bottom panel,
// which repeats the top one's, is not counted twice), in order: 40 for
// the results of PaperExperiments. A result without a measured trial
// gives no cells.
func Figure16Cells(rs []Result) []FigureCell {
	var cells []FigureCell
	seen := map[string]bool{}
	for _, r := range rs {
		fig, ok := FigureRow(r.Label)
		if !ok || seen[r.Label] || r.Measured() == 0 {
			continue
		}
		seen[r.Label] = true
		sim := [4]time.Duration{r.P10, r.P50, r.P90, r.P99}
		for i, st := range FigurePercentiles {
			cells = append(cells, FigureCell{Label: r.Label, Stat: st, Measured: fig[i], Simulated: sim[i]})
		}
	}
	return cells
}
