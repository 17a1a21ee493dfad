package repeated_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

const ms = time.Millisecond

func TestMain(m *testing.M) {
	quietDefaultLogger()
	goleak.VerifyTestMain(m)
}

// newVirtual returns a virtual wheel stopped at the end of the test.
func newVirtual(tb testing.TB) *wheel.Virtual {
	tb.Helper()
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(tb, err)
	tb.Cleanup(func() { v.Stop() })
	return v
}

// newRealtime returns a real-time wheel (optionally with an executor),
// stopped at the end of the test.
func newRealtime(tb testing.TB, exec wheel.Executor) *wheel.Wheel {
	tb.Helper()
	cfg := wheel.DefaultConfig()
	cfg.Executor = exec
	w, err := wheel.New(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { w.Stop() })
	return w
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5eed)) }

// mustNew is repeated.New that fails the test on error.
func mustNew(tb testing.TB, w *wheel.Wheel, name string, timeout time.Duration, f func(), opts ...repeated.Option) *repeated.Timer {
	tb.Helper()
	tm, err := repeated.New(w, name, timeout, f, opts...)
	require.NoError(tb, err)
	return tm
}

// queueExec is an Executor that holds due callbacks until the test runs
// them, to deliver wheel fires late and out of order on a virtual wheel.
type queueExec struct{ tasks []wheel.Task }

func (q *queueExec) exec(t wheel.Task) { q.tasks = append(q.tasks, t) }

// pop removes and returns the oldest queued task.
func (q *queueExec) pop(tb testing.TB) wheel.Task {
	tb.Helper()
	require.NotEmpty(tb, q.tasks, "no queued wheel callback")
	t := q.tasks[0]
	q.tasks = q.tasks[1:]
	return t
}

func newVirtualQueued(tb testing.TB) (*wheel.Virtual, *queueExec) {
	tb.Helper()
	q := &queueExec{}
	cfg := wheel.DefaultConfig()
	cfg.Executor = q.exec
	v, err := wheel.NewVirtual(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { v.Stop() })
	return v, q
}
