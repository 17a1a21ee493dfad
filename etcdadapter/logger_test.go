package etcdadapter

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/raft/v3"

	"github.com/raftick/raftick/internal/logging"
)

// TestDefaultLoggerIsNotSilent: a Config without a Logger gives etcd raft
// the module's default logger, which writes etcd's warnings and errors
// (not its Info lines) to the default output; NullLogger drops them, and
// both panic on Panic, as etcd raft expects.
func TestDefaultLoggerIsNotSilent(t *testing.T) {
	var out bytes.Buffer
	defer logging.SetOutput(&out)()
	st := raft.NewMemoryStorage()
	l := DefaultConfig().raftConfig(st).Logger
	l.Infof("routine %d", 1)
	l.Warningf("careful %d", 2)
	l.Error("broken")
	require.NotContains(t, out.String(), "routine")
	require.Contains(t, out.String(), "raftick.etcd: careful 2")
	require.Contains(t, out.String(), "raftick.etcd: broken")
	require.Panics(t, func() { l.Panicf("invariant %d", 3) })
	require.Contains(t, out.String(), "invariant 3")

	out.Reset()
	c := DefaultConfig()
	c.Logger = NullLogger()
	c.raftConfig(st).Logger.Warning("dropped")
	require.Zero(t, out.Len())
	require.Panics(t, func() { NullLogger().Fatal("boom") })
}
