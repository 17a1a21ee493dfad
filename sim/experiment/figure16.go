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
// percentiles of the measured trials behind Figure 16, in milliseconds:
// nearest-rank, the ceil(p*n)-th smallest of the row's n trials (100 for
// 150-150ms, 1000 for every other row).
//
// The trial times are Ongaro's measurements as Howard et al. published
// them beside their own (github.com/heidihoward/ocaml-raft-data,
// raw/usableFormat.csv, their "diago" data: per row, every trial's time
// at its plotting position (i-1/2)/n). The plot in Ongaro's dissertation
// sources (leaderelection/benchmarks-randomness.svg and
// benchmarks-scale.svg, one step per trial) gives the same percentiles
// within 0.02%, and the paper's quoted figures: the 287ms median of
// 150-155ms, the 513ms worst case of 150-200ms, the 35ms mean and 152ms
// worst case of 12-24ms.
var figure16 = map[string][4]float64{
	"150-150ms": {18731.159, 40655.797, 84061.919, 255423.751},
	"150-151ms": {434.299, 1198.159, 3131.658, 5981.708},
	"150-155ms": {119.178, 287.268, 606.351, 1224.214},
	"150-175ms": {106.717, 140.867, 290.951, 462.494},
	"150-200ms": {110.208, 146.357, 193.445, 344.745},
	"150-300ms": {124.423, 171.170, 244.016, 405.422},
	"12-24ms":   {19.711, 30.014, 52.361, 86.796},
	"25-50ms":   {30.531, 42.985, 73.328, 118.011},
	"50-100ms":  {47.461, 66.652, 95.555, 168.042},
	"100-200ms": {85.050, 120.031, 165.461, 272.822},
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
