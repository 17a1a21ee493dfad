package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/repeated"
)

// keepJitter is the election timer's jitter with KeepTimerOnStepDown: it
// returns a forced delay once, then defers to inner. The timer calls Next
// with its own lock held, possibly without the node's (when it re-arms
// after a trigger on a real-time wheel), hence the atomic.
type keepJitter struct {
	inner  repeated.Jitter
	forced atomic.Int64
}

func (k *keepJitter) Next(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
	if d := k.forced.Swap(0); d > 0 {
		return time.Duration(d)
	}
	return k.inner.Next(base, st, rng)
}

// force makes the next schedule wait exactly d (> 0), or clears a forced
// delay (d == 0). A nil k (no KeepTimerOnStepDown) does nothing.
func (k *keepJitter) force(d time.Duration) {
	if k != nil {
		k.forced.Store(int64(d))
	}
}

// restJitter is the election timer's jitter with ContactDeadline: the
// next schedule after a trigger that found recent contact waits a fresh
// draw of inner less the time since that contact (at least 1ns), so
// that the timer comes due a random timeout after the contact. Like
// keepJitter it is atomic: the timer draws with its own lock held.
type restJitter struct {
	inner   repeated.Jitter
	elapsed atomic.Int64
}

func (r *restJitter) Next(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
	d := r.inner.Next(base, st, rng)
	if d <= 0 {
		d = base // what the timer would do with it
	}
	if e := time.Duration(r.elapsed.Swap(0)); e > 0 {
		return max(d-e, 1)
	}
	return d
}

// since makes the next schedule count from e ago (e > 0), or clears
// that (e == 0). A nil r (another mode) does nothing.
func (r *restJitter) since(e time.Duration) {
	if r != nil {
		r.elapsed.Store(int64(e))
	}
}

// restartElectionTimer re-arms the election timer with a fresh timeout, or
// (d > 0, KeepTimerOnStepDown only) to fire after exactly d. Every re-arm
// goes through here or restartElectionTimerFrom, so that a forced delay
// whose schedule was deferred (the timer's own trigger running) is never
// used by a later one.
func (n *Node) restartElectionTimer(d time.Duration) {
	n.restartElectionTimerFrom(d, noTime)
}

// restartElectionTimerFrom is restartElectionTimer with the fresh timeout
// counted from base, a time not after now (ContactDeadline; noTime: now):
// the timer comes due a fresh draw after base, at once if that passed.
func (n *Node) restartElectionTimerFrom(d, base time.Duration) {
	n.keep.force(d)
	n.restFrom(base)
	n.electionOn = n.electionT.Restart() == nil
	n.electionFresh = true
	n.unpark()
}

// startElectionTimer starts the election timer if it is stopped; a
// running one runs on.
func (n *Node) startElectionTimer() {
	if n.electionOn {
		return
	}
	n.restFrom(noTime)
	n.electionOn = n.electionT.Start() == nil
	n.electionFresh = true
	n.unpark()
}

// unpark clears parked (ExternalContact) once the election timer runs.
func (n *Node) unpark() {
	if n.extContact && n.electionOn {
		n.parked.Store(false)
	}
}

// stopElectionTimer stops the election timer and clears a forced delay.
func (n *Node) stopElectionTimer() {
	n.keep.force(0)
	n.electionT.Stop()
	n.electionOn = false
}

// resetElectionTimer, in ResetOnHeartbeat mode, re-arms the election
// timer with a fresh random timeout; in CheckLastContact mode it starts
// the timer if it is stopped.
//
// The re-arm of a heartbeat is the timer's Reset, which takes no lock on
// an armed timer, whenever that means the same as Restart: the timer is
// running, no trigger ran since the last Start or Restart (Restart would
// clear State.Consecutive), no forced delay can be pending (no
// KeepTimerOnStepDown, ServerLock nor ticker wraps the jitter) and
// ElectionJitter does not depend on State (Restart draws as a first
// schedule, Reset as a later one). Otherwise it is Restart.
//
// In CheckLastContact and ContactDeadline modes it records contact at
// now (lastReset, which only they read) and starts the timer if it is
// stopped.
func (n *Node) resetElectionTimer(now time.Duration) {
	if n.detection == ResetOnHeartbeat {
		if n.fastReset && n.electionOn && n.electionFresh && n.electionT.Reset() == nil {
			return
		}
		n.restartElectionTimer(0)
		return
	}
	n.lastReset = now
	n.keep.force(0)
	n.startElectionTimer()
}

// restFrom makes the election timer's next schedule count from base, a
// time not after now (ContactDeadline; noTime: now): a fire that finds no
// contact after base is due.
func (n *Node) restFrom(base time.Duration) {
	if n.rest == nil {
		return
	}
	now := n.w.Now()
	if base == noTime {
		base = now
	}
	n.rest.since(now - base)
	n.restBase = base
}

