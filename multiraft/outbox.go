package multiraft

import (
	"slices"
	"sync"

	"github.com/raftick/raftick/election"
)

// outbox holds what waits to be sent to one peer. Its mutex guards every
// field; a group node's heartbeats and answers take only it (send), so
// Steps answering different peers do not contend. Flushes take it inside
// Host.outMu (outMu -> outbox.mu).
type outbox struct {
	mu   sync.Mutex
	b    Batch
	sent bool // something was sent since the last liveness tick
	// hbCap is the number of heartbeats the last tick sent this peer:
	// the next tick's batch is made that large at once.
	hbCap int
	// answering counts the Steps delivering heartbeats from this peer:
	// their answers to it leave when they end (endAnswers).
	answering int
	// loose is set while entries wait that no tick or Step in progress
	// made: the flush timer sends them.
	loose bool
	stats outStats
	// recall holds the groups' nodes of the last coalesced batch of
	// heartbeats ([0]) and of answers ([1]) this peer sent (see
	// stepFast): the peer sends the same groups tick after tick.
	recall [2]recall
	// beats is the tally of the peer's answers to the host's heartbeat
	// ticks (see beats.go).
	beats beatLedger
}

// minCap is the least capacity of an outbox's heartbeat slices.
const minCap = 8

// slicePool keeps the entry slices of released batches (Batch.Release)
// for the outboxes of every Host in the process. Only slices of at least
// minPooled entries are kept, and taken for as many: the tick's and the
// answers' batches, of about the same size from one flush to the next,
// and not the few loose entries of the others.
type slicePool[T any] struct{ p sync.Pool }

// minPooled is the least capacity a pooled slice has.
const minPooled = 256

var (
	hbPool   slicePool[Heartbeat]
	respPool slicePool[HeartbeatResponse]
)

// put keeps s's array for reuse.
func (p *slicePool[T]) put(s []T) {
	if cap(s) >= minPooled {
		s = s[:0]
		p.p.Put(&s)
	}
}

// reserve returns s with room for n more elements: s itself if it has
// it, else a copy with exactly that room, in a pooled array when one is
// large enough. The batches' slices belong to the Transport once sent,
// so each is made once, at the size its flush needs, rather than grown
// by doubling (which allocates it twice over).
func (p *slicePool[T]) reserve(s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	want := len(s) + n
	if want >= minPooled {
		if v, _ := p.p.Get().(*[]T); v != nil {
			if r := *v; cap(r) >= want {
				return append(r, s...)
			}
			// Too small for this batch: left to the collector.
		}
	}
	return append(make([]T, 0, want), s...)
}

// outStats counts what the host sent to one peer; guarded by outbox.mu.
type outStats struct {
	messages, batches, heartbeats, liveness int64
	// batches by why they left (see Stats)
	tick, answer, loose, control, direct int64
}

// add adds o's counts to s.
func (s *outStats) add(o *outStats) {
	s.messages += o.messages
	s.batches += o.batches
	s.heartbeats += o.heartbeats
	s.liveness += o.liveness
	s.tick += o.tick
	s.answer += o.answer
	s.loose += o.loose
	s.control += o.control
	s.direct += o.direct
}

// send is every group node's outbound path: heartbeats and their answers
// wait in the peer's outbox when coalescing, everything else leaves at
// once in a batch of its own. It takes only the peer's outbox lock, so a
// node may call it whether or not the host's lock is held, and Steps from
// several peers answer in parallel.
func (h *Host) send(g GroupID, m election.Message) {
	ob := h.outboxOf(m.To)
	ob.mu.Lock()
	ob.stats.messages++
	if h.cfg.Coalesce {
		switch m.Type {
		case election.MsgHeartbeat:
			if ob.b.Heartbeats == nil {
				ob.b.Heartbeats = make([]Heartbeat, 0, minCap)
			}
			ob.b.Heartbeats = append(ob.b.Heartbeats, Heartbeat{Group: g, Term: m.Term, Sent: m.Sent})
			ob.beats.sentAt(m.Sent)
			// A heartbeat of the tick leaves with the tick's batch; any
			// other (a leader's own timer, a woken leader) is loose.
			// endTick clears ticking before it takes this outbox's lock,
			// so a heartbeat that finds ticking set is taken by it.
			ob.loose = ob.loose || !h.ticking.Load()
			ob.stats.heartbeats++
			ob.mu.Unlock()
			return
		case election.MsgHeartbeatResp:
			if ob.b.Responses == nil {
				ob.b.Responses = make([]HeartbeatResponse, 0, minCap)
			}
			ob.b.Responses = append(ob.b.Responses, HeartbeatResponse{Group: g, Term: m.Term, Granted: m.Granted, Sent: m.Sent})
			// An answer made while a Step delivers heartbeats from its
			// peer leaves when that Step ends; any other is loose.
			ob.loose = ob.loose || ob.answering == 0
			ob.stats.heartbeats++
			ob.mu.Unlock()
			return
		}
	}
	ob.stats.batches++
	ob.stats.direct++
	ob.sent = true
	ob.mu.Unlock()
	h.emitBatch(Batch{From: h.id, To: m.To, Msgs: []GroupMessage{{Group: g, Msg: m}}})
}

