// Package twosample tests whether two samples of durations come from the
// same distribution: the two-sample Kolmogorov–Smirnov test, its
// statistic from gonum's stat package and its p-value from the
// asymptotic Kolmogorov distribution. raftsim compare uses it to say
// whether two engines' failover times differ by more than noise.
package twosample

import (
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// A KSResult is a two-sample Kolmogorov–Smirnov test.
type KSResult struct {
	N, M int // the samples' sizes
	// D is the largest distance between the two empirical CDFs.
	D float64
	// P is the probability of a D at least this large if both samples
	// came from one continuous distribution (asymptotic, with Stephens'
	// correction for finite samples: accurate for N, M of a few dozen
	// and more).
	P float64
}

// Rejects reports whether the test rejects equal distributions at
// significance alpha.
func (r KSResult) Rejects(alpha float64) bool { return r.P < alpha }

// KS runs the two-sample Kolmogorov–Smirnov test on x and y (neither is
// modified). With an empty sample D is 0 and P is 1 (nothing to test).
func KS(x, y []time.Duration) KSResult {
	r := KSResult{N: len(x), M: len(y), P: 1}
	if r.N == 0 || r.M == 0 {
		return r
	}
	r.D = stat.KolmogorovSmirnov(sorted(x), nil, sorted(y), nil)
	ne := float64(r.N) * float64(r.M) / float64(r.N+r.M)
	sq := math.Sqrt(ne)
	r.P = kolmogorovQ((sq + 0.12 + 0.11/sq) * r.D)
	return r
}

func sorted(ds []time.Duration) []float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	slices.Sort(xs)
	return xs
}

// kolmogorovQ is the Kolmogorov distribution's survival function,
// Q(λ) = 2 Σ_{k>=1} (-1)^(k-1) exp(-2 k² λ²), in [0, 1].
func kolmogorovQ(lambda float64) float64 {
	if lambda < 0.2 {
		return 1 // the series converges slowly here, to 1 within 1e-9
	}
	var sum, sign = 0.0, 1.0
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*lambda*lambda)
		sum += term
		if math.Abs(term) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(max(2*sum, 0), 1)
}
