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
		r := experiment.Failover{Setup: experiment.PaperModel()}.Result(outs)
		r.Label = label
		return r
	}
	a := result("150-155ms", 150*ms, 287*ms, 300*ms)
	b := result("150-300ms", 160*ms, 190*ms)
	panels := []Panel{{Title: "top", Results: []experiment.Result{a, b}}, {Title: "bottom", Results: []experiment.Result{b}}}
	var svg bytes.Buffer
	require.NoError(t, Write(&svg, "svg", panels))
	require.Contains(t, svg.String(), "<svg")
	require.Contains(t, svg.String(), "150-155ms")
	var png bytes.Buffer
	require.NoError(t, Write(&png, "png", panels[:1]))
	require.True(t, bytes.HasPrefix(png.Bytes(), []byte("\x89PNG")))
	require.ErrorIs(t, Write(&png, "pdf", panels), ErrFormat)
	require.Error(t, Write(&png, "svg", nil))
	_, err := Format("x.jpg")
	require.ErrorIs(t, err, ErrFormat)
	f, err := Format("X.SVG")
	require.NoError(t, err)
	require.Equal(t, "svg", f)
}
