package multiraft

import (
	"slices"

	"github.com/raftick/raftick/election"
)

// outStats counts what the host sent; guarded by outMu.
type outStats struct {
	messages, batches, heartbeats, liveness uint64
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
			ob.b.Heartbeats = append(ob.b.Heartbeats, Heartbeat{Group: g, Term: m.Term})
			h.ostats.heartbeats++
			h.outMu.Unlock()
			return
		case election.MsgHeartbeatResp:
			ob := h.outboxFor(m.To)
			if ob.b.Responses == nil {
				ob.b.Responses = make([]HeartbeatResponse, 0, ob.respCap)
			}
			ob.b.Responses = append(ob.b.Responses, HeartbeatResponse{Group: g, Term: m.Term, Granted: m.Granted})
			h.ostats.heartbeats++
			h.outMu.Unlock()
			return
		}
	}
	h.ostats.batches++
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
	b := h.take(to, ob)
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

// take empties to's outbox ob into a batch to send. outMu is held.
func (h *Host) take(to election.ID, ob *outbox) Batch {
	b := ob.b
	b.From, b.To = h.id, to
	ob.b = Batch{}
	// The next batch's slices start at this one's size (the Transport
	// owns this one's): a host sends about as many heartbeats each
	// window, and growing them by doubling allocates twice over.
	ob.hbCap, ob.respCap = max(len(b.Heartbeats), minCap), max(len(b.Responses), minCap)
	ob.sent = true
	h.ostats.batches++
	return b
}

// onFlush sends every outbox's coalesced heartbeats (CoalesceWindow):
// those that no tick or Step sent (flushOut). It takes only outMu, never
// the host's lock, so a long Step does not hold up the wheel's driver;
// Stop stops the timer under outMu, so a flush either re-arms it before
// Stop or sees the host stopped.
func (h *Host) onFlush() {
	h.outMu.Lock()
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	h.flushT.Reset(h.cfg.CoalesceWindow)
	h.flushLocked()
}

// flushOut sends every outbox's coalesced heartbeats and answers now: the
// heartbeat tick calls it after its leaders heartbeat, and Step after it
// delivered a batch, so that a heartbeat and its answer each travel in
// one batch per peer without waiting for the flush timer (a leader's
// CheckQuorum lease counts the round trip). h.mu is not held.
func (h *Host) flushOut() {
	h.outMu.Lock()
	if h.halted.Load() {
		h.outMu.Unlock()
		return
	}
	h.flushLocked()
}

// flushLocked is flushOut with outMu held; it releases outMu.
func (h *Host) flushLocked() {
	var batches []Batch
	for _, to := range h.outOrder {
		if ob := h.out[to]; ob.b.Len() > 0 {
			batches = append(batches, h.take(to, ob))
		}
	}
	h.outMu.Unlock()
	for _, b := range batches {
		h.tr.Send(b)
	}
}

// onPing tells every peer the host is alive if it sent the peer nothing
// since the last tick (LivenessInterval).
func (h *Host) onPing() {
	h.mu.Lock()
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
