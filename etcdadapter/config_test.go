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

// requireFieldError checks that err is a *FieldError of this package for
// field whose Reason contains reason, and returns it.
func requireFieldError(t *testing.T, err error, field, reason string) *FieldError {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidConfig)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, field, fe.Field, err.Error())
	require.Contains(t, fe.Reason, reason)
	require.Contains(t, err.Error(), fe.Reason)
	return fe
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		field  string
		value  any
		reason string
	}{
		{"zero tick", func(c *Config) { c.TickInterval = 0 }, "TickInterval", time.Duration(0), "must be positive"},
		{"negative tick", func(c *Config) { c.TickInterval = -time.Millisecond }, "TickInterval", -time.Millisecond, "must be positive"},
		{"zero heartbeat", func(c *Config) { c.HeartbeatTick = 0 }, "HeartbeatTick", 0, "at least 1"},
		{"election = heartbeat", func(c *Config) { c.ElectionTick, c.HeartbeatTick = 3, 3 }, "ElectionTick", 3, "must be greater than HeartbeatTick (3)"},
		{"election < heartbeat", func(c *Config) { c.ElectionTick, c.HeartbeatTick = 2, 5 }, "ElectionTick", 2, "HeartbeatTick (5)"},
		{"huge election", func(c *Config) { c.ElectionTick = 1<<30 + 1 }, "ElectionTick", 1<<30 + 1, "at most"},
		{"zero ID", func(c *Config) { c.ID = 0 }, "ID", uint64(0), "must not be 0"},
		{"reserved ID", func(c *Config) { c.ID = ^uint64(0); c.Peers = []uint64{c.ID} }, "ID", ^uint64(0), "reserved by etcd raft"},
		{"ID not a peer", func(c *Config) { c.Peers = []uint64{2, 3} }, "Peers", []uint64{2, 3}, "must contain the node's own ID 1"},
		{"zero peer", func(c *Config) { c.Peers = []uint64{1, 0} }, "Peers", []uint64{1, 0}, "contains 0"},
		{"reserved peer", func(c *Config) { c.Peers = []uint64{1, ^uint64(0)} }, "Peers", []uint64{1, ^uint64(0)}, "contains 0xffffffffffffffff, reserved"},
		{"duplicate peer", func(c *Config) { c.Peers = []uint64{1, 2, 2} }, "Peers", []uint64{1, 2, 2}, "lists 2 twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validNodeConfig()
			tc.change(&c)
			fe := requireFieldError(t, c.Validate(), tc.field, tc.reason)
			require.Equal(t, tc.value, fe.Value)
			require.NotContains(t, fe.Reason, "Config.", "a Reason names no Go identifier but field names")
		})
	}
	c := validNodeConfig()
	c.TickInterval = 0
	require.Equal(t, "etcdadapter: invalid config: TickInterval 0s: must be positive", c.Validate().Error())
}

// newRawNode is how Validate runs etcd's own validation, which panics;
// the panic must come back as an error of this package with etcd's as
// its cause.
func TestNewRawNodeTurnsEtcdPanicIntoError(t *testing.T) {
	c := validNodeConfig()
	rc := c.raftConfig(nil) // etcd: "storage cannot be nil"
	_, err := newRawNode(rc)
	fe := requireFieldError(t, err, "", "refused by etcd raft: storage cannot be nil")
	require.Error(t, fe.Cause)
	require.Equal(t, "etcdadapter: invalid config: etcd raft config: refused by etcd raft: storage cannot be nil", err.Error())

	st, err := bootstrapStorage(c.Peers)
	require.NoError(t, err)
	rc = c.raftConfig(st)
	rc.MaxInflightMsgs = 0 // a field Config does not expose: only etcd checks it
	_, err = newRawNode(rc)
	fe = requireFieldError(t, err, "", "max inflight messages")
	require.ErrorIs(t, err, fe.Cause)
	require.Contains(t, fe.Cause.Error(), "max inflight messages")
}

func TestTicks(t *testing.T) {
	n, err := Ticks(150*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, 15, n)
	for _, tc := range []struct {
		d, tick time.Duration
		want    string
	}{
		{155 * time.Millisecond, 10 * time.Millisecond, "is not a whole number of 10ms ticks"},
		{0, time.Millisecond, "must be positive"},
		{time.Second, 0, "tick interval must be positive"},
		{time.Hour, time.Nanosecond, "too many"},
	} {
		_, err := Ticks(tc.d, tc.tick)
		requireFieldError(t, err, "", tc.want)
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

	// Each error names the Config field its argument sets.
	_, err = FromTimeouts(100*time.Millisecond, 100*time.Millisecond, 0)
	requireFieldError(t, err, "ElectionTick", "must be greater than HeartbeatTick (1)")
	_, err = FromTimeouts(155*time.Millisecond, 10*time.Millisecond, 0)
	fe := requireFieldError(t, err, "ElectionTick", "not a whole number of 10ms ticks")
	require.Equal(t, 155*time.Millisecond, fe.Value)
	_, err = FromTimeouts(time.Second, 15*time.Millisecond, 10*time.Millisecond)
	requireFieldError(t, err, "HeartbeatTick", "not a whole number of 10ms ticks")
	_, err = FromTimeouts(time.Second, 0, 0)
	requireFieldError(t, err, "TickInterval", "must be positive")
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
	fe := requireFieldError(t, err, "ElectionTick", "[T, 2T): want 150ms-300ms")
	require.Equal(t, "150ms-155ms", fe.Value)
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{ErrInvalidConfig, ErrNotRunning, ErrRunning, ErrClosed, ErrUnsupportedRaft, ErrBadMessage}
	for i, a := range all {
		require.True(t, strings.HasPrefix(a.Error(), "etcdadapter: "), a.Error())
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b))
		}
	}
}
