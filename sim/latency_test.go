package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
			require.True(t, errors.Is(err, ErrBadLatency))
			require.Contains(t, err.Error(), tc.wantMsg)
		})
	}
}

func TestLatencySamplesStayInRange(t *testing.T) {
	ms := time.Millisecond
	rng := rand.New(rand.NewPCG(*seedFlag, 7))
	t.Logf("seed %d; reproduce: go test ./sim -run TestLatencySamplesStayInRange -seed=%d", *seedFlag, *seedFlag)
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
	// sim: bad latency "uniform:5ms": uniform takes 2 argument(s) (lo,hi), got 1
}