// heardLeader acts on the election timer for a heartbeat of the leader
// accepted at now (lastContact is now already): with ExternalContact it
// parks the follower; with ContactDeadline and the timer running,
// nothing (the timer reads lastContact when it fires); otherwise
// resetElectionTimer.
func (n *Node) heardLeader(now time.Duration) {
	if n.extContact {
		n.park(now)
		return
	}
	if n.detection == ContactDeadline && n.electionOn {
		return
	}
	n.resetElectionTimer(now)
}

// contactAt returns a follower's last contact for ContactDeadline: its
// leader's last heartbeat or the last vote it granted.
func (n *Node) contactAt() time.Duration {
	if n.hasContact && n.lastContact > n.lastReset {
		return n.lastContact
	}
	return n.lastReset
}

// lockForTimer locks the node for a timer trigger and reports whether the
// trigger should run: false, with the node unlocked again, once the node is
// stopped or not yet started.
func (n *Node) lockForTimer() bool {
	n.lock()
	if n.usable() != nil {
		n.mu.Unlock()
		return false
	}
	return true
}

func (n *Node) onElectionTimer() {
	if !n.lockForTimer() {
		return
	}
	n.electionFresh = false // the timer counts this trigger
	if !n.deferElectionTimer() {
		n.electionTimerDue()
	}
	n.unlockAndFlush()
}

// electionTimerDue acts on the election timer, with the node locked.
func (n *Node) electionTimerDue() {
	switch n.role {
	case Leader, Candidate:
		// A fire that raced with becoming candidate or leader.
		n.stopElectionTimer()
	case Follower, PreCandidate:
		// A deadline forced while this fire was on its way (real-time
		// wheel) is void: the timer fired anyway.
		n.keep.force(0)
		if n.cfg.Detection == ContactDeadline && n.role == Follower {
			if c := n.contactAt(); c > n.restBase || n.within(c, n.cfg.ElectionTimeout) {
				// A contact since the timer was armed: the timer comes
				// due a fresh timeout after it (at once if that passed
				// already), as a re-arm at the contact would have made it;
				// with ExternalContact, the caller's supervision takes
				// over again while the leader is known.
				if n.extContact && n.leader != None {
					n.park(c)
					break
				}
				n.restBase = c
				n.rest.since(max(n.w.Now()-c, 1))
				break
			}
		}
		if n.electionHeld() {
			break // the silence may be a backlog's; the timer runs on
		}
		if n.cfg.Detection == CheckLastContact && n.role == Follower &&
			n.within(n.lastReset, n.cfg.ElectionTimeout) {
			break // heard from the leader recently; the timer keeps running
		}
		if n.promiseForbidsCampaign() {
			// Due early (a kept or ticked deadline): the timer runs on.
			break
		}
		n.leader = None
		if !n.allowLaunchElection() {
			n.stats.PrioritySkips++
			n.logger.Debug("skipping election: priority below target", "priority", n.cfg.Priority, "target", n.targetPriority)
			break
		}
		n.startElection(ReasonTimeout)
	}
}

func (n *Node) onVoteTimer() {
	if !n.lockForTimer() {
		return
	}
	if n.role != Candidate {
		n.voteT.Stop()
	} else if !n.roundHeld(n.w.Now()-n.cfg.VoteTimeout) && !n.deferVoteTimer() {
		n.voteTimerDue()
	}
	n.unlockAndFlush()
}

// voteTimerDue ends a candidate's round, with the node locked. With
// PreVote the next round starts with a pre-vote, as etcd's candidate
// campaigns again through MsgHup: a candidate cut off from the group
// must not raise its term at every vote timeout and depose a healthy
// leader when it comes back. Otherwise it starts the next term.
func (n *Node) voteTimerDue() {
	if n.cfg.Emulate.StepDownWhenVoteTimedOut && !n.stepDown(n.term, ReasonVoteTimedOut, None) {
		return
	}
	if n.cfg.PreVote {
		n.voteT.Stop()
		n.becomePreCandidate(ReasonVoteTimeout)
	} else {
		n.becomeCandidate(ReasonVoteTimeout, false)
	}
}

func (n *Node) onStepDownTimer() {
	if !n.lockForTimer() {
		return
	}
	if n.role != Leader || !n.cfg.CheckQuorum {
		n.stepDownT.Stop()
		n.unlockAndFlush()
		return
	}
	n.checkQuorum(n.w.Now())
	n.unlockAndFlush()
}

