package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The raftsim binary the tests of a user's first hour run, as a user
// does: built once per test binary, removed by TestMain.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// binary returns the path of raftsim built from this package.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "raftsim-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "raftsim")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = errors.New("go build: " + err.Error() + ": " + string(out))
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// removeBinary removes the binary built by binary, if any.
func removeBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// runBinary runs the built raftsim with args and returns its exit status,
// stdout and stderr.
func runBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("raftsim %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// TestBinaryMisspelledCommand: a misspelled subcommand is an unknown
// command with cobra's suggestion, even when flags of the subcommand
// follow it (they are not the problem).
func TestBinaryMisspelledCommand(t *testing.T) {
	for args, want := range map[string]string{
		"failovr":                          `unknown command "failovr" (did you mean failover?)`,
		"faliover --timeout 150-300ms":     `unknown command "faliover" (did you mean failover?)`,
		"--shard 0/2 bootstap --trials 10": `unknown command "bootstap" (did you mean bootstrap?)`,
		"xyzzy":                            `unknown command "xyzzy" (see raftsim --help)`,
		"failover --bogus":                 `unknown flag: --bogus`,
	} {
		code, out, errs := runBinary(t, strings.Fields(args)...)
		require.Equal(t, 2, code, args)
		require.Empty(t, out, args)
		require.Equal(t, "raftsim: "+want+"\n", errs, args)
	}
}

// TestBinaryTimeoutUnits: a unit on either end of --timeout applies to
// both; a missing unit is named as such.
func TestBinaryTimeoutUnits(t *testing.T) {
	for _, args := range [][]string{{"--timeout", "150ms-300"}, {"--timeout", "150-300ms"}} {
		code, out, errs := runBinary(t, append([]string{"failover", "--trials", "3", "--json"}, args...)...)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, `"label":"150-300ms"`, args)
	}
	for value, want := range map[string]string{
		"150":     `--timeout "150": has no unit (want e.g. 150ms)`,
		"150-300": `--timeout "150-300": has no unit (want e.g. 150-300ms)`,
	} {
		code, _, errs := runBinary(t, "failover", "--timeout", value)
		require.Equal(t, 2, code, value)
		require.Equal(t, "raftsim: "+want+"\n", errs, value)
	}
}