// sendAnswers queues the coalesced answers rs to peer to, as send
// queues one each, with one lock of the outbox; more is how many answers
// at most the caller's Step may still queue, rs included, so that the
// outbox's slice is made once per batch of answers. The caller keeps rs.
func (h *Host) sendAnswers(to election.ID, rs []HeartbeatResponse, more int) {
	ob := h.outboxOf(to)
	ob.mu.Lock()
	n := int64(len(rs))
	ob.stats.messages += n
	ob.stats.heartbeats += n
	ob.b.Responses = respPool.reserve(ob.b.Responses, max(more, len(rs)))
	ob.b.Responses = append(ob.b.Responses, rs...)
	ob.loose = ob.loose || ob.answering == 0
	ob.mu.Unlock()
}

// control sends a hibernation message to peer at once, after whatever
// waits in the peer's outbox, in the same batch: a follower sees the
// leader's last heartbeats before it is told to hibernate.
func (h *Host) control(to election.ID, c Control) {
	ob := h.outboxOf(to)
	ob.mu.Lock()
	ob.stats.messages++
	ob.b.Controls = append(ob.b.Controls, c)
	b := h.take(to, ob, true, true)
	ob.stats.control++
	ob.mu.Unlock()
	h.emitBatch(b)
}

// outboxOf returns peer to's outbox, creating it on first use. It takes
// outMu only to create one.
func (h *Host) outboxOf(to election.ID) *outbox {
	if ob := (*h.outs.Load())[to]; ob != nil {
		return ob
	}
	h.outMu.Lock()
	defer h.outMu.Unlock()
	return h.outboxFor(to)
}

// outboxFor returns peer to's outbox, creating it on first use: the map
// of outboxes is replaced, never changed, so that outboxOf reads it
// without a lock. outMu is held.
func (h *Host) outboxFor(to election.ID) *outbox {
	old := *h.outs.Load()
	if ob := old[to]; ob != nil {
		return ob
	}
	ob := &outbox{}
	m := make(map[election.ID]*outbox, len(old)+1)
	for id, o := range old {
		m[id] = o
	}
	m[to] = ob
	h.outs.Store(&m)
	i, _ := slices.BinarySearch(h.outOrder, to)
	h.outOrder = slices.Insert(h.outOrder, i, to)
	return ob
}

// take empties to's outbox ob into a batch to send: its heartbeats if hbs
// is set, its answers if resps is, and its controls. ob.mu is held.
func (h *Host) take(to election.ID, ob *outbox, hbs, resps bool) Batch {
	b := Batch{From: h.id, To: to, Msgs: ob.b.Msgs, Controls: ob.b.Controls}
	ob.b.Msgs, ob.b.Controls = nil, nil
	if hbs {
		b.Heartbeats, ob.b.Heartbeats = ob.b.Heartbeats, nil
	}
	if resps {
		b.Responses, ob.b.Responses = ob.b.Responses, nil
	}
	if ob.b.Len() == 0 {
		ob.loose = false
	}
	ob.sent = true
	ob.stats.batches++
	return b
}

// A coalesced entry waits in its peer's outbox until one of three
// flushes sends it, and each flush takes only what no other flush in
// progress is about to send, so that a tick's heartbeats to a peer, and
// a Step's answers to its peer, leave in one batch each:
//
//   - the heartbeat tick, when it has made all its leaders heartbeat,
//     sends every outbox (endTick), but not the answers to a peer while a
//     Step is delivering heartbeats from it;
//   - a Step that delivered heartbeats sends its peer's outbox when it
//     ends (endAnswers), but not heartbeats while a tick is running;
//   - the flush timer, every CoalesceWindow, and the end of every Step
//     that delivered heartbeats send the outboxes with loose entries,
//     those no tick or Step in progress made (a leader's own heartbeat
//     timer, the first heartbeats of a leader just elected or woken), with
//     the same restraint.
//
// In steady state every heartbeat is the tick's and every answer a
// Step's, and each peer gets exactly one heartbeat batch per tick and one
// answer batch per batch of heartbeats it sent.

