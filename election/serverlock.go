package election

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/repeated"
)

// ServerLock is implemented by a simulator that models a server whose
// message handlers and timers run under one lock that it holds through
// blocking work, such as a disk write: LogCabin, the Raft paper's
// implementation, writes its term and vote while holding the lock its
// election timer thread needs. A simulator sets it through
// Config.Emulate.ServerLock; real programs leave it nil.
type ServerLock interface {
	// DeferTimer is called, with the node's lock held, when the election
	// timer (of a follower or pre-candidate) or the vote timer (of a
	// candidate) comes due. It must not call the node. Returning false
	// lets the timer act now. Returning true means the simulator keeps
	// run and calls it once, without the node's lock, when the server's
	// lock is free, after the messages that reached the server before the
	// timer came due; run then does what the timer would have done, unless
	// the timer was re-armed in between (a granted vote, a heartbeat) or
	// the node changed its role or term. Whatever run does, it starts from
	// the instant it is called: a new round's timeout counts from there.
	DeferTimer(run func()) bool
	// TermDurableIn is asked when the node grants a vote in a term it has
	// just adopted from the request (term and vote are saved together): it
	// returns how long after now the term is durable, for a server that
	// writes the term first, re-arms the election timer, then writes the
	// vote (LogCabin's handleRequestVote). The election timer then counts
	// its fresh timeout from that instant instead of from now. 0 means now.
	TermDurableIn() time.Duration
}

// delayJitter is the election timer's jitter with a ServerLock: it adds a
// one-shot delay to the next draw (TermDurableIn). The timer calls Next
// with its own lock held, hence the atomic.
type delayJitter struct {
	inner repeated.Jitter
	extra atomic.Int64
}

func (j *delayJitter) Next(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
	return j.inner.Next(base, st, rng) + time.Duration(j.extra.Swap(0))
}

// deferredTimers is a node's state of timers deferred by
// Config.Emulate.ServerLock.
type deferredTimers struct {
	delay  *delayJitter
	voteAt time.Duration // nominal deadline of a deferred vote timer
	vote   bool          // a vote timer is deferred and not yet run or dropped
}

// deferElectionTimer offers a due election timer to the server lock; it
// reports whether the lock took it (the timer is then stopped until run).
func (n *Node) deferElectionTimer() bool {
	if n.cfg.Emulate.ServerLock == nil || (n.role != Follower && n.role != PreCandidate) {
		return false
	}
	if !n.cfg.Emulate.ServerLock.DeferTimer(n.runDeferredElection) {
		return false
	}
	n.stopElectionTimer()
	return true
}

// runDeferredElection acts on an election timer the server lock deferred,
// unless it was re-armed in between or the node is no longer waiting for it.
func (n *Node) runDeferredElection() {
	if !n.lockForTimer() {
		return
	}
	if (n.role == Follower || n.role == PreCandidate) && !n.electionOn {
		n.electionTimerDue()
		if (n.role == Follower || n.role == PreCandidate) && !n.electionOn {
			// Nothing started (last contact recent, priority, a promise to a
			// leader's lease, a lagging host): run on.
			n.restartElectionTimer(0)
		}
	}
	n.unlockAndFlush()
}

// deferVoteTimer offers a candidate's due vote timer to the server lock;
// it reports whether the lock took it.
func (n *Node) deferVoteTimer() bool {
	if n.cfg.Emulate.ServerLock == nil || n.role != Candidate {
		return false
	}
	term := n.term
	if !n.cfg.Emulate.ServerLock.DeferTimer(func() { n.runDeferredVote(term) }) {
		return false
	}
	n.voteT.Stop()
	n.deferred.voteAt, n.deferred.vote = n.w.Now(), true
	return true
}

// runDeferredVote starts the next round of a candidate whose vote timer the
// server lock deferred, if it is still that candidate with no round started.
func (n *Node) runDeferredVote(term uint64) {
	if !n.lockForTimer() {
		return
	}
	pending := n.deferred.vote
	n.deferred.vote = false
	if pending && n.role == Candidate && n.term == term && !n.voteT.IsRunning() {
		n.voteTimerDue()
	}
	n.unlockAndFlush()
}

// deferredVoteDeadline returns the nominal deadline of a deferred vote
// timer, for a candidate that steps down and keeps it
// (KeepTimerOnStepDown), and forgets it.
func (n *Node) deferredVoteDeadline() (time.Duration, bool) {
	at, ok := n.deferred.voteAt, n.deferred.vote
	n.deferred.vote = false
	return at, ok
}

// delayRearmForTermWrite makes the next re-arm of the election timer
// count from when the server's term write is durable
// (ServerLock.TermDurableIn).
func (n *Node) delayRearmForTermWrite() {
	if n.deferred.delay != nil {
		n.deferred.delay.extra.Store(int64(max(n.cfg.Emulate.ServerLock.TermDurableIn(), 0)))
	}
}

// clearRearmDelay drops a delay the re-arm did not use.
func (n *Node) clearRearmDelay() {
	if n.deferred.delay != nil {
		n.deferred.delay.extra.Store(0)
	}
}
