package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
)

func TestParseLatency(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		spec, want string
		mean       time.Duration
	}{
		{"fixed:5ms", "fixed:5ms", 5 * ms},
		{"5ms", "fixed:5ms", 5 * ms},
		{" Fixed: 5ms ", "fixed:5ms", 5 * ms},
		{"fixed:0", "fixed:0s", 0},
		{"uniform:1ms,5ms", "uniform:1ms,5ms", 3 * ms},
		{"uniform:2ms,2ms", "uniform:2ms,2ms", 2 * ms},
		{"normal:5ms,2ms", "normal:5ms,2ms", 5004008},
		{"normal:5ms,0s", "normal:5ms,0s", 5 * ms},
		{"lognormal:5ms,0.5", "lognormal:5ms,0.5", 5665742},
		{"empirical:1ms,2ms,7ms", "empirical:1ms,2ms,7ms", 3333333},
		{"empirical:250µs", "empirical:250µs", 250 * time.Microsecond},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			l, err := ParseLatency(tc.spec)
			require.NoError(t, err)
			require.Equal(t, tc.want, l.String())
			again, err := ParseLatency(l.String())
			require.NoError(t, err, "String must parse back")
			require.Equal(t, l, again)
			require.InDelta(t, float64(tc.mean), float64(Mean(l)), float64(time.Microsecond))
		})
	}
}

func TestParseLatencyErrors(t *testing.T) {
	for _, tc := range []struct{ spec, wantMsg string }{
		{"", "empty spec"},
		{"bogus", "want kind:args"},
		{"gauss:5ms,1ms", `unknown kind "gauss"`},
		{"fixed:", "fixed takes 1 argument"},
		{"fixed:1ms,2ms", "fixed takes 1 argument"},
		{"fixed:-1ms", "must not be negative"},
		{"-1ms", "must not be negative"},
		{"fixed:fast", `duration "fast" is not a duration`},
		{"uniform:5ms", "uniform takes 2 argument"},
		{"uniform:5ms,1ms", "hi 1ms is below lo 5ms"},
		{"normal:5ms,x", `stddev "x" is not a duration`},
		{"lognormal:5ms,abc", `sigma "abc" is not a number`},
		{"lognormal:5ms,-1", "sigma -1 must not be negative"},
		{"lognormal:5ms,NaN", "is not a number"},
		{"empirical:", "at least one duration"},
		{"empirical:1ms,,2ms", `observation 2 "" is not a duration`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := ParseLatency(tc.spec)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrInvalidConfig))
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.spec, fe.Value)
			require.Contains(t, err.Error(), tc.wantMsg)
		})
	}
}

func TestLatencySamplesStayInRange(t *testing.T) {
	ms := time.Millisecond
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 7))
	for _, tc := range []struct {
		l      Latency
		lo, hi time.Duration
	}{
		{Fixed(3 * ms), 3 * ms, 3 * ms},
		{Fixed(-3 * ms), 0, 0},
		{Uniform(1*ms, 5*ms), 1 * ms, 5 * ms},
		{Uniform(5*ms, 1*ms), 1 * ms, 5 * ms},
		{Normal(1*ms, 5*ms), 0, time.Hour},
		{LogNormal(2*ms, 1), 0, time.Hour},
		{LogNormal(-2*ms, 1), 0, 0},
		{Empirical([]time.Duration{1 * ms, 7 * ms}), 1 * ms, 7 * ms},
		{Empirical(nil), 0, 0},
	} {
		seen := map[time.Duration]bool{}
		for range 2000 {
			d := tc.l.Sample(rng)
			require.GreaterOrEqual(t, d, tc.lo, tc.l.String())
			require.LessOrEqual(t, d, tc.hi, tc.l.String())
			seen[d] = true
		}
		if tc.hi > tc.lo {
			require.Greater(t, len(seen), 1, "%s never varies", tc.l)
		}
	}
	// A truncated normal puts the clipped mass at 0 and keeps its mean.
	n := Normal(1*ms, 5*ms)
	var sum float64
	zeros := 0
	for range 100000 {
		d := n.Sample(rng)
		sum += float64(d)
		if d == 0 {
			zeros++
		}
	}
	require.InDelta(t, 0.42, float64(zeros)/100000, 0.01) // Phi(-0.2)
	require.InDelta(t, float64(Mean(n)), sum/100000, float64(50*time.Microsecond))
}

// TestLatencySaturates: extreme specs never panic, never draw a negative
// duration, and their means do not overflow (uniform over the whole
// range must not overflow Int64N's bound; a normal with a mean near the
// top of the range must not sample negative delays).
func TestLatencySaturates(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 8))
	for _, spec := range []string{
		"uniform:0ns,9223372036854775807ns",
		"uniform:9223372036854775807ns,9223372036854775807ns",
		"normal:2562047h,1000h",
		"normal:9223372036854775807ns,9223372036854775807ns",
		"lognormal:2562047h,5",
		"empirical:9223372036854775807ns,0s",
	} {
		t.Run(spec, func(t *testing.T) {
			l, err := ParseLatency(spec)
			require.NoError(t, err)
			for range 1000 {
				require.GreaterOrEqual(t, l.Sample(rng), time.Duration(0))
			}
			require.GreaterOrEqual(t, Mean(l), time.Duration(0))
			require.GreaterOrEqual(t, Typical(l), time.Duration(0))
		})
	}
	require.Equal(t, time.Duration(math.MaxInt64), addSat(math.MaxInt64-5, 10))
	require.Equal(t, 15*time.Nanosecond, addSat(5, 10))
	require.Equal(t, time.Duration(math.MaxInt64), durationOf(1e300))
	require.Equal(t, time.Duration(0), durationOf(math.NaN()))
	require.Equal(t, 5*ms, Typical(Uniform(ms, 5*ms)))
	require.Equal(t, 7*ms, Typical(Empirical([]time.Duration{ms, 7 * ms})))
	require.Equal(t, Mean(Normal(5*ms, ms)), Typical(Normal(5*ms, ms)))
}

func ExampleParseLatency() {
	l, err := ParseLatency("normal:5ms,2ms")
	if err != nil {
		panic(err)
	}
	fmt.Println(l, Mean(l))
	_, err = ParseLatency("uniform:5ms")
	fmt.Println(err)
	// Output:
	// normal:5ms,2ms 5.004008ms
	// sim: invalid config: "uniform:5ms": uniform takes 2 argument(s) (lo,hi), got 1
}
