package election

import (
	"errors"
	"time"

	"github.com/raftick/raftick/internal/quorum"
)

// Hooks for hosts that hibernate idle groups (package multiraft): a node
// gives up its timers and in-memory state with Hibernate, keeping only a
// Dormant of three words beside its Storage, and a new Node on the same
// Storage resumes from it with Resume.

// ErrCannotHibernate is returned by Hibernate for a node that is neither
// the leader nor a follower that knows its leader.
var ErrCannotHibernate = errors.New("election: node cannot hibernate: not the leader nor a follower that knows its leader")

// Dormant is what a hibernated node remembers besides its Storage: the term
// it hibernated in and the leader it knew in that term (its own ID if it
// was the leader; None if it knew none).
type Dormant struct {
	Term   uint64
	Leader ID
	// Contact is the wheel time at which a follower last heard from
	// Leader; 0 means unknown, and a resumed follower then counts the
	// resume itself as contact. A host that answers Leader's heartbeats
	// for the dormant follower must advance Contact with each one it
	// answers: the leader's lease counts on those answers, and the
	// resumed follower's loyalty (pre-votes, and votes with CheckQuorum
	// or LeaderStickiness, refused until Contact+ElectionTimeout) is what
	// makes that lease sound.
	Contact time.Duration
}

// Hibernate stops the node as Stop does (its timers are destroyed, later
// calls are ignored) and returns its Dormant. Only a leader, or a follower
// that knows the leader of its term, hibernates; otherwise Hibernate
// changes nothing and returns ErrCannotHibernate (or ErrNotStarted,
// ErrStopped), as does a deferred node whose HardState is not durable yet
// (ErrNotDurable). The term and vote stay in Storage, where they already
// are.
func (n *Node) Hibernate() (Dormant, error) {
	n.lock()
	if err := n.usable(); err != nil {
		n.mu.Unlock()
		return Dormant{}, err
	}
	if n.role != Leader && (n.role != Follower || n.leader == None) {
		n.mu.Unlock()
		return Dormant{}, ErrCannotHibernate
	}
	if n.holding {
		n.mu.Unlock()
		return Dormant{}, ErrNotDurable
	}
	d := Dormant{Term: n.term, Leader: n.leader}
	if n.role == Follower && n.hasContact {
		d.Contact = n.lastContact
	}
	n.logger.Debug("hibernating", "term", d.Term, "leader", d.Leader)
	n.halt()
	return d, nil
}

// Resume starts a new node (instead of Start) from the Dormant of a node
// that hibernated on the same Storage. If the stored term still is d.Term
// (nothing changed it meanwhile), the node takes d over:
//
//   - d.Leader is the node itself, and its stored vote is for itself: it
//     is the leader of d.Term again (a node that won a term's election is
//     that term's only possible leader). It heartbeats every voter at once
//     and arms its heartbeat and step-down timers, but it counts no
//     voter's answer from before it hibernated: with CheckQuorum it steps
//     down at its first step-down check unless a quorum answered since,
//     so it re-establishes its lease before relying on it.
//   - d.Leader is another voter: a follower that knows d.Leader, with a
//     fresh election timeout. Its last contact with d.Leader is
//     d.Contact if set and not in the future, else the resume itself:
//     it refuses pre-votes, and with CheckQuorum or LeaderStickiness
//     votes, until an ElectionTimeout after it. It does not campaign before its election
//     timeout, by which time a live leader has heartbeaten.
//
// Otherwise (another term, or d.Leader None) Resume is Start: a follower
// without a leader and with a fresh election timeout. Resume emits
// EventRoleChange (reason "resume"), and EventLeaderKnown for a follower
// that knows its leader; a resumed leader emits no EventLeaderElected, as
// it won no new election. Errors are Start's.
func (n *Node) Resume(d Dormant) error { return n.start(&d) }

// resume takes d over after Start loaded the HardState (see Resume) and
// reports whether it did; n.mu is held.
func (n *Node) resume(d Dormant) bool {
	if d.Term != n.term || d.Leader == None || !n.isVoter(d.Leader) {
		return false
	}
	now := n.w.Now()
	n.resetPriority()
	n.voteJ.leaderKnown()
	if d.Leader == n.id {
		if n.vote != n.id {
			return false
		}
		n.role, n.leader = Leader, n.id
		n.leading.Store(true)
		n.lastContact, n.hasContact = now, true
		n.transferring = false
		n.resetAcks() // no answer yet: no lease
		n.logger.Debug("resumed as leader", "term", n.term)
		n.emit(EventRoleChange, None, ReasonResume)
		n.broadcastHeartbeat()
		n.restartHeartbeats()
		n.startStepDownTimer()
		return true
	}
	n.leader = d.Leader
	contact := now
	if d.Contact > 0 && d.Contact < now {
		contact = d.Contact
	}
	n.lastContact, n.hasContact, n.lastReset = contact, true, now
	n.promise(contact, d.Leader)
	n.startElectionTimer()
	n.logger.Debug("resumed as follower", "term", n.term, "leader", d.Leader)
	n.emit(EventRoleChange, None, ReasonResume)
	n.emit(EventLeaderKnown, d.Leader, ReasonResume)
	return true
}

// QuorumContact reports whether the node is the leader and holds its lease:
// a quorum of voters (itself included) answered heartbeats it sent within
// the lease (ElectionTimeout*LeaseRatio; on a ticker, Config.Emulate.Tick,
// at most ceil(ElectionTimeout/Tick)-1 ticks) before now. While it holds, no
// other node can lead a later term, so the leader may serve reads alone
// (Raft thesis, section 6.4.1).
//
// The lease is offered only with CheckQuorum or LeaderStickiness; without
// both QuorumContact is always false. It rests on a promise every voter
// keeps in those configurations: for ElectionTimeout after it hears a
// leader, or after it starts in a term above 0 (it may have answered a
// leader just before it stopped), it grants no vote and casts none for
// itself, whatever term it moves to meanwhile; only a leadership transfer
// bypasses it, so a leader that called TransferLeadership holds no lease
// for the rest of its term. The lease runs from when the answered
// heartbeats were sent (Message.Sent), not from when the answers arrived,
// so queues and batching cannot stretch it past the voters' promise; an
// answer that does not carry the send time never extends it. A newly
// elected leader, and one resumed from a Dormant, hold no lease until a
// quorum answered a heartbeat.
//
// It is sound when every voter runs CheckQuorum or LeaderStickiness, no
// forged MsgTimeoutNow or Transfer vote request reaches a voter, and the
// voters' clocks advance at rates that differ by less than the margin
// ElectionTimeout*(1-LeaseRatio) over an election timeout.
func (n *Node) QuorumContact() bool {
	n.lock()
	defer n.mu.Unlock()
	if n.usable() != nil || n.role != Leader || !n.cfg.refusesVotesInLease() || n.transferring {
		return false
	}
	now, lease := n.w.Now(), n.readLease()
	return n.majority.Leased(n.acks, now, lease)
}

// Acked returns the send time of the latest heartbeat of the leader's
// term that peer answered (granted), the time its lease runs from; ok is
// false if the node does not lead, peer is not a voter, or it answered
// no heartbeat of the term that carried its send time.
func (n *Node) Acked(peer ID) (sent time.Duration, ok bool) {
	n.lock()
	defer n.mu.Unlock()
	if n.usable() != nil || n.role != Leader {
		return 0, false
	}
	i := n.peerIndex(peer)
	if i < 0 || i >= len(n.acks) || n.acks[i].Lease == quorum.None {
		return 0, false
	}
	return n.acks[i].Lease, true
}
