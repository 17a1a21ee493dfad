package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Latency is a distribution of durations: one-way network delays, disk
// write times, processing times. Sample draws one value from rng; it never
// returns a negative duration, and the distributions of this package
// saturate at the largest Duration instead of overflowing. String returns the spec ParseLatency accepts,
// so a Latency prints in the form the command line takes.
//
// Implementations are immutable values, safe for concurrent use as long as
// each goroutine passes its own rng.
type Latency interface {
	Sample(rng *rand.Rand) time.Duration
	String() string
}

// addSat returns a+b for non-negative durations, saturating at the
// largest Duration instead of wrapping into the past.
func addSat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// durationOf converts a non-negative float number of nanoseconds to a
// Duration, saturating: NaN and values <= 0 give 0, values beyond the
// range give the largest Duration.
func durationOf(ns float64) time.Duration {
	switch {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(ns)
}

type fixed struct{ d time.Duration }

// Fixed returns a latency that is always d (negative d is treated as 0).
func Fixed(d time.Duration) Latency { return fixed{max(d, 0)} }

func (f fixed) Sample(*rand.Rand) time.Duration { return f.d }
func (f fixed) String() string                  { return "fixed:" + fmtDur(f.d) }

type uniform struct{ lo, hi time.Duration }

// Uniform returns a latency drawn uniformly from [lo, hi]. Negative bounds
// are clamped to 0; if hi < lo the bounds are swapped.
func Uniform(lo, hi time.Duration) Latency {
	lo, hi = max(lo, 0), max(hi, 0)
	if hi < lo {
		lo, hi = hi, lo
	}
	return uniform{lo, hi}
}

func (u uniform) Sample(rng *rand.Rand) time.Duration {
	if u.hi == u.lo {
		return u.lo
	}
	return u.lo + time.Duration(rng.Uint64N(uint64(u.hi-u.lo)+1))
}
func (u uniform) String() string { return "uniform:" + fmtDur(u.lo) + "," + fmtDur(u.hi) }

type normal struct {
	mean, stddev time.Duration
	redraw       bool
}

// Normal returns a normal latency with the given mean and standard
// deviation, truncated at 0 (a draw below 0 counts as 0, as a message
// cannot arrive before it is sent). A negative stddev is treated as 0.
// With stddev comparable to the mean this puts a mass at 0 (about 5 % of
// draws at normal:5ms,3ms); NormalRedraw draws again instead.
func Normal(mean, stddev time.Duration) Latency { return normal{mean, max(stddev, 0), false} }

// NormalRedraw returns a normal latency with the given mean and standard
// deviation conditioned on being non-negative: a negative draw is thrown
// away and drawn again (the truncated normal simulators such as Howard
// et al.'s use), so no mass piles up at 0. A negative mean is treated as
// 0, so that at least half the draws are kept; after 64 rejections in a
// row (probability 2^-64) the draw counts as 0. A negative stddev is
// treated as 0.
func NormalRedraw(mean, stddev time.Duration) Latency {
	return normal{max(mean, 0), max(stddev, 0), true}
}

func (n normal) Sample(rng *rand.Rand) time.Duration {
	x := float64(n.mean) + rng.NormFloat64()*float64(n.stddev)
	for i := 0; n.redraw && x < 0 && i < 64; i++ {
		x = float64(n.mean) + rng.NormFloat64()*float64(n.stddev)
	}
	return durationOf(x)
}

func (n normal) String() string {
	s := "normal:" + fmtDur(n.mean) + "," + fmtDur(n.stddev)
	if n.redraw {
		s += ",redraw"
	}
	return s
}

type logNormal struct {
	median time.Duration
	sigma  float64
}

// LogNormal returns a log-normal latency: exp(N(ln median, sigma²)). Its
// median is median and sigma is the standard deviation of the logarithm
// (0.5 gives a moderately heavy right tail). Negative sigma is treated
// as 0; a non-positive median gives 0.
func LogNormal(median time.Duration, sigma float64) Latency {
	if sigma < 0 || math.IsNaN(sigma) {
		sigma = 0
	}
	return logNormal{max(median, 0), sigma}
}

func (l logNormal) Sample(rng *rand.Rand) time.Duration {
	if l.median <= 0 {
		return 0
	}
	return durationOf(float64(l.median) * math.Exp(l.sigma*rng.NormFloat64()))
}
func (l logNormal) String() string {
	return "lognormal:" + fmtDur(l.median) + "," + strconv.FormatFloat(l.sigma, 'g', -1, 64)
}

type empirical struct{ ds []time.Duration }

// Empirical returns a latency drawn uniformly from the given observations
// (resampling, as a bootstrap does). Negative observations are clamped to 0.
// With no observations it is always 0.
func Empirical(ds []time.Duration) Latency {
	c := make([]time.Duration, len(ds))
	for i, d := range ds {
		c[i] = max(d, 0)
	}
	return empirical{c}
}

func (e empirical) Sample(rng *rand.Rand) time.Duration {
	switch len(e.ds) {
	case 0:
		return 0
	case 1:
		return e.ds[0]
	}
	return e.ds[rng.IntN(len(e.ds))]
}
func (e empirical) String() string {
	parts := make([]string, len(e.ds))
	for i, d := range e.ds {
		parts[i] = fmtDur(d)
	}
	return "empirical:" + strings.Join(parts, ",")
}

// Mean returns the mean of l: exact for the distributions of this package
// (the truncated normal's mean accounts for the mass clipped at 0), and the
// average of 10,000 seeded draws for other implementations.
func Mean(l Latency) time.Duration {
	switch v := l.(type) {
	case nil:
		return 0
	case fixed:
		return v.d
	case uniform:
		return v.lo + (v.hi-v.lo)/2
	case normal:
		if v.stddev == 0 {
			return max(v.mean, 0)
		}
		// E[max(X,0)] for X ~ N(mu, s²) = mu*Phi(mu/s) + s*phi(mu/s);
		// redrawn, E[X | X >= 0] = mu + s*phi(mu/s)/Phi(mu/s).
		mu, s := float64(v.mean), float64(v.stddev)
		z := mu / s
		phi := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
		Phi := 0.5 * math.Erfc(-z/math.Sqrt2)
		if v.redraw {
			return durationOf(mu + s*phi/Phi)
		}
		return durationOf(mu*Phi + s*phi)
	case logNormal:
		return durationOf(float64(v.median) * math.Exp(v.sigma*v.sigma/2))
	case empirical:
		if len(v.ds) == 0 {
			return 0
		}
		var sum float64
		for _, d := range v.ds {
			sum += float64(d)
		}
		return durationOf(sum / float64(len(v.ds)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sum float64
	const n = 10000
	for range n {
		sum += float64(l.Sample(rng))
	}
	return durationOf(sum / n)
}

// Typical returns the largest value l draws if it has one (fixed,
// uniform, empirical), else its mean (normal, log-normal, other
// implementations): the delay a model stands for, which configurations
// compare with their time limits.
func Typical(l Latency) time.Duration {
	switch v := l.(type) {
	case uniform:
		return v.hi
	case empirical:
		return slices.Max(append([]time.Duration{0}, v.ds...))
	}
	return Mean(l)
}

// ParseLatency parses a latency spec:
//
//	fixed:5ms             always 5ms (a bare duration such as "5ms" means the same)
//	uniform:1ms,5ms       uniform in [1ms, 5ms]
//	normal:5ms,2ms        normal, mean 5ms, standard deviation 2ms; a negative draw counts as 0
//	normal:5ms,2ms,redraw the same, but a negative draw is drawn again (",clamp" is the default)
//	lognormal:5ms,0.5     log-normal, median 5ms, sigma 0.5 (of the logarithm)
//	empirical:1ms,2ms,7ms each observation equally likely
//
// Durations use time.ParseDuration's syntax and must not be negative.
// Errors are *FieldError (with no Field: Value is the spec) wrapping
// ErrInvalidConfig, and say what is wrong with the spec.
func ParseLatency(s string) (Latency, error) {
	bad := func(format string, args ...any) error { return fieldErr("", s, format, args...) }
	spec := strings.TrimSpace(s)
	kind, args, hasColon := strings.Cut(spec, ":")
	kind = strings.ToLower(strings.TrimSpace(kind))
	if !hasColon {
		if d, err := time.ParseDuration(kind); err == nil {
			if d < 0 {
				return nil, bad("duration must not be negative")
			}
			return Fixed(d), nil
		}
		if spec == "" {
			return nil, bad("empty spec (want e.g. fixed:5ms, uniform:1ms,5ms, normal:5ms,2ms, lognormal:5ms,0.5 or empirical:1ms,2ms)")
		}
		return nil, bad("want kind:args, e.g. normal:5ms,2ms")
	}
	var fields []string
	if strings.TrimSpace(args) != "" {
		fields = strings.Split(args, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
	}
	want := func(n int, form string) error {
		if len(fields) != n {
			return bad("%s takes %d argument(s) (%s), got %d", kind, n, form, len(fields))
		}
		return nil
	}
	dur := func(i int, name string) (time.Duration, error) {
		d, err := time.ParseDuration(fields[i])
		if err != nil {
			return 0, bad("%s %q is not a duration (e.g. 5ms)", name, fields[i])
		}
		if d < 0 {
			return 0, bad("%s %v must not be negative", name, d)
		}
		return d, nil
	}
	switch kind {
	case "fixed":
		if err := want(1, "duration"); err != nil {
			return nil, err
		}
		d, err := dur(0, "duration")
		if err != nil {
			return nil, err
		}
		return Fixed(d), nil
	case "uniform":
		if err := want(2, "lo,hi"); err != nil {
			return nil, err
		}
		lo, err := dur(0, "lo")
		if err != nil {
			return nil, err
		}
		hi, err := dur(1, "hi")
		if err != nil {
			return nil, err
		}
		if hi < lo {
			return nil, bad("hi %v is below lo %v", hi, lo)
		}
		return Uniform(lo, hi), nil
	case "normal":
		redraw := false
		if len(fields) == 3 {
			switch strings.ToLower(fields[2]) {
			case "redraw":
				redraw = true
			case "clamp":
			default:
				return nil, bad("normal's third argument %q must be redraw or clamp (what a negative draw becomes; clamp, to 0, is the default)", fields[2])
			}
			fields = fields[:2]
		}
		if err := want(2, "mean,stddev[,redraw]"); err != nil {
			return nil, err
		}
		m, err := dur(0, "mean")
		if err != nil {
			return nil, err
		}
		sd, err := dur(1, "stddev")
		if err != nil {
			return nil, err
		}
		if redraw {
			return NormalRedraw(m, sd), nil
		}
		return Normal(m, sd), nil
	case "lognormal":
		if err := want(2, "median,sigma"); err != nil {
			return nil, err
		}
		m, err := dur(0, "median")
		if err != nil {
			return nil, err
		}
		sigma, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || math.IsNaN(sigma) || math.IsInf(sigma, 0) {
			return nil, bad("sigma %q is not a number (e.g. 0.5)", fields[1])
		}
		if sigma < 0 {
			return nil, bad("sigma %v must not be negative", sigma)
		}
		return LogNormal(m, sigma), nil
	case "empirical":
		if len(fields) == 0 {
			return nil, bad("empirical needs at least one duration")
		}
		ds := make([]time.Duration, len(fields))
		for i := range fields {
			d, err := dur(i, fmt.Sprintf("observation %d", i+1))
			if err != nil {
				return nil, err
			}
			ds[i] = d
		}
		return Empirical(ds), nil
	}
	return nil, bad("unknown kind %q (want fixed, uniform, normal, lognormal or empirical)", kind)
}

// fmtDur formats d compactly and exactly (time.Duration.String, which
// ParseDuration reads back).
func fmtDur(d time.Duration) string { return d.String() }
