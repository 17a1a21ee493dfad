package testseed

import (
	"flag"
	"math/rand/v2"
	"regexp"
	"sync"
	"testing"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized tests (0: a fresh seed, printed with the command that reproduces a failure)")

var (
	once  sync.Once
	fresh uint64
)

// Seed returns the seed of t's randomized run: -seed if given, else a
// fresh seed chosen once per test binary. It logs the seed and the
// command that reproduces t with it; pkg is the package's path as go
// test takes it, e.g. "./sim/experiment".
func Seed(t testing.TB, pkg string) uint64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		once.Do(func() {
			for fresh == 0 {
				fresh = rand.Uint64() // not a test input: only picks the seed
			}
		})
		seed = fresh
	}
	t.Logf("seed %d; reproduce: go test %s -run '^%s$' -seed=%d", seed, pkg, regexp.QuoteMeta(t.Name()), seed)
	return seed
}
