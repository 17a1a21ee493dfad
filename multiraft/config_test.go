package multiraft_test

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

func TestConfigValidate(t *testing.T) {
	ok := multiraft.DefaultConfig()
	ok.ID = 1
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		field string
		edit  func(*multiraft.Config)
	}{
		{"ID", func(c *multiraft.Config) { c.ID = 0 }},
		{"Election.ElectionTimeout", func(c *multiraft.Config) { c.Election.ElectionTimeout = -1 }},
		{"Election", func(c *multiraft.Config) { c.Election.Observer = func(election.Event) {} }},
		{"HibernateAfter", func(c *multiraft.Config) { c.HibernateAfter = -time.Second }},
		{"CoalesceWindow", func(c *multiraft.Config) { c.CoalesceWindow = time.Second }},
		{"LivenessInterval", func(c *multiraft.Config) { c.LivenessInterval = -1 }},
		{"LivenessTimeout", func(c *multiraft.Config) { c.LivenessTimeout = 10 * time.Millisecond }},
		{"LivenessTimeout", func(c *multiraft.Config) { c.LivenessTimeout = 900 * time.Millisecond }},
		{"FailoverInFlight", func(c *multiraft.Config) { c.FailoverInFlight = -1 }},
		{"GroupLabels", func(c *multiraft.Config) {
			c.GroupLabels, c.Election.MetricsLabels = true, []metrics.Label{{Name: "group", Value: "x"}}
		}},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		require.ErrorIs(t, err, multiraft.ErrInvalidConfig, tc.field)
		var fe *multiraft.FieldError
		require.True(t, errors.As(err, &fe), tc.field)
		require.Equal(t, tc.field, fe.Field)
		_, err = multiraft.NewHost(c, nil, nil)
		require.ErrorIs(t, err, multiraft.ErrInvalidConfig)
	}
}

func TestAddGroupErrors(t *testing.T) {
	h := newBareHost(t)
	st := election.NewMemoryStorage()
	good := multiraft.GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}, Storage: st}
	require.NoError(t, h.AddGroup(good))
	require.ErrorIs(t, h.AddGroup(good), multiraft.ErrGroupExists)
	for _, gc := range []multiraft.GroupConfig{
		{ID: 2, Voters: []election.ID{2, 3}, Storage: st},
		{ID: 2, Voters: []election.ID{1, 1}, Storage: st},
		{ID: 2, Voters: []election.ID{1, 2}, Storage: st, Leader: 5},
	} {
		require.ErrorIs(t, h.AddGroup(gc), multiraft.ErrInvalidConfig, "%+v", gc)
	}
	// A storage that fails: the group is not added.
	bad := election.NewMemoryStorage()
	require.NoError(t, bad.Save(election.HardState{Term: election.MaxTerm + 1}))
	require.Error(t, h.AddGroup(multiraft.GroupConfig{ID: 3, Voters: []election.ID{1, 2}, Storage: bad}))
	_, err := h.Status(3)
	require.ErrorIs(t, err, multiraft.ErrUnknownGroup)
	require.EqualValues(t, 1, h.Stats().Groups)
	require.ErrorIs(t, h.Touch(9), multiraft.ErrUnknownGroup)
	h.Stop()
	require.ErrorIs(t, h.Touch(1), multiraft.ErrStopped)
	require.ErrorIs(t, h.AddGroup(multiraft.GroupConfig{ID: 4, Voters: []election.ID{1}, Storage: st}), multiraft.ErrStopped)
}

// TestStepIgnoresStrangers checks that batches and entries from unknown
// hosts, for unknown groups or from non-voters are counted, not acted on.
func TestStepIgnoresStrangers(t *testing.T) {
	h := newBareHost(t)
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}, Storage: election.NewMemoryStorage(), Leader: 2}))
	vote := election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5}
	h.Step(multiraft.Batch{From: 9, To: 1, Msgs: []multiraft.GroupMessage{{Group: 1, Msg: vote}}}) // unknown host
	h.Step(multiraft.Batch{From: 2, To: 7, Msgs: []multiraft.GroupMessage{{Group: 1, Msg: vote}}}) // wrong host
	h.Step(multiraft.Batch{From: 2, To: 1, Msgs: []multiraft.GroupMessage{{Group: 4, Msg: vote}}}) // unknown group
	h.Step(multiraft.Batch{From: 3, To: 1, Msgs: []multiraft.GroupMessage{{Group: 1, Msg: vote}}}) // From mismatch
	h.Step(multiraft.Batch{From: 2, To: 1, Controls: []multiraft.Control{{Kind: 99, Group: 1}}})   // unknown kind
	s := h.Stats()
	require.Equal(t, int64(5), s.Ignored)
	require.EqualValues(t, 1, s.Hibernating, "nothing woke the group")
	st, err := h.Status(1)
	require.NoError(t, err)
	require.Equal(t, uint64(1), st.Status.Term)
}

