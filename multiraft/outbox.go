package multiraft

import (
	"slices"

	"github.com/raftick/raftick/election"
)

// outStats counts what the host sent; guarded by outMu.
type outStats struct {
	messages, batches, heartbeats, liveness uint64
	// batches by why they left (see Stats)
	tick, answer, loose, control, direct uint64
}

// send is every group node's outbound path: heartbeats and their answers
// wait in the peer's outbox when coalescing, everything else leaves at
// once in a batch of its own. It takes only outMu, so a node may call it
// whether or not the host's lock is held.
func (h *Host) send(g GroupID, m election.Message) {
	h.outMu.Lock()
	h.ostats.messages++
	if h.cfg.Coalesce {
		switch m.Type {
		case election.MsgHeartbeat:
			ob := h.outboxFor(m.To)
			if ob.b.Heartbeats == nil {
				ob.b.Heartbeats = make([]Heartbeat, 0, ob.hbCap)
			}
			ob.b.Heartbeats = append(ob.b.Heartbeats, Heartbeat{Group: g, Term: m.Term, Sent: m.Sent})
			// A heartbeat of the tick leaves with the tick's batch; any
			// other (a leader's own timer, a woken leader) is loose.
			ob.loose = ob.loose || !h.ticking
			h.ostats.heartbeats++
			h.outMu.Unlock()
			return
		case election.MsgHeartbeatResp:
			ob := h.outboxFor(m.To)
			if ob.b.Responses == nil {
				ob.b.Responses = make([]HeartbeatResponse, 0, ob.respCap)
			}
			ob.b.Responses = append(ob.b.Responses, HeartbeatResponse{Group: g, Term: m.Term, Granted: m.Granted, Sent: m.Sent})
			// An answer made while a Step delivers heartbeats from its
			// peer leaves when that Step ends; any other is loose.
			ob.loose = ob.loose || ob.answering == 0
			h.ostats.heartbeats++
			h.outMu.Unlock()
			return
		}
	}
	h.ostats.batches++
	h.ostats.direct++
	h.outboxFor(m.To).sent = true
	h.outMu.Unlock()
	h.tr.Send(Batch{From: h.id, To: m.To, Msgs: []GroupMessage{{Group: g, Msg: m}}})
}

// control sends a hibernation message to peer at once, after whatever
// waits in the peer's outbox, in the same batch: a follower sees the
// leader's last heartbeats before it is told to hibernate.
func (h *Host) control(to election.ID, c Control) {
	h.outMu.Lock()
	h.ostats.messages++
	ob := h.outboxFor(to)
	ob.b.Controls = append(ob.b.Controls, c)
	b := h.take(to, ob, true, true)
	h.ostats.control++
	h.outMu.Unlock()
	h.tr.Send(b)
}

// outboxFor returns peer to's outbox. outMu is held.
func (h *Host) outboxFor(to election.ID) *outbox {
	ob := h.out[to]
	if ob == nil {
		ob = &outbox{}
		h.out[to] = ob
		i, _ := slices.BinarySearch(h.outOrder, to)
		h.outOrder = slices.Insert(h.outOrder, i, to)
	}
	return ob
}

