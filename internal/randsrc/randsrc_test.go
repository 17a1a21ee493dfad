package randsrc

import "testing"

// Two sources must not repeat each other: the defect this package fixes is
// repeated.New seeding every timer named "election" identically.
func TestNewIsNotRepeatable(t *testing.T) {
	a, b := New(), New()
	same := 0
	for range 8 {
		if a.Uint64() == b.Uint64() {
			same++
		}
	}
	if same == 8 {
		t.Fatal("two sources from New produced the same 8 values")
	}
}

func TestSeedIsNotRepeatable(t *testing.T) {
	if a, b := Seed(), Seed(); a == b {
		t.Fatalf("two calls of Seed returned the same words %x", a)
	}
}
