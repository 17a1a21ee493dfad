package twosample

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKolmogorovQ: known values of the Kolmogorov distribution (its
// 0.05 and 0.01 critical values, 1.358 and 1.628).
func TestKolmogorovQ(t *testing.T) {
	require.InDelta(t, 0.05, kolmogorovQ(1.3581), 1e-3)
	require.InDelta(t, 0.01, kolmogorovQ(1.6276), 1e-3)
	require.Equal(t, 1.0, kolmogorovQ(0))
	require.Less(t, kolmogorovQ(5), 1e-12)
}

// TestKS: samples of one distribution are not rejected, a shift of half
// a standard deviation is, and empty samples test nothing.
func TestKS(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, shift float64) []time.Duration {
		xs := make([]time.Duration, n)
		for i := range xs {
			xs[i] = time.Duration((10 + shift + rng.NormFloat64()) * float64(time.Millisecond))
		}
		return xs
	}
	same := KS(draw(1000, 0), draw(1200, 0))
	require.False(t, same.Rejects(0.01), "%+v", same)
	require.Equal(t, 1000, same.N)
	shifted := KS(draw(1000, 0), draw(1000, 0.5))
	require.True(t, shifted.Rejects(0.01), "%+v", shifted)
	require.InDelta(t, 0.2, shifted.D, 0.06)
	require.Equal(t, KSResult{N: 0, M: 3, P: 1}, KS(nil, draw(3, 0)))
}

// TestKSPValue: two samples of 1,000 whose CDFs are 0.05 apart have the
// p-value of the asymptotic distribution with Stephens' correction
// (λ = (√500 + 0.12 + 0.11/√500)·0.05 = 1.1243, Q(λ) = 0.1596).
func TestKSPValue(t *testing.T) {
	x, y := make([]time.Duration, 1000), make([]time.Duration, 1000)
	for i := range x {
		x[i], y[i] = time.Duration(i), time.Duration(i+50)
	}
	r := KS(x, y)
	require.InDelta(t, 0.05, r.D, 1e-12)
	require.InDelta(t, 0.1596, r.P, 1e-3)
}
