package experiment

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
)

func TestPoissonIntervalGarwood(t *testing.T) {
	// Reference values of the exact (Garwood) 95% interval for a count.
	for _, tc := range []struct {
		k      int
		lo, hi float64
	}{{0, 0, 3.688879}, {1, 0.025318, 5.571643}, {4, 1.089865, 10.24159}, {10, 4.795389, 18.39036}} {
		lo, hi := PoissonInterval(tc.k, 1)
		require.InDelta(t, tc.lo, lo, 1e-5, "k=%d", tc.k)
		require.InDelta(t, tc.hi, hi, 1e-4, "k=%d", tc.k)
	}
	lo, hi := PoissonInterval(2, 5)
	require.InDelta(t, 0.242209/5, lo, 1e-6)
	require.InDelta(t, 7.224688/5, hi, 1e-5)
	_, hi = PoissonInterval(0, 0)
	require.True(t, hi > 1e300)
}

func TestObjectiveInterval(t *testing.T) {
	var outs []sim.Outcome
	for i := 1; i <= 1000; i++ {
		outs = append(outs, sim.Outcome{Time: time.Duration(i) * time.Millisecond, Terms: 1, OK: true})
	}
	s := sim.Summarize(outs)
	lo, hi, ok := ObjectiveInterval(s, "p50")
	require.True(t, ok)
	// n=1000, p=0.5: ranks 500 -/+ 31 -> [469, 532].
	require.Equal(t, 469*time.Millisecond, lo)
	require.Equal(t, 532*time.Millisecond, hi)
	lo, hi, ok = ObjectiveInterval(s, "p99")
	require.True(t, ok)
	require.Equal(t, 983*time.Millisecond, lo)
	require.Equal(t, 998*time.Millisecond, hi)
	lo, hi, ok = ObjectiveInterval(s, "mean")
	require.True(t, ok)
	require.Less(t, lo, s.Mean)
	require.Greater(t, hi, s.Mean)
	require.InDelta(t, float64(2*z95*288.8*float64(time.Millisecond)/31.62), float64(hi-lo), 1e5)
	_, _, ok = ObjectiveInterval(s, "max")
	require.False(t, ok)
	// Too few trials to bound p99 from above.
	_, _, ok = ObjectiveInterval(sim.Summarize(outs[:50]), "p99")
	require.False(t, ok)
}

// Two unnecessary elections in 5 node-hours (six 10-minute windows of a
// 5-server cluster): the rate is 0.4 per node-hour, but anything from
// 0.05 to 1.44 is consistent with the count at 95%.
func ExamplePoissonInterval() {
	lo, hi := PoissonInterval(2, 5)
	fmt.Printf("%.2f-%.2f per node-hour\n", lo, hi)
	// Output: 0.05-1.44 per node-hour
}
