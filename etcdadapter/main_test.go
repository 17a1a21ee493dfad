package etcdadapter

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/raftick/raftick/election/electiontest"

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

// fastConfig is etcd's defaults at 10ms ticks: timeouts in [100, 200) ms,
// heartbeats every 10ms.
func fastConfig() Config {
	c := DefaultConfig()
	c.TickInterval = 10 * time.Millisecond
	return c
}

// checked returns a checker of election safety for a group of voters
// nodes; the test fails at its end if the events it observed broke it.
func checked(t *testing.T, seed uint64, voters int) *electiontest.Checker {
	chk := electiontest.NewChecker(voters)
	t.Cleanup(func() {
		if err := chk.Err(); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	})
	return chk
}
