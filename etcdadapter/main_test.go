package etcdadapter

import (
	"flag"
	"math/rand/v2"
	"testing"

	"go.uber.org/goleak"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized tests (0: a fresh one; each test prints it with the command that reproduces it)")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSeed returns the -seed flag or a fresh seed, and logs the command
// that reproduces the test with it.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	s := *seedFlag
	if s == 0 {
		s = rand.Uint64()
	}
	t.Logf("seed %d; reproduce: go test ./etcdadapter -run '^%s$' -seed=%d", s, t.Name(), s)
	return s
}

// trialRand derives an independent source for trial i of seed.
func trialRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)*0x9e3779b97f4a7c15+1))
}
