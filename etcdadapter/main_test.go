package etcdadapter

import (
	"math/rand/v2"
	"testing"

	"go.uber.org/goleak"

	"github.com/raftick/raftick/internal/testseed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testSeed returns the -seed flag or a fresh seed (the module's one seed
// rule), and logs the command that reproduces the test with it.
func testSeed(t testing.TB) uint64 {
	t.Helper()
	return testseed.Seed(t)
}

// trialRand derives an independent source for trial i of seed.
func trialRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)*0x9e3779b97f4a7c15+1))
}
