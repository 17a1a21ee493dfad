package experiment

import (
	"math"
	"time"

	"github.com/raftick/raftick/sim"
)

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// PoissonInterval returns Garwood's exact two-sided 95% confidence
// interval for the rate of a Poisson process that produced k events in
// exposure (node-hours): [G(0.025; k)/exposure, G(0.975; k+1)/exposure],
// where G(p; a) is the p-quantile of the Gamma(a, 1) distribution (the
// lower bound is 0 for k = 0). An exposure of 0 gives [0, +Inf].
func PoissonInterval(k int, exposure float64) (lo, hi float64) {
	if exposure <= 0 {
		return 0, math.Inf(1)
	}
	if k > 0 {
		lo = gammaQuantile(0.025, float64(k)) / exposure
	}
	return lo, gammaQuantile(0.975, float64(k+1)) / exposure
}

// gammaQuantile returns x with P(a, x) = p, the regularized lower
// incomplete gamma function, by bisection (to 1e-12 relative).
func gammaQuantile(p, a float64) float64 {
	lo, hi := 0.0, max(1.0, a)
	for gammaP(a, hi) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if gammaP(a, mid) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// gammaP is the regularized lower incomplete gamma function P(a, x): by
// its series for x < a+1, else by the continued fraction of Q = 1-P
// (modified Lentz).
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return sum * math.Exp(-x+a*math.Log(x)-lg)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return 1 - math.Exp(-x+a*math.Log(x)-lg)*h
}

// ObjectiveInterval returns a 95% confidence interval for the statistic
// objective (one of Objectives) of the failover times summarized by s,
// and false for hi when the interval has no upper bound within the
// sample (too few trials above the percentile, or the bound lies among
// trials cut at the time limit).
//
// For a percentile p of n measured trials it is the distribution-free
// interval between order statistics: ranks n*p -/+ 1.96 sqrt(n p (1-p))
// (the normal approximation of the binomial count below the percentile),
// rounded outwards. For the mean it is mean -/+ 1.96 sd/sqrt(n). The
// maximum has no upper bound: lo is the observed maximum.
func ObjectiveInterval(s sim.Summary, objective string) (lo, hi time.Duration, bounded bool) {
	n := s.Measured()
	if n == 0 {
		return 0, 0, false
	}
	censoredFrom := time.Duration(math.MaxInt64)
	if s.TimedOut > 0 {
		censoredFrom = s.Max
	}
	var p float64
	switch objective {
	case "max":
		return s.Max, 0, false
	case "mean":
		half := time.Duration(z95 * float64(s.StdDev()) / math.Sqrt(float64(n)))
		lo, hi = max(s.Mean-half, 0), s.Mean+half
		return lo, hi, s.TimedOut == 0
	case "p50":
		p = 0.5
	case "p90":
		p = 0.9
	case "p99":
		p = 0.99
	default:
		return 0, 0, false
	}
	np := float64(n) * p
	sd := math.Sqrt(np * (1 - p))
	l := int(math.Floor(np - z95*sd))
	u := int(math.Ceil(np+z95*sd)) + 1
	lo = s.Rank(max(l, 1))
	if u > n {
		return lo, 0, false
	}
	hi = s.Rank(u)
	return lo, hi, hi < censoredFrom
}
