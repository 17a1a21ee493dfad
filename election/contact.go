package election

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/internal/quorum"
)

// Config.ExternalContact: a follower's heartbeats without the node's lock,
// and its contact watched by the caller instead of its election timer.
//
// The gate. TryHeartbeat accepts a heartbeat only while the gate is open,
// and the gate names the term and the leader it accepts. It is opened
// under the lock, by a heartbeat the node stepped and answered at once
// (nothing queued, nothing waiting to be durable), and closed by every
// lock of the node (lock), before anything runs under it. TryHeartbeat
// loads the gate, records the contact, and loads the gate again: only if
// both loads saw it open does it answer. So an answer it sends was
// recorded before the gate closed, and closeGate, which reads the contact
// after closing, takes that contact in as the node's lastContact and
// promise before anything under the lock can read them (a vote, a
// pre-vote, a timer's check, Status): a leader's lease never counts on an
// answer whose promise the node did not keep. A contact recorded by a
// TryHeartbeat that then found the gate closed may land after closeGate
// read it; the caller then steps that heartbeat under the lock, and
// closeGate ignores such a late value afterwards, as it predates the
// opening of any later gate (gateOpenAt): every contact was read from the
// wheel before the load that found the gate open, hence before it closed.
//
// The supervision. A follower that steps a heartbeat of its leader parks:
// it stops its election timer, and SuperviseContact, called by the
// caller for every follower at least every ElectionTimeout - within,
// reads the contact lock-free and, once it is older than within, arms the
// timer to come due a fresh ElectionJitter draw after it (ContactDeadline's
// deadline). When the armed timer fires and finds a newer contact, the
// follower parks again. Invariant: a started follower either has its
// election timer running or is parked; whatever starts the timer unparks
// (restartElectionTimer, startElectionTimer), and parking stops it.

// gateWord is the open gate for a heartbeat of term from the peer at
// index i of peerArr (a follower's), or, with i = -1, for the answers
// to the heartbeats of term (a leader's); terms from 1<<56 on are never
// accepted lock-free.
func gateWord(term uint64, i int) uint64 { return term<<8 | uint64(i+1) }

// fastAck is a peer's answers taken by TryHeartbeatResp since the gate
// last closed: the latest time one was taken and the latest send time
// of a heartbeat answered (quorum.Ack's At and Lease).
type fastAck struct{ at, lease atomic.Int64 }

// lock locks the node and closes the gate (see above).
func (n *Node) lock() {
	n.mu.Lock()
	if g := n.gate.Load(); g != 0 {
		n.closeGate(g)
	}
}

// closeGate closes the gate g and takes in what was recorded while it
// was open: a follower's contact, or a leader's answers. n.mu is held.
func (n *Node) closeGate(g uint64) {
	n.gate.Store(0)
	if g&0xff == 0 {
		n.takeAnswers()
		return
	}
	if c := time.Duration(n.contact.Load()); c >= n.gateOpenAt && c > n.lastContact {
		n.lastContact = c
		n.promise(c, n.leader)
	}
}

// takeAnswers takes the answers TryHeartbeatResp recorded into acks, as
// if each peer's latest had been stepped: a heartbeat sent before it is
// answered, one sent after still waits. Values left by an earlier
// leadership are older than the grace becomeLeader gives every peer, and
// its leases had run out before another leader could be elected (the
// voters' promises do not end with a term). n.mu is held; n leads.
func (n *Node) takeAnswers() {
	for i := range n.acks {
		a, f := &n.acks[i], &n.fastAcks[i]
		if at := time.Duration(f.at.Load()); at > a.At {
			a.At = at
			if a.Since != quorum.None && at >= a.Since {
				a.Since = quorum.None
			}
		}
		if l := time.Duration(f.lease.Load()); l > a.Lease {
			a.Lease = l
		}
	}
}

// openLeaderGate opens the gate for the answers to the leader's
// heartbeats of its term, if the node takes them lock-free
// (ExternalContact, up to five voters). n.mu is held; n leads.
func (n *Node) openLeaderGate() {
	if n.extContact && n.nPeers > 0 && n.term < 1<<56 && n.role == Leader {
		n.gate.Store(gateWord(n.term, -1))
	}
}

// TryHeartbeatResp is Config.ExternalContact's answer to a leader's
// heartbeat: it takes, without locking the node, a granted answer of
// term from peer from to a heartbeat sent at sent (0: unknown), stepped
// at now, if the node leads in term and did nothing but heartbeat and
// take answers since it last did either under its lock. It then records
// the answer, as StepAt would have, for the node's next CheckQuorum and
// lease (which take it in under the lock), and reports true. Otherwise
// it does nothing that matters and reports false, and the caller steps
// the answer. Answers count in Stats.Received.
func (n *Node) TryHeartbeatResp(from ID, term uint64, sent, now time.Duration) bool {
	took, _ := n.TryHeartbeatAnswer(from, term, sent, now)
	return took
}

