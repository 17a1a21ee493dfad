package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/raftick/raftick/sim/experiment"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// ErrFormat is returned for a figure file name that is not .pdf, .svg or
// .png.
var ErrFormat = errors.New("plot: file must end in .pdf, .svg or .png")

// Panel is one graph of a figure: a short title (may be empty) and one
// line per result.
type Panel struct {
	Title   string
	Results []experiment.Result
}

// Figure is what WriteFile draws: a short title above the panels, the
// panels stacked vertically, and a caption line below them that says what
// the figure is of (seed, trials, model; wrapped to the figure's width).
type Figure struct {
	Title   string
	Caption string
	Panels  []Panel
}

// Format returns "pdf", "svg" or "png" for a file name, or ErrFormat.
func Format(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pdf":
		return "pdf", nil
	case ".svg":
		return "svg", nil
	case ".png":
		return "png", nil
	}
	return "", fmt.Errorf("%w: %q", ErrFormat, path)
}

// WriteFile writes the figure to path, as PDF, SVG or PNG by its
// extension.
func WriteFile(path string, fig Figure) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, format, fig); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Figure geometry and type: 6.5in wide (a page's text width), Liberation
// Serif (metrically Times), embedded in PDF and SVG.
const (
	figWidth    = 6.5 * vg.Inch
	panelHeight = 3.2 * vg.Inch
	titleSize   = 12
	captionSize = 8.5
	labelSize   = 10
	tickSize    = 8.5
	legendSize  = 8.5
	margin      = 6
)

// palette is the Okabe-Ito colour-blind-safe palette (without its
// yellow, too light on white), and dashes the line patterns cycled with
// it, so that every series of a panel differs in colour and in pattern.
var (
	palette = []color.Color{
		color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
		color.RGBA{0xe6, 0x9f, 0x00, 0xff}, // orange
		color.RGBA{0x56, 0xb4, 0xe9, 0xff}, // sky blue
		color.RGBA{0x00, 0x9e, 0x73, 0xff}, // bluish green
		color.RGBA{0x00, 0x72, 0xb2, 0xff}, // blue
		color.RGBA{0xd5, 0x5e, 0x00, 0xff}, // vermillion
		color.RGBA{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	}
	dashes = [][]vg.Length{
		nil,
		{vg.Points(6), vg.Points(2)},
		{vg.Points(2), vg.Points(2)},
		{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)},
		{vg.Points(10), vg.Points(3)},
		{vg.Points(1), vg.Points(1.5)},
		{vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2), vg.Points(1.5), vg.Points(2)},
	}
)

// style is the figure's text style at size, centred under its point.
// (Regular weight only: gonum's PDF writer cannot embed the bold face.)
func style(size vg.Length) text.Style {
	f := plot.DefaultFont
	return text.Style{Color: color.Black, Font: font.From(f, size), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
}

// Write draws the figure: the title, the panels stacked vertically (x
// the time without a leader in milliseconds on a log scale with a tick
// every decade and labelled minor ticks, y the cumulative percent of
// trials, one line per result, labelled with its Label), and the caption.
// format is "pdf", "svg" or "png" (144 dpi).
func Write(w io.Writer, format string, fig Figure) error {
	if len(fig.Panels) == 0 {
		return errors.New("plot: nothing to plot")
	}
	capStyle := style(captionSize)
	capStyle.XAlign = draw.XLeft
	capLines := wrap(fig.Caption, capStyle, figWidth-2*vg.Points(margin))
	lineH := capStyle.Height("Mg") * 1.15
	titleH := vg.Length(0)
	if fig.Title != "" {
		titleH = style(titleSize).Height(fig.Title) + vg.Points(8)
	}
	capH := vg.Length(len(capLines))*lineH + vg.Points(6)
	height := vg.Length(len(fig.Panels))*panelHeight + titleH + capH + 2*vg.Points(margin)

	var canvas vg.CanvasWriterTo
	switch format {
	case "pdf":
		c := vgpdf.New(figWidth, height)
		c.EmbedFonts(true)
		canvas = pdfCanvas{c}
	case "svg":
		canvas = svgCanvas{vgsvg.NewWith(vgsvg.UseWH(figWidth, height), vgsvg.EmbedFonts(true))}
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figWidth, height), vgimg.UseDPI(144))}
	default:
		return fmt.Errorf("%w: format %q", ErrFormat, format)
	}
	dc := draw.New(canvas)
	// White background (PNG is transparent otherwise).
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	top := dc.Max.Y - vg.Points(margin)
	if fig.Title != "" {
		dc.FillText(style(titleSize), vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: top}, fig.Title)
	}
	y := dc.Min.Y + vg.Points(margin) + capH - vg.Points(6)
	for _, l := range capLines {
		dc.FillText(capStyle, vg.Point{X: dc.Min.X + vg.Points(margin), Y: y}, l)
		y -= lineH
	}

	plots := make([][]*plot.Plot, len(fig.Panels))
	for i, p := range fig.Panels {
		pl, err := cdfPlot(p)
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{pl}
	}
	area := draw.Crop(dc, 0, 0, capH+vg.Points(margin), -(titleH + vg.Points(margin)))
	tiles := draw.Tiles{Rows: len(fig.Panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(margin), PadRight: vg.Points(14), PadY: vg.Points(16)}
	cs := plot.Align(plots, tiles, area)
	for i := range plots {
		plots[i][0].Draw(cs[i][0])
	}
	_, err := canvas.WriteTo(w)
	return err
}

