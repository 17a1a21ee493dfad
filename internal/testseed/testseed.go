package testseed

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized tests; 0 picks a fresh one, which the test prints with the command that reproduces the run")

// Flag returns the -seed flag's value; 0 means none was given.
func Flag() uint64 { return *seedFlag }

// Seed returns the seed of tb's randomized run: the -seed flag, or a fresh
// random seed when it is 0. It logs the seed and the command that
// reproduces the run; extra flags (e.g. "-schedules=1") are appended to it.
func Seed(tb testing.TB, extra ...string) uint64 {
	tb.Helper()
	s := *seedFlag
	if s == 0 {
		s = rand.Uint64() // a test helper, never a core: fresh is the point
	}
	tb.Logf("seed %d; reproduce: %s", s, Command(tb, s, extra...))
	return s
}

// Command returns the go test command line that reruns tb (by its
// top-level name) with the given seed and extra flags.
func Command(tb testing.TB, seed uint64, extra ...string) string {
	name := tb.Name()
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	parts := []string{"go test", packageDir(), "-run", "'^" + name + "$'", fmt.Sprintf("-seed=%d", seed)}
	return strings.Join(append(parts, extra...), " ")
}

// packageDir returns the test's package directory relative to the module
// root ("./election"), or "." when it cannot tell.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
