package sim

import (
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// Network.CancelBackoff: LogCabin's cancelled RPCs. A server issues each
// request (a vote request, a heartbeat) as an RPC of its own to the
// peer, one at a time per peer. When the server's role or term changes
// it interrupts every RPC whose reply has not arrived yet; an
// interrupted RPC counts as failed, so the server sends that peer nothing
// until CancelBackoff after the RPC started, and its late reply is
// discarded. The rules, from RaftConsensus.cc of 2013-14:
//
//   - interruptAll() runs at the end of stepDown (a higher term; every
//     heartbeat and every vote granted also pass through it),
//     startNewElection and becomeLeader, after the writes they make
//     under the lock, and cancels each peer's outstanding RPC
//     (Peer::interrupt, OpaqueClientRPC::cancel), unless its reply has
//     already arrived;
//   - a cancelled RPC fails (callRPC returns false), and requestVote and
//     appendEntries then set backoffUntil = start + RPC_FAILURE_BACKOFF_MS
//     (2000 ms until 5ba222e of 2014-03-19, then half the election
//     timeout: 75 ms by default);
//   - the peer's thread sleeps until then, and then sends what the
//     server's state asks for: a candidate its vote request (if that
//     peer has not answered in this term), a leader a heartbeat;
//   - each peer's thread has one RPC out at a time (Peer::callRPC waits
//     for the reply), so a request due meanwhile leaves when the reply
//     arrives (or, the RPC cancelled, when the backoff ends);
//   - an RPC that fails (its server is down, its link cut) backs off the
//     same way.

// rpcPeer is what a server knows of its RPCs to one peer.
type rpcPeer struct {
	seq     uint64            // the latest request's number (Cluster.rpcSeq); 0: none
	start   time.Duration     // when it left
	out     bool              // its reply has not arrived
	discard bool              // a reply still to come belongs to a cancelled RPC
	backoff time.Duration     // nothing is sent to the peer before then
	held    *election.Message // the latest request waiting to leave
	flush   *wheel.Timer      // sends held when the backoff ends
}

// rpcTo returns sv's RPC state for peer id.
func (sv *server) rpcTo(id election.ID) *rpcPeer {
	for int(id) >= len(sv.rpc) {
		sv.rpc = append(sv.rpc, nil)
	}
	p := sv.rpc[id]
	if p == nil {
		p = &rpcPeer{}
		sv.rpc[id] = p
	}
	return p
}

// rpcRequest reports whether msg is a request that waits for a reply.
func rpcRequest(msg election.Message) bool {
	return msg.Type == election.MsgVote || msg.Type == election.MsgPreVote || msg.Type == election.MsgHeartbeat
}

// rpcSend decides whether the request msg of from leaves now: not while
// the previous RPC to its peer is out, nor while the peer is backed off;
// it is then held (replacing an older one) until the reply arrives or
// the backoff ends.
func (c *Cluster) rpcSend(from *server, msg election.Message) bool {
	p := from.rpcTo(msg.To)
	now := c.w.Now()
	if p.out || now < p.backoff {
		if p.held != nil {
			c.stats.Cancelled++ // superseded before it could leave
		}
		m := msg
		p.held = &m
		if !p.out {
			c.armFlush(from, msg.To, p)
		}
		return false
	}
	c.rpcSeq++
	p.seq, p.start, p.out, p.discard = c.rpcSeq, now, true, false
	return true
}

// armFlush makes the held request of from to peer leave when the backoff
// ends, if the server still wants it sent then.
func (c *Cluster) armFlush(from *server, to election.ID, p *rpcPeer) {
	if p.flush == nil {
		p.flush = new(wheel.Timer)
		if err := p.flush.Init(c.w.Wheel, func() { c.flushHeld(from, to) }); err != nil {
			return // the wheel is stopped: nothing leaves any more
		}
	}
	p.flush.Reset(max(p.backoff-c.w.Now(), 0))
}

// flushHeld sends the request held for peer to, if its sender is up and
// still in the role and term that sent it: a vote request while a
// candidate of that term, a heartbeat while its leader.
func (c *Cluster) flushHeld(sv *server, to election.ID) {
	p := sv.rpcTo(to)
	msg := p.held
	if msg == nil || p.out || c.w.Now() < p.backoff {
		return // still waiting: a reply or the backoff's end flushes it
	}
	p.held = nil
	st := sv.node.Status()
	current := sv.up && st.Term == msg.Term
	switch msg.Type {
	case election.MsgHeartbeat:
		current = current && st.Role == election.Leader
	case election.MsgVote:
		current = current && st.Role == election.Candidate
	case election.MsgPreVote:
		current = sv.up && st.Role == election.PreCandidate
	}
	if !current {
		c.stats.Cancelled++
		return
	}
	if sv.paused {
		sv.held = append(sv.held, *msg)
		return
	}
	c.transmit(sv, *msg)
}

// rpcReply reports whether the response msg, arriving at its
// destination, is taken: the reply of a cancelled RPC is discarded. A
// reply arrives at the RPC layer even while its server is blocked.
func (c *Cluster) rpcReply(to *server, msg election.Message) bool {
	p := to.rpcTo(msg.From)
	if p.discard {
		p.discard = false
		c.stats.Cancelled++
		return false
	}
	p.out = false
	if p.held != nil {
		c.armFlush(to, msg.From, p) // after the reply is handled
	}
	return true
}

// rpcDropped fails the RPC msg belongs to: msg (a request or its reply)
// will not arrive.
func (c *Cluster) rpcDropped(msg election.Message) {
	switch {
	case c.cfg.Network.CancelBackoff <= 0:
	case rpcRequest(msg):
		c.rpcFailed(msg)
	case msg.Type.IsResponse():
		c.rpcFailed(election.Message{From: msg.To, To: msg.From})
	}
}

// rpcFailed ends the RPC of msg.From to msg.To, which will get no
// reply: it fails, and the peer is backed off.
func (c *Cluster) rpcFailed(msg election.Message) {
	from := c.server(msg.From)
	if from == nil {
		return
	}
	p := from.rpcTo(msg.To)
	if !p.out {
		return
	}
	p.out = false
	p.backoff = max(p.backoff, p.start+c.cfg.Network.CancelBackoff)
	if p.held != nil {
		c.armFlush(from, msg.To, p)
	}
}

// interruptOn reports whether e makes its node run LogCabin's
// interruptAll: a new election, a won election, a higher term, a step
// down, a vote granted to another server, a new leader's heartbeat.
func interruptOn(e election.Event) bool {
	switch e.Type {
	case election.EventElectionStart:
		return !e.PreVote
	case election.EventLeaderElected, election.EventTermChange, election.EventStepDown, election.EventLeaderKnown:
		return true
	case election.EventVoteGranted:
		return !e.PreVote && e.Peer != e.Node
	}
	return false
}

// interrupt cancels, once the writes sv is making end, every RPC of sv
// that was in flight at this instant and whose reply has not arrived by
// then.
func (c *Cluster) interrupt(sv *server) {
	mark := c.rpcSeq
	pending := false
	for _, p := range sv.rpc {
		if p != nil && p.out && p.seq <= mark {
			pending = true
			break
		}
	}
	if !pending {
		return
	}
	t := new(wheel.Timer)
	check := func() {
		if !sv.up {
			return
		}
		now := c.w.Now()
		if c.cfg.Network.DiskBlocks && sv.diskEnd > now {
			t.Reset(sv.diskEnd - now)
			return
		}
		for id, p := range sv.rpc { // in peer order: deterministic
			if p != nil && p.out && p.seq <= mark {
				p.out, p.discard = false, true
				p.backoff = max(p.backoff, p.start+c.cfg.Network.CancelBackoff)
				if p.held != nil {
					c.armFlush(sv, election.ID(id), p)
				}
			}
		}
	}
	// At this instant's end: the writes of the change are issued after
	// its event.
	if t.Init(c.w.Wheel, check) == nil {
		t.Reset(0)
	}
}