// TryHeartbeatAnswer is TryHeartbeatResp that also reports whether the
// answer is the first the node took lock-free from from for a heartbeat
// sent at sent or later (sent known, not after now): a caller that counts
// the answers to the heartbeats it sent at one time (a multi-raft host's
// per-peer tally, see LeaderTickHeard) counts each heartbeat once, even
// when the network repeats an answer. The node's leases only grow, so
// an answer that is first is the first to its heartbeat in any term.
func (n *Node) TryHeartbeatAnswer(from ID, term uint64, sent, now time.Duration) (took, first bool) {
	g := n.gate.Load()
	if g == 0 || g != gateWord(term, -1) {
		return false, false
	}
	i := slices.Index(n.peerArr[:], from)
	if i < 0 || from == None {
		return false, false
	}
	f := &n.fastAcks[i]
	raise(&f.at, now)
	if sent > 0 && sent <= now {
		first = raise(&f.lease, sent)
	}
	if n.gate.Load() != g {
		return false, false // closed meanwhile: the caller steps it under the lock
	}
	n.fastAnswers.Add(1)
	return true, first
}

// raise stores t in a if t is later than a's value, and reports whether
// it did.
func raise(a *atomic.Int64, t time.Duration) bool {
	for c := a.Load(); int64(t) > c; c = a.Load() {
		if a.CompareAndSwap(c, int64(t)) {
			return true
		}
	}
	return false
}

// openGate opens the gate for the heartbeats of the node's leader in its
// term after one stepped at now and answered at once, if the node takes
// heartbeats lock-free (ExternalContact, up to five voters). n.mu is
// held; the node is a follower of n.leader and the heartbeat was its
// leader's, whose contact and promise were recorded at now.
func (n *Node) openGate(now time.Duration) {
	if !n.extContact || n.nPeers == 0 || n.term >= 1<<56 {
		return
	}
	i := n.peerIndex(n.leader)
	if i < 0 {
		return
	}
	n.gateOpenAt = now
	n.gate.Store(gateWord(n.term, i))
}

// TryHeartbeat is Config.ExternalContact's heartbeat: it accepts, without
// locking the node, a heartbeat of term from from stepped at now, if from
// is the leader of the follower's term and the node did nothing but
// answer its heartbeats since it stepped one of them. It then records the
// contact and reports true: the caller sends the answer a stepped
// heartbeat would get, a granted MsgHeartbeatResp of term to from that
// carries the heartbeat's Sent. Otherwise it does nothing that matters
// and reports false, and the caller steps the heartbeat (Step, StepAt).
// now is as for StepAt. Answers count in Stats.Received and Stats.Sent.
func (n *Node) TryHeartbeat(from ID, term uint64, now time.Duration) bool {
	g := n.gate.Load()
	if g == 0 || g>>8 != term || n.peerArr[g&0xff-1] != from {
		return false
	}
	if tryHeartbeatHook != nil {
		tryHeartbeatHook()
	}
	n.noteContact(now)
	if n.gate.Load() != g {
		return false // closed meanwhile: the caller steps it under the lock
	}
	n.fastBeats.Add(1)
	return true
}

// tryHeartbeatHook, when set (tests only), runs in TryHeartbeat between
// its first load of the gate and the contact's record.
var tryHeartbeatHook func()

// noteContact raises the contact the supervision reads to now.
func (n *Node) noteContact(now time.Duration) { raise(&n.contact, now) }

// park stops a follower's election timer after it heard its leader at
// now, for the caller's SuperviseContact to watch the contact instead.
// n.mu is held.
func (n *Node) park(now time.Duration) {
	n.noteContact(now)
	if n.electionOn {
		n.stopElectionTimer()
	}
	n.parked.Store(true)
}

// SuperviseContact is Config.ExternalContact's watch of a follower: if
// the node is parked (a follower whose election timer waits on the
// caller) and its last contact is more than within before now, it arms
// the election timer to come due a fresh timeout after that contact (at
// once if that passed already). Otherwise, which is nearly always, it
// only reads two words of the node, without locking it. now is the
// wheel's time, read by the caller once for many nodes; the caller calls
// it for every follower at least every ElectionTimeout - within, so that
// the timer is armed before it is due.
func (n *Node) SuperviseContact(now, within time.Duration) {
	if !n.parked.Load() || now-time.Duration(n.contact.Load()) <= within {
		return
	}
	n.lock()
	if n.parked.Swap(false) && n.usable() == nil && n.role == Follower && !n.electionOn {
		n.restartElectionTimerFrom(0, max(n.contactAt(), time.Duration(n.contact.Load())))
	}
	n.unlockAndFlush()
}
