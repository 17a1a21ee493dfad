package repeated_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// hangGuard fails the test if f does not return within a generous bound:
// the property is "returns", not how fast, and the bound only turns a
// deadlock into a failure instead of a stuck test binary.
func hangGuard(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: deadlock", what)
	}
}

// recvGuard waits for a value on ch, failing the test on a deadlock (see
// hangGuard).
func recvGuard[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("%s never happened: deadlock", what)
	}
}

// panicsAfter returns a jitter policy that returns its base for n calls
// and panics on every later one.
func panicsAfter(n int64) (repeated.Jitter, *atomic.Int64) {
	var calls atomic.Int64
	return repeated.Func(func(base time.Duration, _ repeated.State, _ *rand.Rand) time.Duration {
		if calls.Add(1) > n {
			panic("jitter boom")
		}
		return base
	}), &calls
}

// TestJitterPanicIsContained: a Jitter that panics while its timer
// re-arms after a trigger used to leave the timer's lock held, so that
// the wheel's driver (or the goroutine advancing a virtual wheel)
// deadlocked on it. Its panic is now recovered, logged, counted in
// Stats.Panics and reported by Err, and that schedule uses the base
// timeout.
func TestJitterPanicIsContained(t *testing.T) {
	t.Run("virtual", func(t *testing.T) {
		v := newVirtual(t)
		j, calls := panicsAfter(1)
		var log strings.Builder
		n := 0
		tm := mustNew(t, v.Wheel, "j", 10*ms, func() { n++ }, repeated.WithJitter(j),
			repeated.WithLogger(hclog.New(&hclog.LoggerOptions{Output: &log})))
		require.NoError(t, tm.Start())
		hangGuard(t, "AdvanceTo", func() { v.AdvanceTo(35 * ms) })
		require.Equal(t, 3, n, "every re-arm falls back to the base timeout")
		require.EqualValues(t, 4, calls.Load())
		require.True(t, tm.IsRunning())
		st := tm.Stats()
		require.EqualValues(t, 3, st.Panics)
		require.Zero(t, v.Stats().Panics, "the timer contains its jitter's panic")
		var pe *wheel.PanicError
		require.ErrorAs(t, tm.Err(), &pe)
		require.Equal(t, "jitter boom", pe.Value)
		require.Contains(t, tm.Err().Error(), `"j"`)
		require.Contains(t, log.String(), "jitter boom")
		require.Contains(t, log.String(), "panic_test.go", "the log holds the panic's stack")

		// Locked paths that draw: Reset, Restart, ResetTimeout.
		hangGuard(t, "Reset", func() { require.NoError(t, tm.Reset()) })
		hangGuard(t, "Restart", func() { require.NoError(t, tm.Restart()) })
		require.ErrorAs(t, tm.Err(), &pe, "the Restart's own draw panicked")
		hangGuard(t, "ResetTimeout", func() { require.NoError(t, tm.TryResetTimeout(20*ms)) })
		d, ok := tm.Deadline()
		require.True(t, ok)
		require.Equal(t, v.Now()+20*ms, d, "the base timeout")
		hangGuard(t, "Stop", tm.Stop)
		hangGuard(t, "Destroy", tm.Destroy)
	})
	t.Run("realtime", func(t *testing.T) {
		w := newRealtime(t, nil)
		j, _ := panicsAfter(1)
		fired := make(chan struct{}, 16)
		tm := mustNew(t, w, "j", ms, func() {
			select {
			case fired <- struct{}{}:
			default:
			}
		}, repeated.WithJitter(j), repeated.WithLogger(hclog.NewNullLogger()))
		require.NoError(t, tm.Start())
		for range 3 { // the second and third fires follow panicking draws
			recvGuard(t, "fire", fired)
		}
		// Another timer on the same wheel still fires.
		other := make(chan struct{})
		_, err := w.AfterFunc(ms, func() { close(other) })
		require.NoError(t, err)
		recvGuard(t, "the other timer's fire", other)
		hangGuard(t, "Timer.Stop", tm.Stop)
		require.GreaterOrEqual(t, tm.Stats().Panics, int64(2))
		var pe *wheel.PanicError
		require.True(t, errors.As(tm.Err(), &pe))
		hangGuard(t, "Wheel.Stop", func() { w.Stop() })
	})
}

// TestDefaultLoggerPrintsPanics: with default options a panicking trigger
// is printed to standard error with its stack (in a child process, whose
// DefaultLogger is the real one), and Err reports it.
func TestDefaultLoggerPrintsPanics(t *testing.T) {
	if os.Getenv(repeated.ChildEnv) != "" {
		v, err := wheel.NewVirtual(wheel.DefaultConfig())
		require.NoError(t, err)
		tm := mustNew(t, v.Wheel, "loud", ms, func() { panic("child trigger boom") })
		require.NoError(t, tm.Start())
		v.AdvanceBy(ms)
		var pe *wheel.PanicError
		require.ErrorAs(t, tm.Err(), &pe)
		v.Stop()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultLoggerPrintsPanics$", "-test.count=1")
	cmd.Env = append(os.Environ(), repeated.ChildEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	out := stderr.String()
	require.Contains(t, out, "raftick.repeated")
	require.Contains(t, out, "child trigger boom")
	require.Contains(t, out, "panic_test.go", "the panic's stack")
}

// TestTriggerPanickingEveryTimeKeepsFiring: a timer whose trigger panics
// on every fire keeps its schedule, firing every timeout; each panic is
// counted, Err reports the latest, and the log holds the 1st, 2nd, 4th,
// 8th... of them.
func TestTriggerPanickingEveryTimeKeepsFiring(t *testing.T) {
	v := newVirtual(t)
	var log strings.Builder
	n := 0
	tm := mustNew(t, v.Wheel, "always", 10*ms, func() { n++; panic(n) },
		repeated.WithLogger(hclog.New(&hclog.LoggerOptions{Output: &log})))
	require.NoError(t, tm.Start())
	v.AdvanceTo(100 * ms)
	require.Equal(t, 10, n, "one fire every timeout")
	require.True(t, tm.IsRunning())
	require.EqualValues(t, 10, tm.Stats().Panics)
	var pe *wheel.PanicError
	require.ErrorAs(t, tm.Err(), &pe)
	require.Equal(t, 10, pe.Value, "the latest panic")
	require.Equal(t, 4, strings.Count(log.String(), "recovered panic"), "panics 1, 2, 4 and 8 logged")
	require.NoError(t, tm.Restart())
	require.NoError(t, tm.Err(), "Restart clears Err")
	tm.Destroy()
}

// typedNilLogger is an hclog.Logger whose nil pointer a caller may pass
// by mistake: every method would dereference it.
type typedNilLogger struct{ hclog.Logger }

// TestTypedNilLogger: WithLogger given a nil pointer in the Logger
// interface uses the default logger, as WithLogger(nil) does; it used to
// keep the typed nil and panic at the first log line (here, a jitter's
// recovered panic).
func TestTypedNilLogger(t *testing.T) {
	v := newVirtual(t)
	j, _ := panicsAfter(0)
	var l *typedNilLogger
	tm := mustNew(t, v.Wheel, "j", 10*ms, func() {}, repeated.WithJitter(j), repeated.WithLogger(l))
	require.NotPanics(t, func() {
		require.NoError(t, tm.Start())
		v.AdvanceTo(25 * ms)
	})
	require.NotZero(t, tm.Stats().Panics)
	tm.Destroy()
}
