package multiraft

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// TestLeaderListedAgain: a leader that steps down is dropped from the
// heartbeat tick's list by the next tick, and when it wins again it is
// listed at once. With ExternalHeartbeat a leader the tick does not visit
// sends no heartbeat after the ones it sends as it wins; a stale "listed"
// mark kept such a leader off the list. One deposed and elected again
// between two ticks keeps its entry, and the next tick heartbeats it in
// its new term.
func TestLeaderListedAgain(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	cfg := DefaultConfig()
	cfg.ID = 1
	cfg.HibernateAfter = 0
	cfg.Election.ElectionTimeout = 150 * time.Millisecond
	cfg.Election.PreVote, cfg.Election.CheckQuorum = false, false
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.Logger = hclog.NewNullLogger()
	var beats []Heartbeat // the heartbeats to host 2
	h, err := NewHost(cfg, v.Wheel, TransportFunc(func(b Batch) {
		if b.To == 2 {
			beats = append(beats, b.Heartbeats...)
		}
	}))
	require.NoError(t, err)
	defer h.Stop()
	require.NoError(t, h.AddGroup(GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}, Storage: election.NewMemoryStorage(), Leader: 1}))
	count := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		g := h.groups.get(1)
		n := 0
		for _, e := range h.leadersL {
			if e.id == 1 && e.node == g.node {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, count(), "a leader is listed as it resumes")

	// Just after a heartbeat tick (every 13.5ms), a heartbeat of term 2
	// deposes it; it wins term 3 before the next tick.
	v.AdvanceTo(14 * time.Millisecond)
	h.Step(Batch{From: 2, To: 1, Heartbeats: []Heartbeat{{Group: 1, Term: 2}}})
	win := func(term uint64) {
		require.NoError(t, h.Campaign(1))
		h.Step(Batch{From: 2, To: 1, Msgs: []GroupMessage{{Group: 1,
			Msg: election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: term, Granted: true}}}})
		st, err := h.Status(1)
		require.NoError(t, err)
		require.Equal(t, election.Leader, st.Status.Role)
	}
	win(3)
	require.Equal(t, 1, count(), "a leader elected again between two ticks keeps its one entry")
	beats = nil
	v.AdvanceTo(28 * time.Millisecond)
	require.NotEmpty(t, beats)
	require.Equal(t, Heartbeat{Group: 1, Term: 3, Sent: 27 * time.Millisecond}, beats[len(beats)-1], "the next tick heartbeats it in its new term")

	// Deposed again, it is dropped by the tick at 40.5ms, and listed as
	// it wins term 5.
	h.Step(Batch{From: 2, To: 1, Heartbeats: []Heartbeat{{Group: 1, Term: 4}}})
	v.AdvanceTo(41 * time.Millisecond)
	require.Equal(t, 0, count(), "the tick drops a follower")
	win(5)
	require.Equal(t, 1, count(), "a leader elected again is listed again")
}

// TestLeaderListedOnce: a leader deposed just before a heartbeat tick is
// dropped from the list by that tick, so when it wins again before the
// next sweep it is listed once, and each tick heartbeats it once. The
// tick used to leave it in the list with its mark cleared, and the win
// appended it a second time.
func TestLeaderListedOnce(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	cfg := DefaultConfig()
	cfg.ID = 1
	cfg.HibernateAfter = 0
	cfg.Election.ElectionTimeout = 150 * time.Millisecond
	cfg.Election.PreVote, cfg.Election.CheckQuorum = false, false
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.Logger = hclog.NewNullLogger()
	h, err := NewHost(cfg, v.Wheel, TransportFunc(func(Batch) {}))
	require.NoError(t, err)
	defer h.Stop()
	require.NoError(t, h.AddGroup(GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}, Storage: election.NewMemoryStorage(), Leader: 1}))
	count := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		n := 0
		for _, e := range h.leadersL {
			if e.id == 1 {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, count())

	// Deposed at 12ms; the tick at 13.5ms drops it; the sweep comes at 15ms.
	v.AdvanceTo(12 * time.Millisecond)
	h.Step(Batch{From: 2, To: 1, Heartbeats: []Heartbeat{{Group: 1, Term: 2}}})
	v.AdvanceTo(14 * time.Millisecond)
	require.Equal(t, 0, count(), "the tick drops a follower")

	require.NoError(t, h.Campaign(1))
	h.Step(Batch{From: 2, To: 1, Msgs: []GroupMessage{{Group: 1,
		Msg: election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 3, Granted: true}}}})
	require.Equal(t, 1, count(), "a leader elected again is listed once")
}
