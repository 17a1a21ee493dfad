package multiraft

import (
	"sync"
	"time"

	"github.com/raftick/raftick/election"
)

// Step delivers an inbound batch. Entries for unknown groups, from
// non-voters, or addressed to another host are ignored and counted in
// Stats; Step never panics on them. A batch from a peer node resets that
// node's liveness timer. The coalesced heartbeats and answers of awake
// groups are stepped without the host's lock, so that Steps from several
// peers run in parallel; the other entries (those of hibernating groups,
// single messages, controls) follow in order under the lock, which a long
// batch lets other calls and the host's timers take in between.
//
// Step never waits for a disk: a HardState it changes is written by the
// host's persister, and the messages that depend on it leave after that.
// It may be called from an Observer or a synchronous Transport.
func (h *Host) Step(b Batch) {
	if !h.cfg.Coalesce || len(b.Heartbeats) == 0 || b.To != h.id {
		h.step(b)
		return
	}
	// The answers to b's heartbeats wait in the outbox of b's sender
	// and leave together when the Step ends.
	h.beginAnswers(b.From)
	h.step(b)
	h.endAnswers(b.From)
}

// step is Step without sending the answers.
func (h *Host) step(b Batch) {
	if !h.admit(b) {
		return
	}
	var in inbound
	begun := h.w.Now() // before any entry's contact (see peer.tickAt)
	hb := election.Message{Type: election.MsgHeartbeat, From: b.From, To: h.id}
	slowHB := stepFast(h, &in, b.Heartbeats, hb, heartbeatEntry)
	resp := election.Message{Type: election.MsgHeartbeatResp, From: b.From, To: h.id}
	slowResp := stepFast(h, &in, b.Responses, resp, answerEntry)

	h.lock()
	defer h.unlock()
	h.stats.Delivered += in.delivered
	h.stats.Ignored += in.ignored
	if h.stopped {
		return
	}
	h.stepNow = h.w.Now()
	k := 0
	for _, i := range slowHB {
		if !h.yield(&k) {
			return
		}
		e := b.Heartbeats[i]
		hb.Term, hb.Sent = e.Term, e.Sent
		h.deliver(e.Group, hb)
	}
	for _, i := range slowResp {
		if !h.yield(&k) {
			return
		}
		e := b.Responses[i]
		resp.Term, resp.Granted, resp.Sent = e.Term, e.Granted, e.Sent
		h.deliver(e.Group, resp)
	}
	for _, gm := range b.Msgs {
		if gm.Msg.From != b.From || gm.Msg.To != h.id {
			h.stats.Ignored++
			continue
		}
		h.deliver(gm.Group, gm.Msg)
	}
	for _, c := range b.Controls {
		h.onControl(b.From, c)
	}
	if p := h.peers[b.From]; p != nil {
		h.processed(p, &b, begun)
	}
}

// admit counts batch b and checks where it comes from and goes to; for a
// batch from a known peer to this host it restarts the peer's liveness
// timer and reports true. h.mu is not held.
func (h *Host) admit(b Batch) bool {
	h.lock()
	defer h.unlock()
	if h.stopped {
		return false
	}
	h.stats.BatchesReceived++
	p := h.peers[b.From]
	if b.To != h.id || p == nil {
		h.stats.Ignored += int64(max(b.Len(), 1))
		return false
	}
	h.heard(p)
	return true
}

// inbound counts what a Step's lock-free path did, for Stats.
type inbound struct{ delivered, ignored int64 }

// fastChunk is how many coalesced entries Step's lock-free path resolves
// under one read lock of the group index, steps at one clock read, and
// answers with one lock of the outbox. (Yielding the processor between
// chunks, runtime.Gosched, made a starved process's hosts fall behind
// into election storms in scalemix at 20k groups: not done.)
const fastChunk = 256

