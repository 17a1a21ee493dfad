package election_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

func validConfig() election.Config {
	c := election.DefaultConfig()
	c.ID, c.Voters = 1, []election.ID{1, 2, 3}
	return c
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, validConfig().Validate())
	cases := []struct {
		name  string
		edit  func(c *election.Config)
		field string // must appear in the error
	}{
		{"zero ID", func(c *election.Config) { c.ID = 0 }, "Config.ID"},
		{"no voters", func(c *election.Config) { c.Voters = nil }, "Config.Voters"},
		{"voter 0", func(c *election.Config) { c.Voters = []election.ID{1, 0} }, "Config.Voters"},
		{"duplicate voter", func(c *election.Config) { c.Voters = []election.ID{1, 2, 2} }, "Config.Voters"},
		{"ID not a voter", func(c *election.Config) { c.ID = 4 }, "Config.ID (4) must be one of Config.Voters"},
		{"zero election timeout", func(c *election.Config) { c.ElectionTimeout = 0 }, "Config.ElectionTimeout"},
		{"negative election timeout", func(c *election.Config) { c.ElectionTimeout = -time.Second }, "Config.ElectionTimeout"},
		{"negative heartbeat", func(c *election.Config) { c.HeartbeatInterval = -1 }, "Config.HeartbeatInterval"},
		{"heartbeat >= election timeout", func(c *election.Config) {
			c.ElectionTimeout, c.HeartbeatInterval = 150*time.Millisecond, 200*time.Millisecond
		}, "Config.HeartbeatInterval (200ms) must be less than ElectionTimeout (150ms)"},
		{"heartbeat == election timeout", func(c *election.Config) { c.HeartbeatInterval = c.ElectionTimeout }, "Config.HeartbeatInterval"},
		{"default heartbeat rounds to 0", func(c *election.Config) {
			c.ElectionTimeout, c.HeartbeatInterval = 5, 0
		}, "Config.HeartbeatInterval"},
		{"negative vote timeout", func(c *election.Config) { c.VoteTimeout = -1 }, "Config.VoteTimeout"},
		{"negative step-down interval", func(c *election.Config) { c.StepDownInterval = -1 }, "Config.StepDownInterval"},
		{"negative lease ratio", func(c *election.Config) { c.LeaseRatio = -0.5 }, "Config.LeaseRatio"},
		{"NaN lease ratio", func(c *election.Config) { c.LeaseRatio = math.NaN() }, "Config.LeaseRatio"},
		{"lease longer than election timeout", func(c *election.Config) { c.LeaseRatio = 1.5 }, "must not exceed ElectionTimeout"},
		{"negative snapshot interval", func(c *election.Config) { c.SnapshotInterval = -1 }, "Config.SnapshotInterval"},
		{"snapshot without callback", func(c *election.Config) { c.SnapshotInterval = time.Second }, "Config.OnSnapshot"},
		{"callback without snapshot", func(c *election.Config) { c.OnSnapshot = func() {} }, "Config.SnapshotInterval"},
		{"negative priority", func(c *election.Config) { c.Priority = -1 }, "Config.Priority"},
		{"priority of a non-voter", func(c *election.Config) { c.Priorities = map[election.ID]int{9: 1} }, "Config.Priorities"},
		{"negative peer priority", func(c *election.Config) { c.Priorities = map[election.ID]int{2: -1} }, "Config.Priorities[2]"},
		{"own priority mismatch", func(c *election.Config) {
			c.Priority, c.Priorities = 5, map[election.ID]int{1: 6}
		}, "must equal Config.Priority"},
		{"negative decay gap", func(c *election.Config) { c.PriorityDecayGap = -1 }, "Config.PriorityDecayGap"},
		{"unknown detection mode", func(c *election.Config) { c.Detection = 7 }, "Config.Detection"},
		{"unknown stickiness mode", func(c *election.Config) { c.Stickiness = 7 }, "Config.Stickiness (StickinessMode(7))"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.field)
			require.Contains(t, err.Error(), "election: ")
			// NewNode rejects the same config with the same error.
			_, nerr := election.NewNode(c, nil, nil, nil, nil)
			require.EqualError(t, nerr, err.Error())
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	// A minimal config: zero optional fields take their defaults.
	c := election.Config{ID: 2, Voters: []election.ID{1, 2, 3}, ElectionTimeout: 100 * time.Millisecond}
	require.NoError(t, c.Validate())
	v := newVirtual(t)
	n, err := election.NewNode(c, v.Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	got := n.Config()
	require.Equal(t, 10*time.Millisecond, got.HeartbeatInterval)
	require.Equal(t, 100*time.Millisecond, got.VoteTimeout)
	require.Equal(t, 50*time.Millisecond, got.StepDownInterval)
	require.Equal(t, 0.9, got.LeaseRatio)
	require.Equal(t, 10, got.PriorityDecayGap)
	require.NotNil(t, got.ElectionJitter)
	require.NotNil(t, got.VoteJitter)
	require.Equal(t, repeated.None(), got.HeartbeatJitter)
	require.Equal(t, election.StickyByContact, got.Stickiness)
	require.False(t, got.WaitForVoteTimeout || got.KeepTimerOnStepDown || got.HeartbeatPerPeer)
	require.NotNil(t, got.Rand)
	require.NotNil(t, got.Logger)
	require.Equal(t, 2, c.Quorum())
	require.Equal(t, 3, election.Config{Voters: make([]election.ID, 5)}.Quorum())

	// Voters is copied: changing the caller's slice later has no effect.
	voters := []election.ID{1, 2, 3}
	c.Voters = voters
	n, err = election.NewNode(c, v.Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	voters[0] = 9
	require.Equal(t, []election.ID{1, 2, 3}, n.Config().Voters)
}

func TestNewNodeNilArguments(t *testing.T) {
	v := newVirtual(t)
	tr := election.TransportFunc(func(election.Message) {})
	st, lv := election.NewMemoryStorage(), election.StaticLog{}
	for name, f := range map[string]func() error{
		"wheel":     func() error { _, err := election.NewNode(validConfig(), nil, tr, st, lv); return err },
		"transport": func() error { _, err := election.NewNode(validConfig(), v.Wheel, nil, st, lv); return err },
		"storage":   func() error { _, err := election.NewNode(validConfig(), v.Wheel, tr, nil, lv); return err },
		"log view":  func() error { _, err := election.NewNode(validConfig(), v.Wheel, tr, st, nil); return err },
	} {
		err := f()
		require.ErrorIs(t, err, election.ErrNilArgument, name)
		require.Contains(t, err.Error(), name)
	}
}
