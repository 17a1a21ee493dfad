package election_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

func validConfig() election.Config {
	c := election.DefaultConfig()
	c.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
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
		{"zero ID", func(c *election.Config) { c.ID = 0 }, "ID"},
		{"no voters", func(c *election.Config) { c.Voters = nil }, "Voters"},
		{"voter 0", func(c *election.Config) { c.Voters = []election.ID{1, 0} }, "Voters"},
		{"duplicate voter", func(c *election.Config) { c.Voters = []election.ID{1, 2, 2} }, "Voters"},
		{"ID not a voter", func(c *election.Config) { c.ID = 4 }, "ID 4: must be one of Voters"},
		{"zero election timeout", func(c *election.Config) { c.ElectionTimeout = 0 }, "ElectionTimeout"},
		{"negative election timeout", func(c *election.Config) { c.ElectionTimeout = -time.Second }, "ElectionTimeout"},
		{"negative heartbeat", func(c *election.Config) { c.HeartbeatInterval = -1 }, "HeartbeatInterval"},
		{"heartbeat >= election timeout", func(c *election.Config) {
			c.ElectionTimeout, c.HeartbeatInterval = 150*time.Millisecond, 200*time.Millisecond
		}, "HeartbeatInterval 200ms: must be less than ElectionTimeout (150ms)"},
		{"heartbeat == election timeout", func(c *election.Config) { c.HeartbeatInterval = c.ElectionTimeout }, "HeartbeatInterval"},
		{"election timeout below the floor (a unit forgotten)", func(c *election.Config) {
			c.ElectionTimeout, c.HeartbeatInterval = 5, 0
		}, "ElectionTimeout 5ns: is below the floor of 1ms"},
		{"negative vote timeout", func(c *election.Config) { c.VoteTimeout = -1 }, "VoteTimeout"},
		{"negative step-down interval", func(c *election.Config) { c.StepDownInterval = -1 }, "StepDownInterval"},
		{"negative lease ratio", func(c *election.Config) { c.LeaseRatio = -0.5 }, "LeaseRatio"},
		{"NaN lease ratio", func(c *election.Config) { c.LeaseRatio = math.NaN() }, "LeaseRatio"},
		{"lease longer than election timeout", func(c *election.Config) { c.LeaseRatio = 1.5 }, "must not exceed ElectionTimeout"},
		{"negative snapshot interval", func(c *election.Config) { c.SnapshotInterval = -1 }, "SnapshotInterval"},
		{"snapshot without callback", func(c *election.Config) { c.SnapshotInterval = time.Second }, "OnSnapshot"},
		{"callback without snapshot", func(c *election.Config) { c.OnSnapshot = func() {} }, "SnapshotInterval"},
		{"negative priority", func(c *election.Config) { c.Priority = -1 }, "Priority"},
		{"priority of a non-voter", func(c *election.Config) { c.Priorities = map[election.ID]int{9: 1} }, "Priorities"},
		{"negative peer priority", func(c *election.Config) { c.Priorities = map[election.ID]int{2: -1} }, "Priorities[2]"},
		{"own priority mismatch", func(c *election.Config) {
			c.Priority, c.Priorities = 5, map[election.ID]int{1: 6}
		}, "must equal Priority"},
		{"negative decay gap", func(c *election.Config) { c.PriorityDecayGap = -1 }, "PriorityDecayGap"},
		{"external heartbeat per peer", func(c *election.Config) { c.ExternalHeartbeat, c.Emulate.HeartbeatPerPeer = true, true },
			"Emulate.HeartbeatPerPeer true: cannot be combined with ExternalHeartbeat"},
		{"negative tick", func(c *election.Config) { c.Emulate.Tick = -1 }, "Emulate.Tick -1ns: must not be negative"},
		{"unknown detection mode", func(c *election.Config) { c.Detection = 7 }, "Detection"},
		{"unknown stickiness mode", func(c *election.Config) { c.Stickiness = 7 }, "Stickiness StickinessMode(7)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.field)
			require.Contains(t, err.Error(), "election: invalid config: ")
			require.ErrorIs(t, err, election.ErrInvalidConfig)
			var fe *election.FieldError
			require.ErrorAs(t, err, &fe)
			require.True(t, strings.HasPrefix(tc.field, fe.Field) || strings.HasPrefix(fe.Reason, tc.field) || strings.Contains(fe.Reason, tc.field),
				"field %q, want %q", fe.Field, tc.field)
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
	require.Zero(t, got.Emulate, "a production config emulates nothing")
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

// TestConfigTypedNilFields: a typed nil in an interface field of Config
// is refused by name; it used to pass Validate and panic at first use.
func TestConfigTypedNilFields(t *testing.T) {
	for name, set := range map[string]func(c *election.Config){
		"Metrics":        func(c *election.Config) { c.Metrics = (*metrics.InmemSink)(nil) },
		"ElectionJitter": func(c *election.Config) { c.ElectionJitter = (*nilJitter)(nil) },
		"Logger":         func(c *election.Config) { c.Logger = (*nilLogger)(nil) },
	} {
		c := validConfig()
		set(&c)
		err := c.Validate()
		require.ErrorIs(t, err, election.ErrInvalidConfig, name)
		require.Contains(t, err.Error(), name)
	}
}

// nilLogger and nilJitter are types for typed nils.
type (
	nilLogger struct{ hclog.Logger }
	nilJitter struct{ repeated.Jitter }
)

func TestNewNodeNilArguments(t *testing.T) {
	v := newVirtual(t)
	tr := election.TransportFunc(func(election.Message) {})
	st, lv := election.NewMemoryStorage(), election.StaticLog{}
	for name, f := range map[string]func() error{
		"wheel":     func() error { _, err := election.NewNode(validConfig(), nil, tr, st, lv); return err },
		"transport": func() error { _, err := election.NewNode(validConfig(), v.Wheel, nil, st, lv); return err },
		"storage":   func() error { _, err := election.NewNode(validConfig(), v.Wheel, tr, nil, lv); return err },
		"log view":  func() error { _, err := election.NewNode(validConfig(), v.Wheel, tr, st, nil); return err },
		// Issue 32, defect 6: typed nils used to be accepted, and Start or
		// Campaign then panicked.
		"transport (election.TransportFunc)": func() error {
			_, err := election.NewNode(validConfig(), v.Wheel, election.TransportFunc(nil), st, lv)
			return err
		},
		"storage (*election.MemoryStorage)": func() error {
			_, err := election.NewNode(validConfig(), v.Wheel, tr, (*election.MemoryStorage)(nil), lv)
			return err
		},
		"storage (*election.FileStorage)": func() error {
			_, err := election.NewNode(validConfig(), v.Wheel, tr, (*election.FileStorage)(nil), lv)
			return err
		},
		"log view (*election_test.mutableLog)": func() error {
			_, err := election.NewNode(validConfig(), v.Wheel, tr, st, (*mutableLog)(nil))
			return err
		},
	} {
		err := f()
		require.ErrorIs(t, err, election.ErrNilArgument, name)
		require.Contains(t, err.Error(), name)
	}
}

// TestDerivedDefaults is the derived-defaults table: DefaultConfig leaves
// the fields derived from ElectionTimeout zero, so setting only
// ElectionTimeout scales them all, and Effective and Node.Config report the
// values in force. DefaultConfig used to store 100ms heartbeats, a 1s vote
// timeout and a 500ms step-down check, which a 150ms ElectionTimeout kept
// (and a 50ms one refused).
func TestDerivedDefaults(t *testing.T) {
	cases := []struct {
		et, hb, vote, stepDown, lease time.Duration
	}{
		{150 * time.Millisecond, 15 * time.Millisecond, 150 * time.Millisecond, 75 * time.Millisecond, 135 * time.Millisecond},
		{50 * time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond, 25 * time.Millisecond, 45 * time.Millisecond},
		{time.Second, 100 * time.Millisecond, time.Second, 500 * time.Millisecond, 900 * time.Millisecond},
		{10 * time.Second, time.Second, 10 * time.Second, 5 * time.Second, 9 * time.Second},
		{time.Millisecond, 100 * time.Microsecond, time.Millisecond, 500 * time.Microsecond, 900 * time.Microsecond}, // the floor
	}
	v := newVirtual(t)
	for _, tc := range cases {
		t.Run(tc.et.String(), func(t *testing.T) {
			c := validConfig()
			c.ElectionTimeout = tc.et
			eff, err := c.Effective()
			require.NoError(t, err)
			n, err := election.NewNode(c, v.Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
			require.NoError(t, err)
			defer n.Stop()
			for _, got := range []election.Config{eff, n.Config()} {
				require.Equal(t, tc.hb, got.HeartbeatInterval, "HeartbeatInterval = ET/10")
				require.Equal(t, tc.vote, got.VoteTimeout, "VoteTimeout = ET")
				require.Equal(t, tc.stepDown, got.StepDownInterval, "StepDownInterval = ET/2")
				require.Equal(t, tc.lease, time.Duration(float64(got.ElectionTimeout)*got.LeaseRatio), "lease = 0.9 ET")
				require.Equal(t, repeated.Proportional(1), got.VoteJitter, "VoteJitter = ElectionJitter")
			}
		})
	}
	// Explicit values are kept.
	c := validConfig()
	c.ElectionTimeout, c.HeartbeatInterval, c.VoteTimeout, c.StepDownInterval = 150*time.Millisecond, 50*time.Millisecond, 300*time.Millisecond, 60*time.Millisecond
	eff, err := c.Effective()
	require.NoError(t, err)
	require.Equal(t, []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 60 * time.Millisecond},
		[]time.Duration{eff.HeartbeatInterval, eff.VoteTimeout, eff.StepDownInterval})
	_, err = election.Config{}.Effective()
	require.Error(t, err)
}

// TestConfigRejectsInvalidJitter: a jitter built with invalid parameters is
// a configuration error naming the field, not a timer that never jitters.
func TestConfigRejectsInvalidJitter(t *testing.T) {
	for field, edit := range map[string]func(c *election.Config){
		"ElectionJitter":  func(c *election.Config) { c.ElectionJitter = repeated.Proportional(-1) },
		"HeartbeatJitter": func(c *election.Config) { c.HeartbeatJitter = repeated.UniformExtra(-time.Second) },
		"VoteJitter":      func(c *election.Config) { c.VoteJitter = repeated.Backoff(100, 0) },
		"SnapshotJitter":  func(c *election.Config) { c.SnapshotJitter = repeated.Backoff(3, -1) },
	} {
		c := validConfig()
		edit(&c)
		err := c.Validate()
		require.ErrorIs(t, err, repeated.ErrInvalidJitter, field)
		require.ErrorIs(t, err, election.ErrInvalidConfig, field)
		var fe *election.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, field, fe.Field)
	}
}

// TestDefaultRandDiffersPerNode: with Config.Rand nil, two nodes with the
// same ID (a node and its restart, or the same config in two processes)
// draw different election timeouts; it used to be seeded from the ID.
func TestDefaultRandDiffersPerNode(t *testing.T) {
	deadline := func() time.Duration {
		v := newVirtual(t)
		var at time.Duration
		c := validConfig()
		c.PreVote = false
		c.Observer = func(e election.Event) {
			if e.Type == election.EventElectionStart && at == 0 {
				at = e.At
			}
		}
		n, err := election.NewNode(c, v.Wheel, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
		require.NoError(t, err)
		require.NoError(t, n.Start())
		v.AdvanceTo(3 * c.ElectionTimeout)
		n.Stop()
		require.NotZero(t, at)
		return at
	}
	a, b, c := deadline(), deadline(), deadline()
	require.False(t, a == b && b == c, "three nodes with ID 1 timed out at the same instant %v", a)
}

// TestStoppedWheelIsAnError: a node whose wheel is stopped could never
// run its timers; NewNode and Start say so instead of a node that never
// campaigns.
func TestStoppedWheelIsAnError(t *testing.T) {
	v := newVirtual(t)
	tr := election.TransportFunc(func(election.Message) {})
	n, err := election.NewNode(validConfig(), v.Wheel, tr, election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	v.Stop()
	require.ErrorIs(t, n.Start(), wheel.ErrStopped)
	_, err = election.NewNode(validConfig(), v.Wheel, tr, election.NewMemoryStorage(), election.StaticLog{})
	require.ErrorIs(t, err, wheel.ErrStopped)
}