// stepFast steps the coalesced entries es of awake groups, from peer
// tmpl.From, each as the message tmpl with the fields entry reads of it
// (entry's plain function keeps the per-entry work to a few loads; the
// message is made only for an entry stepped under the node's lock),
// without the host's lock: an
// awake group's node and acks are published in group.fast, and a node
// serializes its own messages. Entries go in chunks of fastChunk: the
// chunk's groups are looked up under h.gmu (read), then stepped with it
// released (a node's observers and sends may call the Host, and AddGroup
// takes gmu to write), at the wheel time read once per chunk; the
// heartbeats' answers (election.Node.StepAt's direct ones) join the
// peer's outbox together at the chunk's end. An answer's ack is recorded
// at that time too. A heartbeat of a follower that heard its leader, and
// an answer to a leader, are taken without locking the node where it
// allows it (election.Node.TryHeartbeat, TryHeartbeatResp; the host
// configures election.Config.ExternalContact), and stepped otherwise.
// It returns the indexes of the entries whose group
// hibernates (or is being put to sleep or woken), for the caller to
// deliver under the lock, in order. Unknown groups and senders are
// counted as ignored. Neither h.mu nor outMu is held. A group looked up
// stays valid after gmu is released.
//
// The chunk's lookups prefetch ahead (see lookahead); the line of a node
// an entry touches lock-free is prefetched lookDist entries ahead as the
// chunk is stepped. A batch whose groups are those of the peer's last
// batch of the kind, in the same order, is not looked up: its entries go
// to the nodes recalled from that batch (see recall).
func stepFast[E any](h *Host, in *inbound, es []E, tmpl election.Message, entry func(*E) fastMsg) (slow []int) {
	if len(es) == 0 {
		return nil
	}
	var (
		ahead  lookahead
		batch  [fastChunk]fastEntry
		ansBuf [fastChunk]HeartbeatResponse
	)
	answers := ansBuf[:0]
	from := tmpl.From
	hbs := tmpl.Type == election.MsgHeartbeat // a batch's entries are of one kind
	groupOf := func(i int) GroupID { return entry(&es[i]).group }
	var tally answerTally // the first answers to the host's ticks (beats.go)
	if !hbs && h.cfg.Coalesce {
		tally.l = &h.outboxOf(from).beats
	}
	rc := h.recallOf(from, hbs)
	recalled := false
	if rc != nil {
		defer rc.mu.Unlock()
		recalled = rc.matches(len(es), groupOf)
		if !recalled {
			rc.reset(len(es))
		}
	}
	for base := 0; base < len(es); base += fastChunk {
		end := min(base+fastChunk, len(es))
		chunk := batch[:end-base]
		if recalled {
			for i := base; i < end; i++ {
				chunk[i-base] = fastEntry{n: rc.nodes[i]}
			}
		} else {
			h.gmu.RLock()
			if base == 0 {
				ahead.start(h, len(es), groupOf)
			}
			for i := base; i < end; i++ {
				e := &chunk[i-base]
				*e = fastEntry{}
				h.resolve(e, ahead.next(h, i), from, in, &slow, i)
				if rc != nil {
					rc.ids, rc.nodes = append(rc.ids, groupOf(i)), append(rc.nodes, e.n)
				}
			}
			h.gmu.RUnlock()
		}
		now := h.w.Now()
		h.stamp.refresh(now)
		for i := range chunk {
			n := chunk[i].n
			if j := i + lookDist; j < len(chunk) && chunk[j].n != nil {
				prefetchEntry(chunk[j].n, hbs)
			}
			f := entry(&es[base+i])
			id := f.group
			took, first := false, false
			if n != nil {
				took, first = h.tryFast(n, hbs, from, f, now)
			}
			if !took && recalled {
				// The recalled node declined (or there was none): the
				// entry is looked up as if nothing were recalled, for
				// the group may have slept, woken on a new node, or be
				// unknown. A node found again declined just now.
				e := &chunk[i]
				h.gmu.RLock()
				h.resolve(e, h.groups.get(id), from, in, &slow, base+i)
				h.gmu.RUnlock()
				rc.nodes[base+i] = e.n
				if e.n != nil && e.n != n {
					took, first = h.tryFast(e.n, hbs, from, f, now)
				}
				n = e.n
			}
			if n == nil {
				continue
			}
			in.delivered++
			if took {
				if hbs { // a heartbeat taken: answer it, granting its term
					answers = append(answers, HeartbeatResponse{Group: id, Term: f.term, Granted: true, Sent: f.sent})
				} else if first {
					tally.add(f.sent)
				}
				continue
			}
			m := tmpl
			m.Term, m.Granted, m.Sent = f.term, f.granted, f.sent
			if r, direct := n.StepAt(m, now); direct {
				if h.cfg.Coalesce {
					answers = append(answers, HeartbeatResponse{Group: id, Term: r.Term, Granted: r.Granted, Sent: r.Sent})
				} else {
					h.send(id, r)
				}
			}
		}
		if len(answers) > 0 {
			h.sendAnswers(from, answers, len(es)-base)
			answers = answers[:0]
		}
		tally.flush()
	}
	return slow
}

