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

// TestBeatLedger: a tick's tally is complete when the answers counted to
// its time match the entries sent then; answers to a tick whose slot was
// reopened for a later one, and entries sent at no tick's time, count for
// nothing.
func TestBeatLedger(t *testing.T) {
	var l beatLedger
	const at = 45 * time.Millisecond
	require.False(t, l.complete(1, at), "never opened")
	l.open(1, at)
	require.True(t, l.complete(1, at), "nothing sent")
	l.sentIn(1, 3)
	l.sentAt(at)
	l.sentAt(at + time.Millisecond) // no tick's time
	l.answered(at, 3)
	require.False(t, l.complete(1, at), "one of four unanswered")
	l.answered(at+time.Millisecond, 1) // no tick's time
	require.False(t, l.complete(1, at))
	l.answered(at, 1)
	require.True(t, l.complete(1, at))
	require.False(t, l.complete(1, at+time.Millisecond), "another tick's time")

	l.open(1+beatSlots, at+beatSlots*at) // the slot reused
	l.answered(at, 1)
	require.True(t, l.complete(1+beatSlots, at+beatSlots*at), "the old tick's answer counts for nothing")
	require.False(t, l.complete(1, at))
}

// TestSweepInChunks: a sweep that goes in chunks visits every group awake
// throughout, also when groups go to sleep between its chunks and leave
// the awake list shorter than the part it has not visited.
func TestSweepInChunks(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	h := quietHost(t, v.Wheel)
	defer h.Stop()
	const n = 3 * sweepNodes
	for id := GroupID(10); id < 10+n; id++ { // one voter: the host leads them
		require.NoError(t, h.AddGroup(GroupConfig{ID: id, Voters: []election.ID{1}, Leader: 1}))
		require.NoError(t, h.Touch(id)) // awake
	}
	v.AdvanceBy(time.Millisecond)
	h.lock()
	defer h.unlock()
	require.Len(t, h.awakeL, n)
	for _, g := range h.awakeL {
		g.a.listed = false
	}
	h.leadersL = nil
	h.sweeping, h.sweepUntil, h.sweepI = true, v.Now()+time.Millisecond, len(h.awakeL)
	require.False(t, h.sweepSome(), "a chunk, then the driver's other timers")
	require.Equal(t, n-sweepNodes, h.sweepI)
	// Most of the part not visited goes to sleep (taken off the list
	// here as hibernate would).
	for range n - sweepNodes/2 - sweepNodes {
		h.setAsleep(h.awakeL[0])
	}
	for !h.sweepSome() {
	}
	for _, g := range h.awakeL {
		require.True(t, g.a.listed, "group %d awake throughout, not visited", g.id)
	}
}

// TestTickHeartbeatsEachLeaderOnce: a tick over more leaders than a chunk
// of its walk heartbeats each of them once, at the tick's time, and its
// heartbeats to a peer leave together, in one tick batch.
func TestTickHeartbeatsEachLeaderOnce(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	var batches []Batch
	cfg := DefaultConfig()
	cfg.ID = 1
	cfg.HibernateAfter = 0
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.Logger = hclog.NewNullLogger()
	cfg.Election.ElectionTimeout = 150 * time.Millisecond
	cfg.Election.HeartbeatInterval = 50 * time.Millisecond
	h, err := NewHost(cfg, v.Wheel, TransportFunc(func(b Batch) {
		if b.To == 2 && b.Tick {
			batches = append(batches, b)
		}
	}))
	require.NoError(t, err)
	defer h.Stop()
	const n = 2*walkLeaders + walkLeaders/2
	for id := GroupID(1); id <= n; id++ {
		require.NoError(t, h.AddGroup(GroupConfig{ID: id, Voters: []election.ID{1, 2, 3}, Leader: 1}))
	}
	batches = nil
	v.AdvanceBy(45 * time.Millisecond) // the first tick
	require.Len(t, batches, 1, "one batch to the peer per tick")
	b := batches[0]
	require.Len(t, b.Heartbeats, n)
	seen := map[GroupID]bool{}
	for _, hb := range b.Heartbeats {
		require.Equal(t, 45*time.Millisecond, hb.Sent)
		require.False(t, seen[hb.Group], "group %d twice", hb.Group)
		seen[hb.Group] = true
	}
	h.lock()
	require.False(t, h.walking, "the walk, in chunks, is done")
	require.Len(t, h.leadersL, n)
	h.unlock()
}

// TestYieldUntil: a walk or sweep that began on time may yield the
// driver for a tenth of its period; one that began later than that may
// not yield at all (on a driver behind, each continuation would wait as
// long again).
func TestYieldUntil(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct{ now, due, want time.Duration }{
		{100 * ms, 100 * ms, 105 * ms},
		{105 * ms, 100 * ms, 110 * ms}, // a tenth late: still on time
		{106 * ms, 100 * ms, 106 * ms}, // later: no yield
		{400 * ms, 100 * ms, 400 * ms},
	} {
		require.Equal(t, tc.want, yieldUntil(tc.now, tc.due, 50*ms), "now %v, due %v", tc.now, tc.due)
	}
}
