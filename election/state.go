package election

import (
	"time"
)

// unlockAndFlush releases the lock, then hands the collected events to the
// observers and the collected messages to the transport.
//
// The two buffers are recycled: after delivery they become the spare
// buffers of the next flush, unless a nested flush (a transport delivering
// synchronously back to this node) already left spares behind.
func (n *Node) unlockAndFlush() {
	out, evs := n.outbox, n.events
	if len(evs) == 0 {
		switch len(out) {
		case 0:
			n.mu.Unlock()
			return
		case 1:
			// One message (a follower's answer): sent from a copy, so
			// that the buffer stays and the node is not locked again.
			m := out[0]
			n.outbox = out[:0]
			n.mu.Unlock()
			n.tr.Send(m)
			return
		}
	}
	n.outbox, n.events = n.spareOut, n.spareEvents
	n.spareOut, n.spareEvents = nil, nil
	observers := n.obs.observers
	n.mu.Unlock()
	n.publish(evs, observers)
	for _, m := range out {
		n.tr.Send(m)
	}
	clear(evs) // drop the Reason strings
	n.mu.Lock()
	if n.spareOut == nil {
		n.spareOut = out[:0]
	}
	if n.spareEvents == nil {
		n.spareEvents = evs[:0]
	}
	n.mu.Unlock()
}

func (n *Node) emit(t EventType, peer ID, reason string) {
	n.emitEvent(Event{Type: t, Term: n.term, Peer: peer, Reason: reason})
}

// emitEvent fills in At, Node, Role, Leader and Seq and queues e.
func (n *Node) emitEvent(e Event) {
	if !n.watched() {
		return
	}
	n.seq++
	e.At, e.Node, e.Role, e.Leader, e.Seq = n.w.Now(), n.id, n.role, n.leader, n.seq
	n.noteEvent(&e)
	n.events = append(n.events, e)
}

func (n *Node) send(m Message) {
	m.From = n.id
	n.sent++
	if n.holding {
		n.held = append(n.held, heldMsg{seq: n.deferSeq, m: m})
		return
	}
	n.outbox = append(n.outbox, m)
}

// ignore counts and reports a message that is dropped.
func (n *Node) ignore(m Message, counter *int64, reason string) {
	*counter++
	if n.logger.IsTrace() {
		n.logger.Trace("ignored message", "msg", m.String(), "reason", reason)
	}
	n.emitEvent(Event{Type: EventIgnored, Term: n.term, Peer: m.From, Reason: reason, Msg: m.Type})
}

// setRole changes the role and reports it.
func (n *Node) setRole(r Role, reason string) {
	if n.role == r {
		return
	}
	n.logger.Debug("role change", "from", n.role, "to", r, "term", n.term, "reason", reason)
	n.role = r
	n.leading.Store(r == Leader)
	n.emit(EventRoleChange, None, reason)
}

// persist saves hs; on failure it counts and reports the error and returns
// false, and the caller abandons the action. A deferred node (see
// NewDeferredNode) hands hs over and holds what it sends from now on
// until hs is durable; that never fails.
func (n *Node) persist(hs HardState, peer ID) bool {
	if n.dst != nil {
		n.deferSeq++
		n.holding = true
		n.dst.Defer(hs, n.deferSeq)
		return true
	}
	if err := n.st.Save(hs); err != nil {
		n.stats.StorageErrors++
		n.logger.Error("cannot save hard state", "term", hs.Term, "vote", hs.Vote, "error", err)
		n.emit(EventIgnored, peer, ReasonStorage+": "+err.Error())
		return false
	}
	return true
}

// stepDown makes the node a follower in term (>= n.term), persisting a
// term change first. It returns false if the term could not be persisted;
// nothing changed then.
func (n *Node) stepDown(term uint64, reason string, peer ID) bool {
	return n.stepDownVoting(term, None, reason, peer)
}

