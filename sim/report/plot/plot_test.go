package plot

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

func TestPlot(t *testing.T) {
	ms := time.Millisecond
	result := func(label string, ts ...time.Duration) experiment.Result {
		var outs []sim.Outcome
		for _, d := range ts {
			outs = append(outs, sim.Outcome{Time: d, OK: true})
		}
		r := experiment.Failover{Setup: experiment.PaperModel()}.Result(nil)
		r.Summary = sim.Summarize(outs)
		r.Label = label
		return r
	}
	a := result("150-155ms", 150*ms, 287*ms, 300*ms)
	b := result("150-300ms", 160*ms, 190*ms)
	fig := Figure{Title: "Failover", Caption: "seed 1, 5 trials, model paper", Panels: []Panel{{Title: "top", Results: []experiment.Result{a, b}}, {Title: "bottom", Results: []experiment.Result{b}}}}
	var svg bytes.Buffer
	require.NoError(t, Write(&svg, "svg", fig))
	require.Contains(t, svg.String(), "<svg")
	require.Contains(t, svg.String(), "150-155ms")
	require.Contains(t, svg.String(), "@font-face", "fonts are embedded")
	var png bytes.Buffer
	require.NoError(t, Write(&png, "png", fig))
	require.True(t, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	var pdf bytes.Buffer
	require.NoError(t, Write(&pdf, "pdf", fig))
	require.True(t, bytes.HasPrefix(pdf.Bytes(), []byte("%PDF")))
	require.ErrorIs(t, Write(&png, "jpg", fig), ErrFormat)
	require.Error(t, Write(&png, "svg", Figure{}))
	_, err := Format("x.jpg")
	require.ErrorIs(t, err, ErrFormat)
	for name, want := range map[string]string{"X.SVG": "svg", "a.pdf": "pdf", "b.png": "png"} {
		f, err := Format(name)
		require.NoError(t, err)
		require.Equal(t, want, f)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range logTicks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	// 15-500ms: every decade plus 2 and 5 (the issue: only "100" before).
	require.Equal(t, []string{"20", "50", "100", "200", "500"}, labels(15, 500))
	// Within a decade every multiple is labelled.
	require.Equal(t, []string{"200", "300", "400", "500", "600"}, labels(150, 650))
	// Many decades: decades only.
	require.Equal(t, []string{"1", "10", "100", "1000", "10000", "100000"}, labels(1, 1e5))
	require.Nil(t, logTicks(0, 10))
}
