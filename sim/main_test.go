package sim

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var seedFlag = flag.Uint64("seed", 1, "seed of the randomized tests (they print it with a command to reproduce)")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
