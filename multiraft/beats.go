package multiraft

import (
	"sync/atomic"
	"time"
)

// A leader's CheckQuorum with Coalesce is judged per peer host, from the
// batches, not per group: the host tallies, for each peer and each of its
// heartbeat ticks, the heartbeat entries it sent the peer at the tick's
// time and the first answers to them (election.Node.TryHeartbeatAnswer),
// in the peer's beatLedger. At the start of the next tick it reads, for
// each peer, whether every one was answered (peer.heard); a group whose
// voters include a quorum of such peers (this host counting as one) and
// whose leader heartbeated them all at the last tick in its current term
// needs no check of its own: its leader is told so
// (election.Node.LeaderTickHeard) and heartbeats without judging its
// acks. The verdicts are fixed at the tick's start, so a leader's check
// is as late as the tick, not as late as its place in the tick's walk;
// the leaders of the other groups (new ones, and those with a peer that
// left a heartbeat unanswered) are judged one by one in the walk, as
// before.
//
// A tally is sound when it says "all answered" only if every entry
// counted was answered: an answer is counted only if the leader took it
// lock-free as the first to a heartbeat sent at that time or later (so
// a repeated answer is not counted twice), and an entry sent twice to
// the same group at one time leaves the tally short, never over. An
// answer stepped under the node's lock is not counted: the tally is then
// short, and the groups fall back to their own checks.

// beatSlots is how many ticks a ledger keeps: more than a lease's worth
// of ticks (a tick's answers that come later than that count for
// nothing), so that a slot is reopened long after its answers came.
const beatSlots = 8

// beatLedger is a peer's tally of heartbeats and answers per tick.
type beatLedger struct{ slots [beatSlots]beatSlot }

// beatSlot is one tick's tally: w holds the tick's key (beatKey) in its
// high half and the answers counted in its low half, so that an answer
// counts only while its tick's slot is open (compare and swap); sent is
// the entries sent at the tick's time.
type beatSlot struct {
	w    atomic.Uint64
	sent atomic.Int64
}

// beatKey is the key of a tick at wheel time at: its time in microseconds,
// 32 bits of it with the lowest set, so that no key is 0 (an unopened
// slot's). Ticks are milliseconds apart, and a key repeats after 71
// minutes, far longer than a ledger's slots last.
func beatKey(at time.Duration) uint64 { return uint64(uint32(at/time.Microsecond) | 1) }

// open starts slot seq's tally for the tick at at. The host's lock is
// held; no entry of the tick is sent before.
func (l *beatLedger) open(seq uint64, at time.Duration) {
	s := &l.slots[seq%beatSlots]
	s.sent.Store(0)
	s.w.Store(beatKey(at) << 32)
}

// sentIn counts n entries sent in slot seq's tick.
func (l *beatLedger) sentIn(seq uint64, n int) { l.slots[seq%beatSlots].sent.Add(int64(n)) }

// sentAt counts an entry sent at at, if at is a tick's time the ledger
// keeps (a leader's own heartbeat in a tick, sent through the Transport).
func (l *beatLedger) sentAt(at time.Duration) {
	k := beatKey(at)
	for i := range l.slots {
		if s := &l.slots[i]; s.w.Load()>>32 == k {
			s.sent.Add(1)
			return
		}
	}
}

// answered counts n first answers to entries sent at at, if its tick's
// slot is open.
func (l *beatLedger) answered(at time.Duration, n int) {
	k := beatKey(at)
	for i := range l.slots {
		s := &l.slots[i]
		for w := s.w.Load(); w>>32 == k; w = s.w.Load() {
			if s.w.CompareAndSwap(w, w+uint64(n)) {
				return
			}
		}
	}
}

// complete reports whether every entry slot seq counted for the tick at
// at was answered.
func (l *beatLedger) complete(seq uint64, at time.Duration) bool {
	s := &l.slots[seq%beatSlots]
	sent := s.sent.Load()
	w := s.w.Load()
	return w>>32 == beatKey(at) && int64(uint32(w)) == sent
}

// answerTally gathers the first answers a Step took lock-free, by send
// time, for its peer's ledger: a batch's answers are mostly to one tick.
type answerTally struct {
	l  *beatLedger // nil: not tallied
	at time.Duration
	n  int
}

// add counts a first answer to an entry sent at at.
func (t *answerTally) add(at time.Duration) {
	if t.l == nil {
		return
	}
	if t.n > 0 && at != t.at {
		t.flush()
	}
	t.at = at
	t.n++
}

// flush adds the answers gathered to the ledger.
func (t *answerTally) flush() {
	if t.n > 0 {
		t.l.answered(t.at, t.n)
		t.n = 0
	}
}

// beginBeats opens the tally of the tick that runs at now for every peer
// and reads the last tick's: peer.heard is set when the peer answered
// every heartbeat the host sent it then. h.mu is held.
func (h *Host) beginBeats(now time.Duration) {
	prev, seq := h.beatAt, h.beatSeq
	h.heardAt = -1 // before the first tick (the node checks the lease)
	if seq > 0 {
		h.heardAt = prev
	}
	h.beatSeq++
	h.beatAt = now
	for _, p := range h.peerList {
		l := &h.outboxOf(p.id).beats
		p.heard = h.heardAt >= 0 && l.complete(seq, prev)
		l.open(h.beatSeq, now)
	}
}

// heardFrom returns the time of the last tick if a quorum of vs's voters
// answered every heartbeat the host sent them then (see beginBeats), and
// -1 otherwise. h.mu is held.
func (h *Host) heardFrom(vs *voterSet) time.Duration {
	if vs.seq != h.beatSeq {
		vs.seq = h.beatSeq
		yes := 0
		for _, id := range vs.ids {
			if id == h.id {
				yes++
			} else if p := h.peers[id]; p != nil && p.heard {
				yes++
			}
		}
		vs.heard = yes >= len(vs.ids)/2+1
	}
	if !vs.heard {
		return -1
	}
	return h.heardAt
}