// TestNewHostTickFloor checks that NewHost refuses periods below the
// wheel's tick, with the field named: nanosecond timings were accepted
// and kept a virtual wheel firing millions of times per millisecond.
func TestNewHostTickFloor(t *testing.T) {
	v := newTestWheel(t)
	tr := multiraft.TransportFunc(func(multiraft.Batch) {})
	base := multiraft.DefaultConfig()
	base.ID = 1
	for _, tc := range []struct {
		field string
		edit  func(*multiraft.Config)
	}{
		{"Election.ElectionTimeout", func(c *multiraft.Config) {
			c.Election.ElectionTimeout, c.Election.HeartbeatInterval, c.CoalesceWindow = 20, 2, 1 // below election's floor, which names the unit
		}},
		{"Election.HeartbeatInterval", func(c *multiraft.Config) { c.Election.HeartbeatInterval = 500 * time.Microsecond }},
		{"LivenessInterval", func(c *multiraft.Config) { c.LivenessInterval = 10 * time.Microsecond }},
		{"CoalesceWindow", func(c *multiraft.Config) {
			c.Election.HeartbeatInterval, c.CoalesceWindow = 1500*time.Microsecond, 700*time.Microsecond
		}},
	} {
		c := base
		tc.edit(&c)
		_, err := multiraft.NewHost(c, v.Wheel, tr)
		require.ErrorIs(t, err, multiraft.ErrInvalidConfig, tc.field)
		var fe *multiraft.FieldError
		require.True(t, errors.As(err, &fe), tc.field)
		require.Equal(t, tc.field, fe.Field)
		require.Regexp(t, "tick|floor of 1ms", err.Error(), tc.field)
	}
	// A window left to its default (half of 1.5ms) is raised to the tick.
	c := base
	c.Election.HeartbeatInterval = 1500 * time.Microsecond
	h, err := multiraft.NewHost(c, v.Wheel, tr)
	require.NoError(t, err)
	require.Equal(t, v.Tick(), h.Config().CoalesceWindow)
	h.Stop()
}

// TestDefaultLivenessTimeoutValidates: a LivenessTimeout left 0 takes a
// value its own checks accept, whatever the timeouts: with ElectionTimeout
// 150ms and HeartbeatInterval 50ms the election timeout (150ms) is below
// the lease (135ms) plus the coalescing window (25ms), and DefaultConfig
// used to fail its own Validate.
func TestDefaultLivenessTimeoutValidates(t *testing.T) {
	for _, tc := range []struct{ et, hb time.Duration }{
		{150 * time.Millisecond, 50 * time.Millisecond},
		{150 * time.Millisecond, 70 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{100 * time.Millisecond, 45 * time.Millisecond},
	} {
		c := multiraft.DefaultConfig()
		c.ID = 1
		c.Election.ElectionTimeout, c.Election.HeartbeatInterval = tc.et, tc.hb
		require.NoError(t, c.Validate(), "ET %v HB %v", tc.et, tc.hb)
		v := newTestWheel(t)
		h, err := multiraft.NewHost(c, v.Wheel, multiraft.TransportFunc(func(multiraft.Batch) {}))
		require.NoError(t, err, "ET %v HB %v", tc.et, tc.hb)
		require.GreaterOrEqual(t, h.Config().LivenessTimeout, tc.et)
		h.Stop()
	}
}

// TestNewHostNilTransport: a nil TransportFunc, or a nil pointer in the
// Transport interface, is refused as a nil Transport is, not taken and
// called later from a wheel callback or Campaign (which panicked).
func TestNewHostNilTransport(t *testing.T) {
	v := newTestWheel(t)
	c := multiraft.DefaultConfig()
	c.ID = 1
	var f multiraft.TransportFunc
	var p *nilTransport
	for name, tr := range map[string]multiraft.Transport{"nil": nil, "nil TransportFunc": f, "nil pointer": p} {
		_, err := multiraft.NewHost(c, v.Wheel, tr)
		require.ErrorIs(t, err, multiraft.ErrInvalidConfig, name)
	}
}

type nilTransport struct{}

func (*nilTransport) Send(multiraft.Batch) {}