// take empties to's outbox ob into a batch to send: its heartbeats if hbs
// is set, its answers if resps is, and its controls. outMu is held.
func (h *Host) take(to election.ID, ob *outbox, hbs, resps bool) Batch {
	b := Batch{From: h.id, To: to, Msgs: ob.b.Msgs, Controls: ob.b.Controls}
	ob.b.Msgs, ob.b.Controls = nil, nil
	// The next batch's slices start at this one's size (the Transport
	// owns this one's): a host sends about as many heartbeats each
	// window, and growing them by doubling allocates twice over.
	if hbs {
		b.Heartbeats, ob.b.Heartbeats = ob.b.Heartbeats, nil
		ob.hbCap = max(len(b.Heartbeats), minCap)
	}
	if resps {
		b.Responses, ob.b.Responses = ob.b.Responses, nil
		ob.respCap = max(len(b.Responses), minCap)
	}
	if ob.b.Len() == 0 {
		ob.loose = false
	}
	ob.sent = true
	h.ostats.batches++
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
// only outMu, never the host's lock, so a long Step does not hold up the
// wheel's driver; Stop stops the timer under outMu, so a flush either
// re-arms it before Stop or sees the host stopped.
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
func (h *Host) beginTick() {
	h.outMu.Lock()
	h.ticking = true
	h.outMu.Unlock()
}

// endTick sends every outbox after the tick's heartbeats, but leaves the
// answers to a peer whose heartbeats a Step is delivering. h.mu is not
// held.
func (h *Host) endTick() {
	h.outMu.Lock()
	h.ticking = false
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	var batches []Batch
	for _, to := range h.outOrder {
		ob := h.out[to]
		resps := ob.answering == 0
		if len(ob.b.Heartbeats) > 0 || resps && len(ob.b.Responses) > 0 {
			batches = append(batches, h.take(to, ob, true, resps))
			h.ostats.tick++
		}
	}
	h.outMu.Unlock()
	h.sendAll(batches)
}

// beginAnswers marks the answers to peer from made from now on as those
// of a Step delivering heartbeats from it.
func (h *Host) beginAnswers(from election.ID) {
	h.outMu.Lock()
	h.outboxFor(from).answering++
	h.outMu.Unlock()
}

// endAnswers sends the answers of a Step that delivered heartbeats from
// peer from, with whatever else waits for that peer, but not heartbeats
// while a tick is running (the tick sends them). It also sends the other
// peers' loose entries (a leader elected or woken during the Step
// heartbeats at once, not a window later), with the window's restraint.
// h.mu is not held.
func (h *Host) endAnswers(from election.ID) {
	h.outMu.Lock()
	ob := h.outboxFor(from)
	ob.answering--
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	hbs := !h.ticking
	var batches []Batch
	if len(ob.b.Responses) > 0 || hbs && len(ob.b.Heartbeats) > 0 {
		batches = append(batches, h.take(from, ob, hbs, true))
		h.ostats.answer++
	}
	batches = h.takeLoose(batches)
	h.outMu.Unlock()
	h.sendAll(batches)
}

// takeLoose appends to batches the outboxes with loose entries, each
// taking what no tick or Step in progress is about to send, and returns
// them. outMu is held.
func (h *Host) takeLoose(batches []Batch) []Batch {
	for _, to := range h.outOrder {
		ob := h.out[to]
		if !ob.loose {
			continue
		}
		hbs, resps := !h.ticking, ob.answering == 0
		if hbs && len(ob.b.Heartbeats) > 0 || resps && len(ob.b.Responses) > 0 {
			batches = append(batches, h.take(to, ob, hbs, resps))
			h.ostats.loose++
		}
	}
	return batches
}

// sendAll hands batches to the Transport. outMu is not held.
func (h *Host) sendAll(batches []Batch) {
	for _, b := range batches {
		h.tr.Send(b)
	}
}

// onPing tells every peer the host is alive if it sent the peer nothing
// since the last tick (LivenessInterval).
func (h *Host) onPing() {
	h.mustLock()
	if h.stopped {
		h.unlock()
		return
	}
	h.pingT.Reset(h.cfg.LivenessInterval)
	to := h.peerIDs // sorted; only grows, under h.mu
	h.unlock()
	h.outMu.Lock()
	var quiet []election.ID
	for _, id := range to {
		ob := h.outboxFor(id)
		if !ob.sent {
			quiet = append(quiet, id)
			h.ostats.batches++
			h.ostats.liveness++
		}
		ob.sent = false
	}
	h.outMu.Unlock()
	for _, id := range quiet {
		h.tr.Send(Batch{From: h.id, To: id})
	}
}