// onFlush sends the outboxes with loose entries (CoalesceWindow). It takes
// only outMu and the outboxes' locks, never the host's lock, so a long
// Step does not hold up the wheel's driver; Stop stops the timer under
// outMu, so a flush either re-arms it before Stop or sees the host
// stopped.
func (h *Host) onFlush() {
	h.outMu.Lock()
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	h.flushT.Reset(h.cfg.CoalesceWindow)
	batches := h.takeLoose(nil)
	h.outMu.Unlock()
	h.sendAll(batches)
}

// beginTick marks the heartbeats sent from now on as the tick's.
func (h *Host) beginTick() { h.ticking.Store(true) }

// endTick sends every outbox after the tick's heartbeats, but leaves the
// answers to a peer whose heartbeats a Step is delivering. h.mu is not
// held.
func (h *Host) endTick() {
	h.outMu.Lock()
	h.ticking.Store(false) // before any outbox is taken (see send)
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	var batches []Batch
	outs := *h.outs.Load()
	for _, to := range h.outOrder {
		ob := outs[to]
		ob.mu.Lock()
		resps := ob.answering == 0
		if len(ob.b.Heartbeats) > 0 || resps && len(ob.b.Responses) > 0 {
			b := h.take(to, ob, true, resps)
			b.Tick = len(b.Heartbeats) > 0
			// The next tick sends about as many heartbeats to this peer.
			ob.hbCap = max(len(b.Heartbeats), minCap)
			if p := (*h.peerTab.Load())[to]; b.Tick && p != nil && p.beatsFrom.Load() < 0 {
				p.beatsFrom.Store(int64(h.w.Now()))
			}
			batches = append(batches, b)
			ob.stats.tick++
		}
		ob.mu.Unlock()
	}
	h.outMu.Unlock()
	h.sendAll(batches)
}

// beginAnswers marks the answers to peer from made from now on as those
// of a Step delivering heartbeats from it.
func (h *Host) beginAnswers(from election.ID) {
	ob := h.outboxOf(from)
	ob.mu.Lock()
	ob.answering++
	ob.mu.Unlock()
}

// endAnswers sends the answers of a Step that delivered heartbeats from
// peer from, with whatever else waits for that peer, but not heartbeats
// while a tick is running (the tick sends them). It also sends the other
// peers' loose entries (a leader elected or woken during the Step
// heartbeats at once, not a window later), with the window's restraint.
// h.mu is not held.
func (h *Host) endAnswers(from election.ID) {
	var batches []Batch
	ob := h.outboxOf(from)
	ob.mu.Lock()
	ob.answering--
	if !h.halted.Load() {
		hbs := !h.ticking.Load()
		if len(ob.b.Responses) > 0 || hbs && len(ob.b.Heartbeats) > 0 {
			batches = append(batches, h.take(from, ob, hbs, true))
			ob.stats.answer++
		}
	}
	ob.mu.Unlock()
	if h.halted.Load() {
		return
	}
	h.outMu.Lock()
	batches = h.takeLoose(batches)
	h.outMu.Unlock()
	h.sendAll(batches)
}

// takeLoose appends to batches the outboxes with loose entries, each
// taking what no tick or Step in progress is about to send, and returns
// them. outMu is held.
func (h *Host) takeLoose(batches []Batch) []Batch {
	outs := *h.outs.Load()
	for _, to := range h.outOrder {
		ob := outs[to]
		ob.mu.Lock()
		if ob.loose {
			hbs, resps := !h.ticking.Load(), ob.answering == 0
			if hbs && len(ob.b.Heartbeats) > 0 || resps && len(ob.b.Responses) > 0 {
				batches = append(batches, h.take(to, ob, hbs, resps))
				ob.stats.loose++
			}
		}
		ob.mu.Unlock()
	}
	return batches
}

// sendAll hands batches to the Transport. No lock of the host is held.
func (h *Host) sendAll(batches []Batch) {
	for _, b := range batches {
		h.tr.Send(b)
	}
}
