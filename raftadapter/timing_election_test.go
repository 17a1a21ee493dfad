package raftadapter

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

func TestTimingOf(t *testing.T) {
	base := election.DefaultConfig()
	base.ElectionTimeout = 150 * time.Millisecond
	base.HeartbeatInterval = 0
	base.VoteTimeout = 0
	base.LeaseRatio = 0
	with := func(f func(*election.Config)) election.Config { c := base; f(&c); return c }
	cases := []struct {
		name  string
		in    election.Config
		field string
		want  Timing
	}{
		{name: "defaults", in: election.DefaultConfig(),
			want: Timing{ElectionTimeout: time.Second, LeaseRatio: 0.9, PreVote: true}},
		{name: "defaults with the paper's 150ms", in: with(func(c *election.Config) { *c = election.DefaultConfig(); c.ElectionTimeout = 150 * time.Millisecond }),
			want: Timing{ElectionTimeout: 150 * time.Millisecond, LeaseRatio: 0.9, PreVote: true}},
		{name: "zeros mean election's defaults", in: base,
			want: Timing{ElectionTimeout: 150 * time.Millisecond, LeaseRatio: 0.9, PreVote: true}},
		{name: "nil jitters", in: with(func(c *election.Config) { c.ElectionJitter, c.VoteJitter = nil, nil; c.PreVote = false }),
			want: Timing{ElectionTimeout: 150 * time.Millisecond, LeaseRatio: 0.9}},
		{name: "uniform extra jitter", in: with(func(c *election.Config) { c.ElectionJitter = repeated.UniformExtra(time.Millisecond) }),
			field: "election.Config.ElectionJitter"},
		{name: "vote jitter none", in: with(func(c *election.Config) { c.VoteJitter = repeated.None() }),
			field: "election.Config.VoteJitter"},
		{name: "heartbeat interval out of hashicorp's range", in: with(func(c *election.Config) { c.HeartbeatInterval = 50 * time.Millisecond }),
			field: "election.Config.HeartbeatInterval"},
		{name: "vote timeout below election timeout", in: with(func(c *election.Config) { c.VoteTimeout = 100 * time.Millisecond }),
			field: "election.Config.VoteTimeout"},
		{name: "election timeout below 5ms", in: with(func(c *election.Config) { c.ElectionTimeout = 4 * time.Millisecond }),
			field: "election.Config.ElectionTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TimingOf(tc.in)
			if tc.field == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				_, err := got.RaftConfig("n1", nil)
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidTiming)
			var te *TimingError
			require.True(t, errors.As(err, &te))
			require.Equal(t, tc.field, te.Field)
			require.Contains(t, err.Error(), tc.field)
			require.NotContains(t, err.Error(), "Timing.", "names election's fields only")
		})
	}
}
