package election

import (
	"fmt"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// Start loads the HardState from Storage, becomes a follower in the loaded
// term and arms the election (and snapshot) timer. It returns ErrStopped
// after Stop, ErrAlreadyStarted on a second call, wheel.ErrStopped
// (wrapped) if the node's wheel was stopped, or the Storage's error.
func (n *Node) Start() error { return n.start(nil) }

// start is Start, resuming from d (see Resume) when d is not nil.
func (n *Node) start(d *Dormant) error {
	n.lock()
	if n.stopped {
		n.mu.Unlock()
		return ErrStopped
	}
	if n.started {
		n.mu.Unlock()
		return ErrAlreadyStarted
	}
	if n.w.Stopped() { // its timers could never run
		n.mu.Unlock()
		return fmt.Errorf("election: Start: %w", wheel.ErrStopped)
	}
	hs, err := n.st.Load()
	if err != nil {
		n.stats.StorageErrors++
		n.mu.Unlock()
		return fmt.Errorf("election: Start: load hard state: %w", err)
	}
	if hs.Term > MaxTerm {
		n.mu.Unlock()
		return fmt.Errorf("election: Start: stored term %d is above MaxTerm (%d): %w", hs.Term, MaxTerm, ErrTermExhausted)
	}
	n.started = true
	n.term, n.vote = hs.Term, hs.Vote
	n.role = Follower
	n.lastReset = n.w.Now()
	resumed := d != nil && n.resume(*d) // arms its own timers
	if !resumed {
		if n.term > 0 && n.cfg.refusesVotesInLease() && len(n.peers) > 0 {
			// It may have answered a leader's heartbeat just before it
			// stopped: keep that promise as if it had just heard it.
			n.promise(n.w.Now(), None)
		}
		n.startElectionTimer()
	}
	if n.snapshotT != nil {
		n.snapshotT.Start()
	}
	if !resumed {
		n.logger.Debug("started", "term", n.term, "vote", n.vote)
		n.emit(EventRoleChange, None, ReasonStart)
	}
	n.unlockAndFlush()
	return nil
}

// Stop models a crash or a shutdown: all timers are destroyed and later
// calls of Step, Campaign and TransferLeadership are ignored (Step counts
// the message in Stats.IgnoredStopped). Stop is idempotent, does not wait
// for a running timer callback and emits no event. The HardState stays in
// Storage; restart by creating a new Node with the same Storage.
func (n *Node) Stop() {
	n.lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.halt()
}

// halt is Stop with n.mu held and n not stopped yet; it unlocks n.mu.
func (n *Node) halt() {
	n.stopped = true
	n.leading.Store(false)
	n.outbox, n.events = nil, nil
	n.held = nil // never sent: they wait for a state that may be lost
	n.noteStop()
	n.mu.Unlock()
	for _, t := range [...]*repeated.Timer{&n.electionT, &n.voteT, &n.stepDownT, n.heartbeatT, n.snapshotT} {
		if t != nil {
			t.Destroy()
		}
	}
	for _, t := range n.peerHeartbeatT {
		t.Destroy()
	}
}

// Status returns a snapshot of the node's state.
func (n *Node) Status() Status {
	n.lock()
	defer n.mu.Unlock()
	return Status{
		ID: n.id, Role: n.role, Term: n.term, Vote: n.vote, Leader: n.leader,
		LastContact: n.lastContact, HasContact: n.hasContact,
		Started: n.started, Stopped: n.stopped,
	}
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	n.lock()
	defer n.mu.Unlock()
	st := n.stats
	fast := n.fastBeats.Load()
	st.Received, st.Sent = n.received+fast+n.fastAnswers.Load(), n.sent+fast
	return st
}

func (n *Node) usable() error {
	if n.stopped {
		return ErrStopped
	}
	if !n.started {
		return ErrNotStarted
	}
	return nil
}

// lockUsable locks the node for a public call and returns nil, or returns
// usable's error with the node unlocked.
func (n *Node) lockUsable() error {
	n.lock()
	if err := n.usable(); err != nil {
		n.mu.Unlock()
		return err
	}
	return nil
}
