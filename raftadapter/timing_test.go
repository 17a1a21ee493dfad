package raftadapter

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/raftick/raftick/internal/logging"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// TestTimingMapping checks every rule of the mapping against hashicorp's
// own raft.ValidateConfig: for each case the naive field-by-field mapping is
// validated by hashicorp too, so a rule of ours that hashicorp does not have
// (or the reverse) shows up as a disagreement.
func TestTimingMapping(t *testing.T) {
	base := DefaultTiming()
	with := func(f func(*Timing)) Timing { tt := base; f(&tt); return tt }
	cases := []struct {
		name  string
		in    Timing
		field string // "" = valid
		// hashicorpRejects says whether raft.ValidateConfig rejects the
		// naive mapping; it differs from field != "" only for raftick-only
		// rules (HeartbeatInterval, negative values that mean "default").
		hashicorpRejects bool
		want             [3]time.Duration // HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout when valid
	}{
		{name: "default", in: base, want: [3]time.Duration{time.Second, time.Second, 500 * ms}},
		{name: "150ms", in: with(func(t *Timing) { t.ElectionTimeout = 150 * ms }), want: [3]time.Duration{150 * ms, 150 * ms, 75 * ms}},
		{name: "minimum 5ms, lease ratio 1", in: with(func(t *Timing) { t.ElectionTimeout = 5 * ms; t.LeaseRatio = 1 }), want: [3]time.Duration{5 * ms, 5 * ms, 5 * ms}},
		{name: "vote timeout longer", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.VoteTimeout = 300 * ms }), want: [3]time.Duration{100 * ms, 300 * ms, 50 * ms}},
		{name: "lease ratio 0 means default", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.LeaseRatio = 0 }), want: [3]time.Duration{100 * ms, 100 * ms, 50 * ms}},
		{name: "heartbeat interval ET/10", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.HeartbeatInterval = 10 * ms }), want: [3]time.Duration{100 * ms, 100 * ms, 50 * ms}},
		{name: "heartbeat interval ET/5", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.HeartbeatInterval = 20 * ms }), want: [3]time.Duration{100 * ms, 100 * ms, 50 * ms}},

		{name: "election timeout below 5ms", in: with(func(t *Timing) { t.ElectionTimeout = 4 * ms }), field: "Timing.ElectionTimeout", hashicorpRejects: true},
		{name: "election timeout zero", in: with(func(t *Timing) { t.ElectionTimeout = 0 }), field: "Timing.ElectionTimeout", hashicorpRejects: true},
		{name: "election timeout negative", in: with(func(t *Timing) { t.ElectionTimeout = -time.Second }), field: "Timing.ElectionTimeout", hashicorpRejects: true},
		{name: "vote timeout below election timeout", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.VoteTimeout = 99 * ms }), field: "Timing.VoteTimeout", hashicorpRejects: true},
		{name: "vote timeout negative", in: with(func(t *Timing) { t.VoteTimeout = -1 }), field: "Timing.VoteTimeout", hashicorpRejects: true},
		{name: "lease ratio above 1", in: with(func(t *Timing) { t.LeaseRatio = 1.01 }), field: "Timing.LeaseRatio", hashicorpRejects: true},
		{name: "lease ratio negative", in: with(func(t *Timing) { t.LeaseRatio = -0.5 }), field: "Timing.LeaseRatio", hashicorpRejects: true},
		{name: "lease ratio NaN", in: with(func(t *Timing) { t.LeaseRatio = math.NaN() }), field: "Timing.LeaseRatio", hashicorpRejects: true},
		{name: "lease below 5ms", in: with(func(t *Timing) { t.ElectionTimeout = 9 * ms; t.LeaseRatio = 0.5 }), field: "Timing.LeaseRatio", hashicorpRejects: true},
		{name: "commit timeout below 1ms", in: with(func(t *Timing) { t.CommitTimeout = 999 * time.Microsecond }), field: "Timing.CommitTimeout", hashicorpRejects: true},
		{name: "commit timeout negative", in: with(func(t *Timing) { t.CommitTimeout = -ms }), field: "Timing.CommitTimeout", hashicorpRejects: true},
		{name: "heartbeat interval too short", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.HeartbeatInterval = 9 * ms }), field: "Timing.HeartbeatInterval"},
		{name: "heartbeat interval too long", in: with(func(t *Timing) { t.ElectionTimeout = 100 * ms; t.HeartbeatInterval = 50 * ms }), field: "Timing.HeartbeatInterval"},
		{name: "heartbeat interval negative", in: with(func(t *Timing) { t.HeartbeatInterval = -ms }), field: "Timing.HeartbeatInterval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// What hashicorp says about the raw values.
			naive := raft.DefaultConfig()
			naive.LocalID = "n1"
			naive.HeartbeatTimeout = tc.in.ElectionTimeout
			naive.ElectionTimeout = tc.in.VoteTimeout
			if tc.in.VoteTimeout == 0 {
				naive.ElectionTimeout = tc.in.ElectionTimeout
			}
			naive.LeaderLeaseTimeout = time.Duration(float64(tc.in.ElectionTimeout) * tc.in.LeaseRatio)
			if tc.in.LeaseRatio == 0 {
				naive.LeaderLeaseTimeout = tc.in.ElectionTimeout / 2
			}
			if math.IsNaN(tc.in.LeaseRatio) {
				naive.LeaderLeaseTimeout = -1
			}
			naive.CommitTimeout = tc.in.CommitTimeout
			require.Equal(t, tc.hashicorpRejects, raft.ValidateConfig(naive) != nil,
				"hashicorp's verdict on the naive mapping: %v", raft.ValidateConfig(naive))

			cfg, err := tc.in.RaftConfig("n1", nil)
			if tc.field == "" {
				require.NoError(t, err)
				require.NoError(t, tc.in.Validate())
				require.Equal(t, tc.want, [3]time.Duration{cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout})
				require.Equal(t, !tc.in.PreVote, cfg.PreVoteDisabled)
				require.Equal(t, raft.ServerID("n1"), cfg.LocalID)
				require.NotNil(t, cfg.Logger)
				require.NoError(t, raft.ValidateConfig(cfg))
				return
			}
			require.Error(t, err)
			require.Nil(t, cfg)
			require.ErrorIs(t, err, ErrInvalidTiming)
			var te *TimingError
			require.True(t, errors.As(err, &te))
			require.Equal(t, tc.field, te.Field)
			require.Contains(t, err.Error(), tc.field)
			require.Contains(t, err.Error(), "raftadapter: ")
			require.Equal(t, err, tc.in.Validate())
		})
	}
}

