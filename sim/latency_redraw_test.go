package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
)

// TestNormalRedraw: a redrawn normal has no mass at 0, its sample mean
// is its analytic mean (E[X | X >= 0]), and its spec round-trips; the
// default form clamps, as it always did.
func TestNormalRedraw(t *testing.T) {
	seed := testseed.Seed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	ms := time.Millisecond
	redraw, err := ParseLatency("normal:5ms,3ms,redraw")
	require.NoError(t, err)
	require.Equal(t, "normal:5ms,3ms,redraw", redraw.String())
	require.Equal(t, NormalRedraw(5*ms, 3*ms), redraw)
	clamp, err := ParseLatency("normal:5ms,3ms,clamp")
	require.NoError(t, err)
	require.Equal(t, Normal(5*ms, 3*ms), clamp)
	require.Equal(t, "normal:5ms,3ms", clamp.String())

	const n = 200000
	var zerosClamp, zerosRedraw int
	var sum float64
	for range n {
		if clamp.Sample(rng) == 0 {
			zerosClamp++
		}
		d := redraw.Sample(rng)
		if d == 0 {
			zerosRedraw++
		}
		sum += float64(d)
	}
	require.InDelta(t, 0.048, float64(zerosClamp)/n, 0.003, "Phi(-5/3) of the clamped draws are 0")
	require.Zero(t, zerosRedraw)
	// E[X | X >= 0] = 5 + 3 phi(5/3)/Phi(5/3) = 5.3134ms.
	require.InDelta(t, 5.3134e6, float64(Mean(redraw)), 1e3)
	require.InDelta(t, float64(Mean(redraw)), sum/n, 0.01*float64(Mean(redraw)))

	_, err = ParseLatency("normal:5ms,3ms,bounce")
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.ErrorContains(t, err, "redraw or clamp")
	// A negative mean keeps half the draws (it is treated as 0).
	require.Equal(t, NormalRedraw(0, ms), NormalRedraw(-ms, ms))
}