// stepDownVoting is stepDown that, for a higher term, also records a vote
// in the same Save.
func (n *Node) stepDownVoting(term uint64, vote ID, reason string, peer ID) bool {
	higher := term > n.term
	if higher {
		if !n.persist(HardState{Term: term, Vote: vote}, peer) {
			return false
		}
		n.term, n.vote, n.leader = term, vote, None
		n.emit(EventTermChange, peer, reason)
	}
	old := n.role
	if old == Follower {
		if higher && n.cfg.Emulate.RestartTimerOnFollow {
			n.restartElectionTimer(0)
		}
		return true
	}
	n.leader = None
	if old == Leader {
		n.hasContact = false
	}
	n.role = Follower
	n.leading.Store(false)
	n.votes.Clear()
	n.acks = n.acks[:0]
	if n.cfg.Emulate.BackoffOnRejections {
		n.voteJ.leaderKnown() // ocaml-raft: any step-down restarts the backoff
	}
	var keepAt time.Duration
	keep := false
	if old == Candidate && n.keep != nil {
		// KeepTimerOnStepDown: the follower's timer takes over the
		// deadline of the round (if the vote timer is pending: not inside
		// its own trigger).
		keepAt, keep = n.voteT.Deadline()
		if at, deferred := n.deferredVoteDeadline(); !keep && deferred {
			keepAt, keep = at, true // due already, held back by the host
		}
	}
	n.voteT.Stop()
	n.stopHeartbeats()
	n.stepDownT.Stop()
	if old != PreCandidate || n.cfg.Emulate.RestartTimerOnFollow {
		// A pre-candidate's election timer is still running (a fresh one
		// with RestartTimerOnFollow, as etcd); leaders and candidates get a
		// fresh one, or candidates keep their deadline.
		var d time.Duration
		if keep {
			// Due at this very instant but not fired yet: as soon as
			// possible (a timer cannot be armed for 0).
			d = max(keepAt-n.w.Now(), 1)
		}
		n.restartElectionTimer(d)
	}
	n.stats.StepDowns++
	n.logger.Debug("stepped down", "from", old, "term", n.term, "reason", reason)
	n.emit(EventStepDown, peer, reason)
	n.emit(EventRoleChange, peer, reason)
	return true
}

// promise records that the node heard leader at (None: that it started
// at and may have heard one just before): see Node.promised.
func (n *Node) promise(at time.Duration, leader ID) {
	n.promised, n.promisedTo, n.hasPromise = at, leader, true
}

// loyal reports whether the node stays loyal to a leader against
// candidate's (pre-)vote request: it is the leader, it heard a leader
// within ElectionTimeout (in any term: adopting a higher term from an
// answer does not void a promise), or, with StickyUntilTimeout, it knows
// a leader other than candidate. StickyUntilTimeout lets the leader it
// heard campaign, whenever that was.
func (n *Node) loyal(candidate ID) bool {
	if n.role == Leader {
		return true
	}
	if n.cfg.Stickiness == StickyUntilTimeout {
		if n.leader != None && n.leader != candidate {
			return true
		}
		if n.promisedTo != None && n.promisedTo == candidate {
			return false
		}
	}
	return n.promiseHolds()
}

// promiseHolds reports whether the node heard a leader (or started in a
// term above 0) within ElectionTimeout: see Node.promised.
func (n *Node) promiseHolds() bool {
	return n.hasPromise && n.within(n.promised, n.cfg.ElectionTimeout)
}

// promiseForbidsCampaign reports whether the node must not vote for
// itself in a new term now: a leader's lease may count on its promise.
func (n *Node) promiseForbidsCampaign() bool {
	return n.cfg.refusesVotesInLease() && n.promiseHolds()
}

// loyalReason is the reason reported for a refusal by loyal: reason, or
// "leader known" with StickyUntilTimeout.
func (n *Node) loyalReason(reason string) string {
	if n.cfg.Stickiness == StickyUntilTimeout && n.role != Leader {
		return ReasonLeaderKnown
	}
	return reason
}