// checkQuorum is CheckQuorum's check at now, on a leader with
// CheckQuorum: it steps down unless a quorum is reachable, and reports
// whether it still leads.
func (n *Node) checkQuorum(now time.Duration) bool {
	lease := n.leaseD
	n.metrics.leaderContact(now, lease, n.acks)
	if alive := n.reachable(now, lease); !n.voterMajority().Reached(alive) && !n.voterMajority().Reached(alive+n.heldSilent(now, lease)) {
		n.logger.Warn("stepping down: quorum not reachable", "alive", alive, "quorum", n.majority.Size(), "lease", lease)
		n.stepDown(n.term, fmt.Sprintf("%s: %d of %d voters within lease %v", ReasonCheckQuorum, alive, len(n.cfg.Voters), lease), None)
		return false
	}
	return true
}

func (n *Node) onHeartbeatTimer() {
	if !n.lockForTimer() {
		return
	}
	if n.role != Leader {
		n.heartbeatT.Stop()
	} else {
		n.broadcastHeartbeat()
	}
	n.unlockAndFlush()
}

// onPeerHeartbeatTimer is the trigger of peer's heartbeat timer t
// (Config.Emulate.HeartbeatPerPeer).
func (n *Node) onPeerHeartbeatTimer(peer ID, t *repeated.Timer) {
	if !n.lockForTimer() {
		return
	}
	if n.role != Leader {
		t.Stop()
	} else {
		n.sendHeartbeat(slices.Index(n.peers, peer), peer, n.w.Now())
	}
	n.unlockAndFlush()
}

// reachable counts, for CheckQuorum, the leader and the peers that are
// not silent (quorum.Ack.Silent): answered within the lease, or have not
// had a heartbeat unanswered for a HeartbeatInterval. A leader steps down
// for peers that did not answer the heartbeats it sent, not for the
// heartbeats it did not send: when its own heartbeat timer or its host's
// heartbeat tick ran late (a stalled process, a starved timer goroutine),
// the check that fires first would otherwise find every answer old. The
// lease (QuorumContact) still counts only answers within it.
func (n *Node) reachable(now, lease time.Duration) int {
	return 1 + len(n.acks) - quorum.Silent(n.acks, now, lease, n.hbD)
}

func (n *Node) onSnapshotTimer() {
	if !n.lockForTimer() {
		return
	}
	n.stats.Snapshots++
	n.emit(EventSnapshot, None, "")
	n.unlockAndFlush()
	n.cfg.OnSnapshot()
}

// Silence is what a timer asks Config.Lagging about: Peer has said
// nothing the timer waits for since Since, a time of the node's wheel
// (the silence began no later than that). Answers marks the silences of a
// candidate's round and a leader's CheckQuorum, where the node waits for
// Peer's answers to what it sent from Since on; without it, a follower
// waits for its leader's heartbeats since its last one, which came no
// later than Since.
type Silence struct {
	Peer    ID
	Since   time.Duration
	Answers bool
}

// lagging reports whether Config.Lagging holds the silence s, counting
// it in Stats.LaggingSkips.
func (n *Node) lagging(s Silence) bool {
	if n.cfg.Lagging == nil || !n.cfg.Lagging(s) {
		return false
	}
	n.stats.LaggingSkips++
	return true
}

// electionHeld reports whether Config.Lagging holds the due election
// timer of a follower or pre-candidate: a follower's known leader (a
// follower that knows none is not held), or a pre-candidate's round (see
// roundHeld). The timer was armed at least an election timeout ago.
func (n *Node) electionHeld() bool {
	since := n.w.Now() - n.cfg.ElectionTimeout
	if n.role == PreCandidate {
		return n.roundHeld(since)
	}
	return n.leader != None && n.lagging(Silence{Peer: n.leader, Since: since})
}

// roundHeld reports whether a (pre-)candidate's due round, begun no later
// than since, is held: the voters that have not answered it and whose
// silence Config.Lagging holds, with the votes granted, could still make
// a quorum.
func (n *Node) roundHeld(since time.Duration) bool {
	if n.cfg.Lagging == nil {
		return false
	}
	granted, _ := n.votes.Tally()
	held := 0
	for _, p := range n.peers {
		if !n.votes.Answered(p) && n.cfg.Lagging(Silence{Peer: p, Since: since, Answers: true}) {
			held++
		}
	}
	if held == 0 || !n.majority.Reached(granted+held) {
		return false
	}
	n.stats.LaggingSkips++
	return true
}

// heldSilent counts the voters that CheckQuorum finds silent at now and
// whose silence Config.Lagging holds: the heartbeats they did not answer
// may wait in a backlog.
func (n *Node) heldSilent(now, lease time.Duration) int {
	if n.cfg.Lagging == nil {
		return 0
	}
	held := 0
	for i, p := range n.peers {
		a := &n.acks[i]
		if a.Silent(now, lease, n.cfg.HeartbeatInterval) && n.lagging(Silence{Peer: p, Since: a.Since, Answers: true}) {
			held++
		}
	}
	return held
}