// resolve fills e for entry i, whose group is g (nil: unknown), from peer
// from: the group's awake node, or nil with the entry counted as ignored
// (an unknown group, a sender not among its voters) or appended to slow
// (a group asleep). h.gmu is held (read).
func (h *Host) resolve(e *fastEntry, g *group, from election.ID, in *inbound, slow *[]int, i int) {
	e.n = nil
	if g == nil || g.voters.index(from) < 0 {
		in.ignored++
		return
	}
	if e.n = g.fast.Load(); e.n == nil {
		*slow = append(*slow, i)
	}
}

// tryFast offers coalesced entry f from peer from to node n's lock-free
// path: a heartbeat or a granted answer. It reports whether n took it; a
// heartbeat taken is owed an answer that grants its term and echoes its
// send time, which the caller queues (so that stepFast's chunk buffer
// stays on its stack). first reports an answer taken as the first to its
// heartbeat (election.Node.TryHeartbeatAnswer).
func (h *Host) tryFast(n *election.Node, hbs bool, from election.ID, f fastMsg, now time.Duration) (took, first bool) {
	if hbs {
		return h.cfg.Coalesce && n.TryHeartbeat(from, f.term, now), false
	}
	if !f.granted {
		return false, false
	}
	return n.TryHeartbeatAnswer(from, f.term, f.sent, now)
}

// fastMsg is what stepFast reads of a coalesced entry: its group and the
// fields of the message it stands for that differ from entry to entry.
type fastMsg struct {
	group   GroupID
	term    uint64
	sent    time.Duration
	granted bool
}

func heartbeatEntry(e *Heartbeat) fastMsg {
	return fastMsg{group: e.Group, term: e.Term, sent: e.Sent}
}

func answerEntry(e *HeartbeatResponse) fastMsg {
	return fastMsg{group: e.Group, term: e.Term, sent: e.Sent, granted: e.Granted}
}

// recall is what stepFast remembers of a peer's last coalesced batch of
// one kind: its groups' IDs in order and their awake nodes (nil: none).
// A batch with the same IDs (a peer sends the same groups tick after
// tick) skips the group index and the groups: each entry goes to its
// recalled node's lock-free path, and one the node declines (it may have
// been stopped and replaced since, or be busy) is looked up afresh. A
// node recalled stays valid to offer an entry to: a stopped node takes
// nothing lock-free. Guarded by mu, which a Step holds from its first
// entry of the kind to its last; a second Step from the same peer at
// once goes without (TryLock).
type recall struct {
	mu    sync.Mutex
	ids   []GroupID
	nodes []*election.Node
}

// recallOf returns peer from's recall of the kind (heartbeats or
// answers), locked, or nil if another Step holds it.
func (h *Host) recallOf(from election.ID, hbs bool) *recall {
	k := 1
	if hbs {
		k = 0
	}
	rc := &h.outboxOf(from).recall[k]
	if !rc.mu.TryLock() {
		return nil
	}
	return rc
}

// matches reports whether the recalled batch had n entries with the
// IDs id returns, in order.
func (rc *recall) matches(n int, id func(i int) GroupID) bool {
	if len(rc.ids) != n {
		return false
	}
	for i, g := range rc.ids {
		if id(i) != g {
			return false
		}
	}
	return true
}

