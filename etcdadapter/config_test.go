package etcdadapter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func validNodeConfig() Config {
	c := DefaultConfig()
	c.ID = 1
	c.Peers = []uint64{1, 2, 3}
	return c
}

func TestDefaultConfigIsEtcds(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, 10, c.ElectionTick)
	require.Equal(t, 1, c.HeartbeatTick)
	require.True(t, c.PreVote)
	require.True(t, c.CheckQuorum)
	require.Equal(t, 100*time.Millisecond, c.TickInterval)
	lo, hi := c.ElectionRange()
	require.Equal(t, time.Second, lo)
	require.Equal(t, 2*time.Second, hi)
	require.Equal(t, 100*time.Millisecond, c.HeartbeatInterval())
	require.NoError(t, validNodeConfig().Validate())
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // in the error text
	}{
		{"zero tick", func(c *Config) { c.TickInterval = 0 }, "TickInterval"},
		{"negative tick", func(c *Config) { c.TickInterval = -time.Millisecond }, "TickInterval"},
		{"zero heartbeat", func(c *Config) { c.HeartbeatTick = 0 }, "HeartbeatTick"},
		{"election = heartbeat", func(c *Config) { c.ElectionTick, c.HeartbeatTick = 3, 3 }, "ElectionTick (3) must be greater than HeartbeatTick (3)"},
		{"election < heartbeat", func(c *Config) { c.ElectionTick, c.HeartbeatTick = 2, 5 }, "ElectionTick"},
		{"huge election", func(c *Config) { c.ElectionTick = 1<<30 + 1 }, "too large"},
		{"zero ID", func(c *Config) { c.ID = 0 }, "ID must not be 0"},
		{"reserved ID", func(c *Config) { c.ID = ^uint64(0); c.Peers = []uint64{c.ID} }, "reserved"},
		{"ID not a peer", func(c *Config) { c.Peers = []uint64{2, 3} }, "must contain the node's own ID 1"},
		{"zero peer", func(c *Config) { c.Peers = []uint64{1, 0} }, "contains 0"},
		{"duplicate peer", func(c *Config) { c.Peers = []uint64{1, 2, 2} }, "lists 2 twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validNodeConfig()
			tc.change(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrBadConfig)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// newRawNode is how Validate runs etcd's own validation, which panics;
// the panic must come back as an error.
func TestNewRawNodeTurnsEtcdPanicIntoError(t *testing.T) {
	c := validNodeConfig()
	rc := c.raftConfig(nil) // etcd: "storage cannot be nil"
	_, err := newRawNode(rc)
	require.ErrorIs(t, err, ErrBadConfig)
	require.Contains(t, err.Error(), "storage cannot be nil")

	st, err := bootstrapStorage(c.Peers)
	require.NoError(t, err)
	rc = c.raftConfig(st)
	rc.MaxInflightMsgs = 0 // a field Config does not expose: only etcd checks it
	_, err = newRawNode(rc)
	require.ErrorIs(t, err, ErrBadConfig)
	require.Contains(t, err.Error(), "max inflight messages")
}

func TestTicks(t *testing.T) {
	n, err := Ticks(150*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 15, n)
	for _, tc := range []struct {
		d, tick time.Duration
		want    string
	}{
		{155 * time.Millisecond, 10 * time.Millisecond, "not a whole number"},
		{0, time.Millisecond, "must be positive"},
		{time.Second, 0, "tick interval"},
		{time.Hour, time.Nanosecond, "too many"},
	} {
		_, err := Ticks(tc.d, tc.tick)
		require.ErrorIs(t, err, ErrBadConfig)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestFromTimeouts(t *testing.T) {
	c, err := FromTimeouts(150*time.Millisecond, 75*time.Millisecond, time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 150, c.ElectionTick)
	require.Equal(t, 75, c.HeartbeatTick)
	require.Equal(t, time.Millisecond, c.TickInterval)
	lo, hi := c.ElectionRange()
	require.Equal(t, 150*time.Millisecond, lo)
	require.Equal(t, 300*time.Millisecond, hi)

	// tick 0: the heartbeat interval, etcd's own tick.
	c, err = FromTimeouts(time.Second, 100*time.Millisecond, 0)
	require.NoError(t, err)
	require.Equal(t, DefaultConfig(), c)

	_, err = FromTimeouts(100*time.Millisecond, 100*time.Millisecond, 0)
	require.ErrorIs(t, err, ErrBadConfig)
	require.Contains(t, err.Error(), "ElectionTick (1) must be greater than HeartbeatTick (1)")
	_, err = FromTimeouts(155*time.Millisecond, 10*time.Millisecond, 0)
	require.ErrorIs(t, err, ErrBadConfig)
	require.True(t, strings.HasPrefix(err.Error(), "election timeout: "), err.Error())
	_, err = FromTimeouts(time.Second, 15*time.Millisecond, 10*time.Millisecond)
	require.True(t, strings.HasPrefix(err.Error(), "heartbeat interval: "), err.Error())
}

func TestFromRange(t *testing.T) {
	c, err := FromRange(150*time.Millisecond, 300*time.Millisecond, 50*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 15, c.ElectionTick)
	require.Equal(t, 5, c.HeartbeatTick)
	c2, err := FromRange(150*time.Millisecond, 0, 50*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, c, c2)
	_, err = FromRange(150*time.Millisecond, 155*time.Millisecond, 50*time.Millisecond, 10*time.Millisecond)
	require.ErrorIs(t, err, ErrBadConfig)
	require.Contains(t, err.Error(), "[T, 2T)")
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{ErrBadConfig, ErrNotRunning, ErrRunning, ErrClosed, ErrUnsupportedRaft, ErrBadMessage, ErrBadCluster, ErrBadSetup}
	for i, a := range all {
		require.True(t, strings.HasPrefix(a.Error(), "etcdadapter: "), a.Error())
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b))
		}
	}
}
