package wheel_test

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

func TestMain(m *testing.M) {
	quietDefaultLogger()
	os.Exit(m.Run())
}

// inChild reports whether this process is a test's child (see runChild).
func inChild() bool { return os.Getenv(wheel.ChildEnv) != "" }

// runChild runs the test named test of this binary as a child process
// whose DefaultLogger is the real one, and returns what it wrote to
// standard error.
func runChild(t *testing.T, test string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), wheel.ChildEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "child %s\nstdout:\n%s\nstderr:\n%s", test, stdout.String(), stderr.String())
	return stderr.String()
}

// TestDefaultLoggerPrintsPanics: with the default config a panicking
// callback, a rejected Reset and a Reset of a Timer never initialized are
// printed to standard error, the panic with its stack.
func TestDefaultLoggerPrintsPanics(t *testing.T) {
	if inChild() {
		v, err := wheel.NewVirtual(wheel.DefaultConfig())
		require.NoError(t, err)
		_, err = v.AfterFunc(0, func() { panic("child boom") })
		require.NoError(t, err)
		v.AdvanceBy(0)
		v.Stop()
		var tm wheel.Timer
		require.False(t, tm.Reset(0))
		require.NoError(t, tm.Init(v.Wheel, func() {}))
		require.False(t, tm.Reset(0))
		return
	}
	out := runChild(t, "TestDefaultLoggerPrintsPanics")
	require.Contains(t, out, "raftick.wheel: timer callback panicked")
	require.Contains(t, out, "child boom")
	require.Contains(t, out, "main_test.go", "the panic's stack")
	require.Contains(t, out, "never initialized")
	require.Contains(t, out, "wheel: stopped")
}
