package wheel

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortBySeq must sort any input: the nearly sorted batches a slot walk
// leaves (its fast path) and arbitrary ones (its fallback).
func TestSortBySeq(t *testing.T) {
	// Fixed inputs: this package's internal tests own a -seed flag of
	// their own (model_test.go), so testseed cannot be linked in here.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 9, 100, 5000} {
		// A walk of 8 round-robin LIFO lists, as batchSlot produces.
		walk := make([]firing, 0, n)
		lists := make([][]uint64, 8)
		for s := range n {
			lists[s%8] = append(lists[s%8], uint64(s))
		}
		for r := 0; len(walk) < n; r++ {
			for _, l := range lists {
				if i := len(l) - 1 - r; i >= 0 {
					walk = append(walk, firing{seq: l[i]})
				}
			}
		}
		random := make([]firing, n)
		for i := range random {
			random[i].seq = rng.Uint64N(uint64(n) + 1)
		}
		for name, b := range map[string][]firing{"walk": walk, "random": random} {
			sortBySeq(b)
			if !slices.IsSortedFunc(b, func(x, y firing) int { return int(x.seq) - int(y.seq) }) {
				t.Fatalf("n=%d %s: not sorted", n, name)
			}
			if len(b) != n {
				t.Fatalf("n=%d %s: length %d", n, name, len(b))
			}
		}
	}
}
