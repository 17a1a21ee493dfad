package election_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// TestDurationFloors: a duration no timer can honour (a unit forgotten:
// ElectionTimeout 150 is 150ns) is refused by Validate, naming the field,
// the value with its unit and the floor; on a real-time wheel NewNode also
// refuses an election timeout below the wheel's tick.
func TestDurationFloors(t *testing.T) {
	for _, tc := range []struct {
		field string
		set   func(*election.Config)
		value string
	}{
		{"ElectionTimeout", func(c *election.Config) { c.ElectionTimeout = 150 }, "150ns"},
		{"ElectionTimeout", func(c *election.Config) { c.ElectionTimeout = 999 * time.Microsecond }, "999µs"},
		{"VoteTimeout", func(c *election.Config) { c.VoteTimeout = 150 }, "150ns"},
		{"HeartbeatInterval", func(c *election.Config) { c.HeartbeatInterval = 15 }, "15ns"},
		{"StepDownInterval", func(c *election.Config) { c.StepDownInterval = 75 }, "75ns"},
		{"SnapshotInterval", func(c *election.Config) { c.SnapshotInterval, c.OnSnapshot = 10, func() {} }, "10ns"},
	} {
		c := validConfig()
		c.ElectionTimeout = 150 * time.Millisecond
		tc.set(&c)
		err := c.Validate()
		require.ErrorIs(t, err, election.ErrInvalidConfig, tc.field)
		var fe *election.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
		require.Contains(t, err.Error(), tc.field+" "+tc.value+": is below the floor of")
		require.Contains(t, err.Error(), "unit")
	}
	// The floors themselves are accepted.
	c := validConfig()
	c.ElectionTimeout, c.HeartbeatInterval, c.StepDownInterval = election.MinElectionTimeout, election.MinPeriod, election.MinPeriod
	require.NoError(t, c.Validate())

	// A real-time wheel with a 10ms tick cannot run a 5ms election timer;
	// a virtual wheel fires at exact deadlines and can.
	cfg := wheel.DefaultConfig()
	cfg.Tick = 10 * time.Millisecond
	w, err := wheel.New(cfg)
	require.NoError(t, err)
	defer w.Stop()
	c = validConfig()
	c.ElectionTimeout = 5 * time.Millisecond
	_, err = election.NewNode(c, w, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.ErrorIs(t, err, election.ErrInvalidConfig)
	require.Contains(t, err.Error(), "ElectionTimeout 5ms: must be at least the real-time wheel's tick (10ms)")
	n, err := election.NewNode(c, newVirtual(t).Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	n.Stop()
}
