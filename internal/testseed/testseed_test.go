package testseed

import (
	"strings"
	"testing"
)

func TestCommandNamesPackageTestAndSeed(t *testing.T) {
	got := Command(t, 42, "-v")
	want := "go test ./internal/testseed -run '^TestCommandNamesPackageTestAndSeed$' -seed=42 -v"
	if got != want {
		t.Fatalf("Command = %q, want %q", got, want)
	}
}

func TestSeedFollowsFlag(t *testing.T) {
	old := *seedFlag
	defer func() { *seedFlag = old }()
	*seedFlag = 7
	if s := Seed(t); s != 7 {
		t.Fatalf("Seed with -seed=7 = %d", s)
	}
	*seedFlag = 0
	a, b := Seed(t), Seed(t)
	if a == b {
		t.Fatalf("two fresh seeds are equal (%d): not fresh", a)
	}
	t.Run("sub", func(t *testing.T) {
		if c := Command(t, 1); !strings.Contains(c, "'^TestSeedFollowsFlag$'") {
			t.Fatalf("a subtest's command must rerun its top-level test: %q", c)
		}
	})
}
