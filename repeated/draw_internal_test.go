package repeated

import (
	"math"
	"testing"
)

// TestUniformDrawIsSplitMix64: the draws of a key are SplitMix64's stream
// seeded with the key; the published first outputs of seed 0, whose top
// 62 bits a span of 1<<62 keeps.
func TestUniformDrawIsSplitMix64(t *testing.T) {
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := uniformDraw(0, uint64(i), 1<<62); uint64(got) != want>>2 {
			t.Errorf("draw %d of key 0: got %#x, want %#x", i, got, want>>2)
		}
	}
}

// TestUniformDrawIsUniform: a chi-square test over 16 equal buckets, for
// a span that needs no rejection in practice (150ms) and one where a
// quarter of the raw values are rejected (3<<61), in both halves of the
// index space (lock-free and locked schedules).
func TestUniformDrawIsUniform(t *testing.T) {
	const draws, buckets = 1 << 17, 16
	for _, span := range []int64{150e6, 3 << 61} {
		for _, base := range []uint64{0, lockedDraw} {
			var count [buckets]int
			for i := range uint64(draws) {
				x := uniformDraw(0x5eed, base|i, span)
				if x < 0 || x >= span {
					t.Fatalf("span %d: draw %d out of range: %d", span, i, x)
				}
				count[int(float64(x)/float64(span)*buckets)]++
			}
			chi2 := 0.0
			for _, c := range count {
				d := float64(c) - draws/buckets
				chi2 += d * d / (draws / buckets)
			}
			// The 99.99th percentile of chi-square with 15 degrees of
			// freedom is about 44.3: a fixed key fails it by chance with
			// probability 1e-4, once and for all.
			if chi2 > 44.3 || math.IsNaN(chi2) {
				t.Errorf("span %d, index base %#x: chi-square %.1f over %d buckets: %v", span, base, chi2, buckets, count)
			}
		}
	}
}