// reset empties the recall for a batch of n entries.
func (rc *recall) reset(n int) {
	clear(rc.nodes) // let the old nodes go
	rc.ids, rc.nodes = rc.ids[:0], rc.nodes[:0]
	if cap(rc.ids) < n {
		rc.ids, rc.nodes = make([]GroupID, 0, n), make([]*election.Node, 0, n)
	}
}

// fastEntry is one entry of a chunk of stepFast: its group's awake node
// (nil: none, or asleep).
type fastEntry struct {
	n *election.Node
}

// stepChunk is how many entries Step delivers under the host's lock
// before it lets other users of the lock in: a batch may hold one entry
// per hibernating group, and a Touch that wakes a group or a timer of the
// host should not wait for all of them.
const stepChunk = 64

// yield counts one entry of a Step in *k and, every stepChunk entries,
// releases and retakes the host's lock. It reports false if the host
// stopped meanwhile. Entries are still delivered in the batch's order,
// and the batch's controls after its heartbeats. h.mu is held.
//
// It does not yield the processor (runtime.Gosched): that made the wheel's
// driver run sooner, but also let followers' election timers fire while
// the heartbeats that would have reset them waited in batches not yet
// stepped, and the scalemix runs made with it did not get better.
func (h *Host) yield(k *int) bool {
	if *k++; *k%stepChunk != 0 {
		return true
	}
	h.unlock()
	h.lock()
	h.stepNow = h.w.Now()
	return !h.stopped
}

// deliver steps one message into its group, waking the group if it
// hibernates and the message calls for it. h.mu is held.
func (h *Host) deliver(gid GroupID, m election.Message) {
	h.deliverTo(h.groups.get(gid), m)
}

// deliverTo is deliver to group g, nil if unknown. h.mu is held.
func (h *Host) deliverTo(g *group, m election.Message) {
	var from int
	if g == nil {
		from = -1
	} else {
		from = g.voters.index(m.From)
	}
	if from < 0 {
		h.stats.Ignored++
		return
	}
	h.stats.Delivered++
	if g.node == nil {
		d := g.dormant
		switch {
		case m.Type == election.MsgHeartbeat && m.Term == d.Term && m.From == d.Leader:
			// The leader it sleeps under: answer as an awake follower
			// would, without waking (its timers would only be pushed back).
			h.stats.AnsweredAsleep++
			g.dormant.Contact = h.stepNow // the lease counts on this answer
			h.send(g.id, election.Message{Type: election.MsgHeartbeatResp, From: h.id, To: m.From, Term: d.Term, Granted: true, Sent: m.Sent})
			return
		case m.Type.IsResponse() && m.Term <= d.Term:
			// A late answer: a hibernating replica has no request out.
			h.stats.IgnoredAsleep++
			return
		}
		if h.wakeFor(g, m.From, m) != nil {
			return
		}
	}
	g.node.Step(m)
	if m.Type == election.MsgVoteResp {
		h.listLeader(g) // elected
		if g.fo > 0 && g.node.Leading() {
			h.won(g)
		}
	}
}

// onControl handles a hibernation message. h.mu is held.
func (h *Host) onControl(from election.ID, c Control) {
	g := h.groups.get(c.Group)
	if g == nil || g.voters.index(from) < 0 {
		h.stats.Ignored++
		return
	}
	switch c.Kind {
	case Hibernate:
		ok := false
		if g.node == nil {
			ok = g.dormant.Term == c.Term && g.dormant.Leader == from
		} else if st := g.node.Status(); st.Role == election.Follower && st.Term == c.Term && st.Leader == from && !h.touchedWithin(g) {
			ok = h.hibernate(g)
		}
		h.control(from, Control{Kind: HibernateAck, Group: c.Group, Term: c.Term, OK: ok})
	case HibernateAck:
		if !c.OK && g.node == nil && g.dormant.Term == c.Term && g.dormant.Leader == h.id {
			h.stats.HibernateRefused++
			_ = h.wake(g, g.dormant, false)
		}
	case Wake:
		if g.node == nil && c.Term >= g.dormant.Term {
			_ = h.wakeFor(g, from, election.Message{Term: c.Term})
		}
	default:
		h.stats.Ignored++
	}
}