func TestTimingApplyKeepsOtherFields(t *testing.T) {
	c := raft.DefaultConfig()
	c.LocalID = "x"
	c.MaxAppendEntries = 7
	c.SnapshotThreshold = 3
	tm := DefaultTiming()
	tm.ElectionTimeout = 200 * ms
	tm.PreVote = false
	require.NoError(t, tm.Apply(c))
	require.Equal(t, 7, c.MaxAppendEntries)
	require.Equal(t, uint64(3), c.SnapshotThreshold)
	require.Equal(t, 200*ms, c.HeartbeatTimeout)
	require.True(t, c.PreVoteDisabled)

	// On error nothing changes.
	before := *c
	bad := tm
	bad.ElectionTimeout = ms
	require.ErrorIs(t, bad.Apply(c), ErrInvalidTiming)
	require.Equal(t, before.HeartbeatTimeout, c.HeartbeatTimeout)

	// A raft.Config hashicorp rejects for a non-timing reason is reported
	// with hashicorp's own error.
	c.LocalID = ""
	err := tm.Apply(c)
	var te *TimingError
	require.True(t, errors.As(err, &te))
	require.Empty(t, te.Field)
	require.Error(t, errors.Unwrap(err))
	require.Contains(t, err.Error(), "LocalID cannot be empty")

	require.Error(t, tm.Apply(nil))
	_, err = tm.RaftConfig("", nil)
	require.ErrorContains(t, err, "LocalID")
}

// TestDefaultLoggerIsNotSilent: RaftConfig without a logger gives
// hashicorp/raft the module's default logger, which writes warnings and
// errors (not hashicorp's Info and Debug lines) to the default output.
func TestDefaultLoggerIsNotSilent(t *testing.T) {
	var out bytes.Buffer
	defer logging.SetOutput(&out)()
	c, err := DefaultTiming().RaftConfig("n1", nil)
	require.NoError(t, err)
	c.Logger.Info("routine")
	c.Logger.Warn("heartbeat timeout reached")
	require.NotContains(t, out.String(), "routine")
	require.Contains(t, out.String(), "raftick.raftadapter: heartbeat timeout reached")
}
