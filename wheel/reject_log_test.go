package wheel_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

// TestResetRejectionIsNeverSilent: Reset's false cannot tell "was idle,
// now scheduled" from "could not schedule", so a rejection is counted and
// logged (at the 1st, 2nd, 4th... rejection) and TryReset says why.
func TestResetRejectionIsNeverSilent(t *testing.T) {
	var buf bytes.Buffer
	cfg := wheel.DefaultConfig()
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	v, err := wheel.NewVirtual(cfg)
	require.NoError(t, err)
	var tm wheel.Timer
	require.NoError(t, tm.Init(v.Wheel, func() {}))
	require.False(t, tm.Reset(time.Second), "idle before: false, and scheduled")
	require.True(t, tm.Pending())
	require.True(t, tm.Stop())
	v.Stop()
	for range 5 {
		require.False(t, tm.Reset(time.Second))
	}
	require.False(t, tm.Pending())
	_, err = tm.TryReset(time.Second)
	require.ErrorIs(t, err, wheel.ErrStopped)
	require.Equal(t, int64(6), int64(v.Stats().Rejected))
	logged := strings.Count(buf.String(), "timer could not be scheduled")
	require.Equal(t, 3, logged, "rejections 1, 2 and 4 are logged:\n%s", buf.String())
	require.Contains(t, buf.String(), "wheel: stopped")
}