// wrap breaks s into lines no wider than width in sty.
func wrap(s string, sty text.Style, width vg.Length) []string {
	if s == "" {
		return nil
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && sty.Width(try) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	return append(lines, line)
}

func cdfPlot(p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.BackgroundColor = color.Transparent
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font = font.From(plot.DefaultFont, labelSize)
	pl.X.Label.Text = "time without leader (ms, log scale)"
	pl.Y.Label.Text = "cumulative % of trials"
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Label.TextStyle.Font = font.From(plot.DefaultFont, labelSize)
		ax.Tick.Label.Font = font.From(plot.DefaultFont, tickSize)
	}
	pl.X.Scale = plot.LogScale{}
	pl.Y.Min, pl.Y.Max = 0, 100
	pl.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for v := 0.0; v <= 100; v += 10 {
			l := ""
			if int(v)%20 == 0 {
				l = strconv.Itoa(int(v))
			}
			ts = append(ts, plot.Tick{Value: v, Label: l})
		}
		return ts
	})
	pl.Legend.Top = false
	pl.Legend.Left = false
	pl.Legend.XOffs = -vg.Points(18)
	pl.Legend.YOffs = vg.Points(8)
	pl.Legend.TextStyle.Font = font.From(plot.DefaultFont, legendSize)
	pl.Legend.ThumbnailWidth = vg.Points(28)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xdd}
	grid.Horizontal.Color = color.Gray{0xdd}
	pl.Add(grid)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range p.Results {
		cdf := s.CDF()
		if len(cdf) == 0 {
			continue
		}
		xys := make(plotter.XYs, 0, len(cdf)+1)
		first := max(float64(cdf[0].Time)/1e6, 1e-3)
		xys = append(xys, plotter.XY{X: first, Y: 0})
		for _, c := range cdf {
			xys = append(xys, plotter.XY{X: max(float64(c.Time)/1e6, 1e-3), Y: 100 * c.Fraction})
		}
		lo, hi = min(lo, first), max(hi, xys[len(xys)-1].X)
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		line.StepStyle = plotter.PostStep
		line.Color = palette[i%len(palette)]
		line.Dashes = dashes[i%len(dashes)]
		line.Width = vg.Points(1.4)
		pl.Add(line)
		label := s.Label
		if s.TimedOut > 0 {
			label += fmt.Sprintf(" (%d cut)", s.TimedOut)
		}
		pl.Legend.Add(label, line)
	}
	if !math.IsInf(lo, 1) {
		if hi <= lo {
			lo, hi = lo/1.5, hi*1.5
		}
		// A little room on both sides, on the log scale.
		pad := math.Pow(hi/lo, 0.03)
		pl.X.Min, pl.X.Max = lo/pad, hi*pad
	}
	pl.X.Tick.Marker = plot.TickerFunc(logTicks)
	return pl, nil
}

// logTicks marks every decade (labelled) and its multiples 2..9 (minor
// ticks). Minor ticks are labelled too when the axis spans few decades,
// so that every axis has at least a few labels: all of them within one
// decade, 2 and 5 up to three decades, none beyond.
func logTicks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	span := math.Log10(hi / lo)
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		dec := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * dec
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			label := ""
			switch {
			case m == 1, span <= 1.2, span <= 3.2 && (m == 2 || m == 5):
				label = tickLabel(v)
			}
			ts = append(ts, plot.Tick{Value: v, Label: label})
		}
	}
	return ts
}

// tickLabel formats a tick value in milliseconds: "0.5", "20", "1000".
func tickLabel(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// pdfCanvas writes text in the PDF's single-byte encoding (Windows-1252,
// which has µ and the other Latin-1 letters); gonum's PDF canvas writes
// a string's UTF-8 bytes, which a viewer shows as two letters each.
type pdfCanvas struct{ *vgpdf.Canvas }

func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, latin1(s))
}

// latin1 returns s with every rune below 256 as one byte (others as '?').
func latin1(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// svgCanvas names fallbacks after the embedded font: a viewer that
// ignores embedded fonts picks a metrically identical Times before any
// serif, so that text keeps its measured width and nothing overlaps.
type svgCanvas struct{ *vgsvg.Canvas }

func (c svgCanvas) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := c.Canvas.WriteTo(&b); err != nil {
		return 0, err
	}
	out := bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Serif;"),
		[]byte("font-family:'Liberation Serif','Times New Roman',Times,serif;"))
	n, err := w.Write(out)
	return int64(n), err
}
