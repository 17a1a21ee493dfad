package plot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/raftick/raftick/sim/experiment"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrFormat is returned for a plot file name that is neither .svg nor
// .png.
var ErrFormat = errors.New("plot: file must end in .svg or .png")

// Panel is one graph of a CDF plot: a title and one line per result.
type Panel struct {
	Title   string
	Results []experiment.Result
}

// Format returns "svg" or "png" for a file name, or ErrFormat.
func Format(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("%w: %q", ErrFormat, path)
}

// WriteFile writes the panels to path, as SVG or PNG by its extension.
func WriteFile(path string, panels []Panel) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, format, panels); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write draws the panels stacked vertically, laid out like Figure 16
// of the Raft paper: x is the time without a leader in milliseconds on a
// log scale, y the cumulative percent of trials, one line per summary
// (labelled with its Label). format is "svg" or "png".
func Write(w io.Writer, format string, panels []Panel) error {
	if len(panels) == 0 {
		return errors.New("plot: nothing to plot")
	}
	width := 7 * vg.Inch
	height := vg.Length(len(panels)) * 3.6 * vg.Inch
	var canvas interface {
		vg.CanvasWriterTo
	}
	switch format {
	case "svg":
		canvas = vgsvg.New(width, height)
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(144))}
	default:
		return fmt.Errorf("%w: format %q", ErrFormat, format)
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		pl, err := cdfPlot(p)
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{pl}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadY: vg.Points(14)}
	cs := plot.Align(plots, tiles, draw.New(canvas))
	for i := range plots {
		plots[i][0].Draw(cs[i][0])
	}
	_, err := canvas.WriteTo(w)
	return err
}

func cdfPlot(p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = "time without leader (ms)"
	pl.Y.Label.Text = "cumulative percent"
	pl.X.Scale = plot.LogScale{}
	pl.X.Tick.Marker = plot.LogTicks{Prec: -1}
	pl.Y.Min, pl.Y.Max = 0, 100
	pl.Legend.Top = false
	pl.Legend.Left = false
	pl.Legend.YOffs = vg.Points(10)
	pl.Add(plotter.NewGrid())
	for i, s := range p.Results {
		cdf := s.CDF()
		if len(cdf) == 0 {
			continue
		}
		xys := make(plotter.XYs, 0, len(cdf)+1)
		first := float64(cdf[0].Time) / 1e6
		xys = append(xys, plotter.XY{X: max(first, 1e-3), Y: 0})
		for _, c := range cdf {
			xys = append(xys, plotter.XY{X: max(float64(c.Time)/1e6, 1e-3), Y: 100 * c.Fraction})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		line.Width = vg.Points(1.2)
		pl.Add(line)
		pl.Legend.Add(s.Label, line)
	}
	return pl, nil
}
