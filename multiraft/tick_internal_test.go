package multiraft

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// TestNextTickKeepsTheRate: a tick that runs a little late keeps the
// next one on the original schedule, so the heartbeats keep their rate;
// one half a period or more late starts the schedule again from now.
func TestNextTickKeepsTheRate(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct{ due, now, want time.Duration }{
		{100 * ms, 100 * ms, 145 * ms}, // on time
		{100 * ms, 112 * ms, 145 * ms}, // late: the next keeps its deadline
		{100 * ms, 122 * ms, 145 * ms}, // just under half a period late
		{100 * ms, 123 * ms, 168 * ms}, // half a period late: not made up for
		{100 * ms, 400 * ms, 445 * ms}, // a stall: no ticks back to back
	} {
		require.Equal(t, tc.want, nextTick(tc.due, tc.now, 45*ms), "due %v, run at %v", tc.due, tc.now)
	}
}

// TestTickEvidenceStartsWithTheBatch: a tick batch counts as stepped
// from when the host began stepping it, so a follower whose last contact
// came from that batch (no earlier than its start) is not taken for left
// out of it, however long the batch took; one last heard before the
// batch began was left out of it.
func TestTickEvidenceStartsWithTheBatch(t *testing.T) {
	const ms = time.Millisecond
	v, h, g := evidenceHost(t)
	v.AdvanceBy(130 * ms)
	h.lock()
	p := h.peers[2]
	// An answer of peer 2 to a heartbeat sent at 50ms, then a tick batch
	// of it stepped from 100ms to now (130ms).
	h.processed(p, &Batch{From: 2, To: 1, Responses: []HeartbeatResponse{{Group: 9, Term: 1, Granted: true, Sent: 50 * ms}}}, 120*ms)
	h.processed(p, &Batch{From: 2, To: 1, Tick: true}, 100*ms)
	h.unlock()
	require.True(t, h.lagging(g, election.Silence{Peer: 2, Since: 110 * ms}), "heard at 110ms, within the batch")
	require.False(t, h.lagging(g, election.Silence{Peer: 2, Since: 90 * ms}), "heard at 90ms, before the batch")
}

// TestAnswerEvidenceStartsWithTheSilence: until a peer's first answer, a
// leader's CheckQuorum holds a voter that has answered nothing yet, once
// the host has sent the peer a tick batch, for holdLimit from when its
// silence began, not longer; a host that sent the peer no heartbeat (a
// candidate that leads nothing there) holds nothing.
func TestAnswerEvidenceStartsWithTheSilence(t *testing.T) {
	const ms = time.Millisecond
	v, h, g := evidenceHost(t)
	v.AdvanceBy(3 * time.Second)
	since := v.Now() - 100*ms
	require.False(t, h.lagging(g, election.Silence{Peer: 2, Since: since, Answers: true}), "no heartbeat sent, no answer due")
	(*h.peerTab.Load())[2].beatsFrom.Store(int64(time.Second))
	require.True(t, h.lagging(g, election.Silence{Peer: 2, Since: since, Answers: true}), "no answer yet, silent for 100ms")
	v.AdvanceBy(h.holdLimit(0))
	require.False(t, h.lagging(g, election.Silence{Peer: 2, Since: since, Answers: true}), "no answer for holdLimit since the silence began")
}

// evidenceHost returns quietHost on a virtual wheel with an awake group
// 9 of voters 1, 2 and 3, both stopped when the test ends.
func evidenceHost(t *testing.T) (*wheel.Virtual, *Host, *group) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { v.Stop() })
	h := quietHost(t, v.Wheel)
	t.Cleanup(h.Stop)
	require.NoError(t, h.AddGroup(GroupConfig{ID: 9, Voters: []election.ID{1, 2, 3}}))
	return v, h, h.groups.get(9)
}
