package multiraft_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// TestRecalledNodeReplaced steps the same coalesced batch of heartbeats
// before and after one of its groups hibernated and woke on a new node:
// the batch is recalled (its groups are the last batch's), the stopped
// node recalled for that group declines, and the entry reaches the new
// node, which answers it like every other group's.
func TestRecalledNodeReplaced(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	var answered []multiraft.HeartbeatResponse
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	cfg.Election.ElectionTimeout = time.Minute
	cfg.Election.HeartbeatInterval = 10 * time.Second
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.HibernateAfter = 5 * time.Millisecond // the followers agree to sleep when asked
	cfg.Rand = rand.New(rand.NewPCG(1, 2))
	h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(b multiraft.Batch) {
		answered = append(answered, b.Responses...)
	}))
	require.NoError(t, err)
	t.Cleanup(h.Stop)
	const groups = 8
	hbs := multiraft.Batch{From: 2, To: 1}
	for g := range multiraft.GroupID(groups) {
		require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: g + 1, Voters: []election.ID{1, 2, 3}, Leader: 2}))
		hbs.Heartbeats = append(hbs.Heartbeats, multiraft.Heartbeat{Group: g + 1, Term: 1})
	}
	v.AdvanceBy(time.Millisecond) // the bootstrap states are written
	for g := range multiraft.GroupID(groups) {
		require.NoError(t, h.Touch(g+1)) // bootstrapped asleep: wake
	}
	require.Zero(t, h.Stats().Hibernating)
	step := func() []multiraft.HeartbeatResponse {
		answered = nil
		for i := range hbs.Heartbeats {
			hbs.Heartbeats[i].Sent = v.Now()
		}
		h.Step(hbs)
		v.AdvanceBy(time.Millisecond) // the answers leave
		return answered
	}
	for range 3 { // the first makes the leader known, the second opens the gates
		require.Len(t, step(), groups)
	}
	const g = 5
	v.AdvanceBy(10 * time.Millisecond) // untouched for HibernateAfter
	before := h.Stats().Wakes
	h.Step(multiraft.Batch{From: 2, To: 1, Controls: []multiraft.Control{{Kind: multiraft.Hibernate, Group: g, Term: 1}}})
	require.EqualValues(t, 1, h.Stats().Hibernating, "group %d sleeps", g)
	h.Step(multiraft.Batch{From: 2, To: 1, Controls: []multiraft.Control{{Kind: multiraft.Wake, Group: g, Term: 1}}})
	require.Zero(t, h.Stats().Hibernating, "group %d woke", g)
	require.Equal(t, before+1, h.Stats().Wakes)
	got := step()
	require.Len(t, got, groups, "every group answers, the woken one too")
	for _, r := range got {
		require.True(t, r.Granted, "group %d", r.Group)
	}
}
