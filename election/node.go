package election

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/internal/randsrc"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// Reasons used in events. They are part of the observable behaviour (the
// scenario tests print them) but not of the API: match on EventType.
const (
	reasonStart          = "start"
	reasonTimeout        = "election timeout"
	reasonVoteTimeout    = "vote timeout"
	reasonCampaign       = "campaign"
	reasonTransfer       = "transfer"
	reasonPreVoteWon     = "pre-vote won"
	reasonHigherTerm     = "higher term"
	reasonLeaderHB       = "leader heartbeat"
	reasonCheckQuorum    = "check quorum"
	reasonVoteTimedOut   = "vote timed out"
	reasonLostElection   = "lost election"
	reasonLostPreVote    = "lost pre-vote"
	reasonStorage        = "storage error"
	reasonStale          = "stale term"
	reasonLease          = "leader lease"
	reasonLeaderAlive    = "leader alive"
	reasonLogBehind      = "log not up to date"
	reasonAlreadyVoted   = "already voted"
	reasonLeaderKnown    = "leader known"
	reasonUnknownSender  = "unknown sender"
	reasonWrongTo        = "wrong recipient"
	reasonMalformed      = "malformed"
	reasonUnexpected     = "unexpected"
	reasonAnomalyLeaders = "two leaders in one term"
)

// Node is one voting member of a Raft group doing leader election. It is a
// state machine driven by Step (inbound messages) and by its timers on a
// shared wheel; all of them are serialized by the node's mutex, so a Node
// behaves as single-threaded. Outbound messages and observer events are
// collected while the mutex is held and delivered after it is released, in
// the order they were produced (events before messages).
//
// Create a Node with NewNode and call Start. Stop models a crash: to
// restart, create a new Node with the same Storage and call Start.
//
// All methods are safe for concurrent use.
type Node struct {
	mu     sync.Mutex
	cfg    Config
	id     ID
	w      *wheel.Wheel
	tr     Transport
	st     Storage
	lv     LogView
	logger hclog.Logger
	peers  []ID // voters other than id, in Config order
	voter  map[ID]bool
	quorum int

	electionT, voteT, stepDownT, heartbeatT, snapshotT *repeated.Timer
	// peerHeartbeatT holds one heartbeat timer per peer (same order as
	// peers) with Config.HeartbeatPerPeer; heartbeatT is nil then.
	peerHeartbeatT []*repeated.Timer
	// keep forces the next schedule of the election timer to a given
	// delay (Config.KeepTimerOnStepDown); nil without that option.
	keep *keepJitter

	started, stopped bool

	role   Role
	term   uint64
	vote   ID
	leader ID

	lastContact time.Duration // last accepted heartbeat of the leader
	hasContact  bool
	lastReset   time.Duration // last heartbeat or granted vote (CheckLastContact)

	votes map[ID]bool          // responses of the current (pre-)vote round
	acks  map[ID]time.Duration // leader: last heartbeat response per peer

	targetPriority  int
	priorityCounter int

	snapshotRunning bool

	obs observation // Observers, LeaderCh, WaitLeader, metrics (observer.go)

	stats  Stats
	seq    uint64
	outbox []Message
	events []Event
	// Recycled buffers for outbox and events (see unlockAndFlush).
	spareOut    []Message
	spareEvents []Event
}

// NewNode returns a Node for cfg whose timers live on w, that sends through
// tr, persists its term and vote in st and reads its log's last entry from
// log. The node does nothing until Start. NewNode returns the Config's
// validation error, ErrNilArgument (wrapped) for a nil argument, or the
// error of creating a timer.
func NewNode(cfg Config, w *wheel.Wheel, tr Transport, st Storage, log LogView) (*Node, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	switch {
	case w == nil:
		return nil, fmt.Errorf("%w: wheel", ErrNilArgument)
	case tr == nil:
		return nil, fmt.Errorf("%w: transport", ErrNilArgument)
	case st == nil:
		return nil, fmt.Errorf("%w: storage", ErrNilArgument)
	case log == nil:
		return nil, fmt.Errorf("%w: log view", ErrNilArgument)
	}
	if c.Rand == nil {
		c.Rand = randsrc.New()
	}
	n := &Node{
		cfg:    c,
		id:     c.ID,
		w:      w,
		tr:     tr,
		st:     st,
		lv:     log,
		logger: c.Logger.Named(fmt.Sprintf("election.n%d", c.ID)),
		voter:  make(map[ID]bool, len(c.Voters)),
		quorum: c.Quorum(),
	}
	for _, v := range c.Voters {
		n.voter[v] = true
		if v != c.ID {
			n.peers = append(n.peers, v)
		}
	}
	n.targetPriority = c.targetPriority()
	n.obs.metrics = newNodeMetrics(c)

	// One random source per timer, derived from Config.Rand: the timers
	// may re-arm on different goroutines of a real-time wheel.
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(c.Rand.Uint64(), c.Rand.Uint64())) }
	mk := func(name string, d time.Duration, f func(), j repeated.Jitter) (*repeated.Timer, error) {
		return repeated.New(w, fmt.Sprintf("n%d-%s", c.ID, name), d, f,
			repeated.WithJitter(j), repeated.WithRand(sub()), repeated.WithLogger(n.logger))
	}
	electionJitter := c.ElectionJitter
	if c.KeepTimerOnStepDown {
		n.keep = &keepJitter{inner: c.ElectionJitter}
		electionJitter = n.keep
	}
	if n.electionT, err = mk("election", c.ElectionTimeout, n.onElectionTimer, electionJitter); err != nil {
		return nil, err
	}
	if n.voteT, err = mk("vote", c.VoteTimeout, n.onVoteTimer, c.VoteJitter); err != nil {
		return nil, err
	}
	if n.stepDownT, err = mk("stepdown", c.StepDownInterval, n.onStepDownTimer, repeated.None()); err != nil {
		return nil, err
	}
	if c.HeartbeatPerPeer {
		for _, p := range n.peers {
			var t *repeated.Timer
			t, err = mk(fmt.Sprintf("heartbeat-%d", p), c.HeartbeatInterval, func() { n.onPeerHeartbeatTimer(p, t) }, c.HeartbeatJitter)
			if err != nil {
				return nil, err
			}
			n.peerHeartbeatT = append(n.peerHeartbeatT, t)
		}
	} else if n.heartbeatT, err = mk("heartbeat", c.HeartbeatInterval, n.onHeartbeatTimer, c.HeartbeatJitter); err != nil {
		return nil, err
	}
	if c.SnapshotInterval > 0 {
		if n.snapshotT, err = mk("snapshot", c.SnapshotInterval, n.onSnapshotTimer, c.SnapshotJitter); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// ID returns the node's ID.
func (n *Node) ID() ID { return n.id }

// Config returns the node's configuration with defaults applied.
func (n *Node) Config() Config { return n.cfg }

// Start loads the HardState from Storage, becomes a follower in the loaded
// term and arms the election (and snapshot) timer. It returns ErrStopped
// after Stop, ErrAlreadyStarted on a second call, wheel.ErrStopped
// (wrapped) if the node's wheel was stopped, or the Storage's error.
func (n *Node) Start() error {
	n.mu.Lock()
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
	n.started = true
	n.term, n.vote = hs.Term, hs.Vote
	n.role = Follower
	n.lastReset = n.w.Now()
	n.electionT.Start()
	if n.snapshotT != nil {
		n.snapshotT.Start()
	}
	n.logger.Debug("started", "term", n.term, "vote", n.vote)
	n.emit(EventRoleChange, None, reasonStart)
	n.unlockAndFlush()
	return nil
}

// Stop models a crash or a shutdown: all timers are destroyed and later
// calls of Step, Campaign and TransferLeadership are ignored (Step counts
// the message in Stats.IgnoredStopped). Stop is idempotent, does not wait
// for a running timer callback and emits no event. The HardState stays in
// Storage; restart by creating a new Node with the same Storage.
func (n *Node) Stop() {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.stopped = true
	n.outbox, n.events = nil, nil
	n.noteStop()
	n.mu.Unlock()
	for _, t := range [...]*repeated.Timer{n.electionT, n.voteT, n.stepDownT, n.heartbeatT, n.snapshotT} {
		if t != nil {
			t.Destroy()
		}
	}
	for _, t := range n.peerHeartbeatT {
		t.Destroy()
	}
}

// Campaign starts an election now, as if the election timer had fired but
// without the priority and last-contact checks: with PreVote a pre-vote
// round, otherwise a new term. It returns ErrNotStarted, ErrStopped or
// ErrIsLeader.
func (n *Node) Campaign() error {
	n.mu.Lock()
	if err := n.usable(); err != nil {
		n.mu.Unlock()
		return err
	}
	if n.role == Leader {
		n.mu.Unlock()
		return ErrIsLeader
	}
	n.startElection(reasonCampaign)
	n.unlockAndFlush()
	return nil
}

// TransferLeadership asks voter to to take over: the leader sends it
// MsgTimeoutNow, and to campaigns at once in a new term, skipping pre-vote
// and priority, with vote requests marked Transfer (which bypass leader
// stickiness). The leader keeps leading until the higher term deposes it.
// Transferring to itself does nothing. It returns ErrNotStarted,
// ErrStopped, ErrNotLeader or ErrUnknownNode.
func (n *Node) TransferLeadership(to ID) error {
	n.mu.Lock()
	if err := n.usable(); err != nil {
		n.mu.Unlock()
		return err
	}
	if n.role != Leader {
		n.mu.Unlock()
		return ErrNotLeader
	}
	if !n.voter[to] {
		n.mu.Unlock()
		return fmt.Errorf("%w: %d is not a voter", ErrUnknownNode, to)
	}
	if to != n.id {
		n.logger.Debug("transferring leadership", "to", to, "term", n.term)
		n.send(Message{Type: MsgTimeoutNow, To: to, Term: n.term})
	}
	n.unlockAndFlush()
	return nil
}

// BroadcastHeartbeat makes a leader send a heartbeat to every voter now
// and re-arms its heartbeat timer, so the next one follows a full
// HeartbeatInterval later (the simulator's "synchronized heartbeat" before
// it kills a leader). It returns ErrNotStarted, ErrStopped or ErrNotLeader.
func (n *Node) BroadcastHeartbeat() error {
	n.mu.Lock()
	if err := n.usable(); err != nil {
		n.mu.Unlock()
		return err
	}
	if n.role != Leader {
		n.mu.Unlock()
		return ErrNotLeader
	}
	n.broadcastHeartbeat()
	n.restartHeartbeats()
	n.unlockAndFlush()
	return nil
}

// Status returns a snapshot of the node's state.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	return Status{
		ID: n.id, Role: n.role, Term: n.term, Vote: n.vote, Leader: n.leader,
		LastContact: n.lastContact, HasContact: n.hasContact,
		Started: n.started, Stopped: n.stopped,
	}
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
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

// unlockAndFlush releases the lock, then hands the collected events to the
// observers and the collected messages to the transport.
//
// The two buffers are recycled: after delivery they become the spare
// buffers of the next flush, unless a nested flush (a transport delivering
// synchronously back to this node) already left spares behind.
func (n *Node) unlockAndFlush() {
	out, evs := n.outbox, n.events
	if len(out) == 0 && len(evs) == 0 {
		n.mu.Unlock()
		return
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
	n.stats.Sent++
	n.outbox = append(n.outbox, m)
}

// ignore counts and reports a message that is dropped.
func (n *Node) ignore(m Message, counter *uint64, reason string) {
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
	n.emit(EventRoleChange, None, reason)
}

// persist saves hs; on failure it counts and reports the error and returns
// false, and the caller abandons the action.
func (n *Node) persist(hs HardState, peer ID) bool {
	if err := n.st.Save(hs); err != nil {
		n.stats.StorageErrors++
		n.logger.Error("cannot save hard state", "term", hs.Term, "vote", hs.Vote, "error", err)
		n.emit(EventIgnored, peer, reasonStorage+": "+err.Error())
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
	if term > n.term {
		if !n.persist(HardState{Term: term, Vote: vote}, peer) {
			return false
		}
		n.term, n.vote, n.leader = term, vote, None
		n.emit(EventTermChange, peer, reason)
	}
	old := n.role
	if old == Follower {
		return true
	}
	n.leader = None
	if old == Leader {
		n.hasContact = false
	}
	n.role = Follower
	n.votes, n.acks = nil, nil
	var keepAt time.Duration
	keep := false
	if old == Candidate && n.keep != nil {
		// KeepTimerOnStepDown: the follower's timer takes over the
		// deadline of the round (if the vote timer is pending: not inside
		// its own trigger).
		keepAt, keep = n.voteT.Deadline()
	}
	n.voteT.Stop()
	n.stopHeartbeats()
	n.stepDownT.Stop()
	if old != PreCandidate {
		// A pre-candidate's election timer is still running; leaders and
		// candidates get a fresh one, or candidates keep their deadline.
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

// loyal reports whether the node stays loyal to a leader against
// candidate's (pre-)vote request: it is the leader, or it knows a leader
// that is alive in the sense of Config.Stickiness.
func (n *Node) loyal(candidate ID) bool {
	if n.role == Leader {
		return true
	}
	if n.cfg.Stickiness == StickyUntilTimeout {
		return n.leader != None && n.leader != candidate
	}
	return n.leader != None && n.hasContact && n.w.Now()-n.lastContact < n.cfg.ElectionTimeout
}

// loyalReason is the reason reported for a refusal by loyal: reason, or
// "leader known" with StickyUntilTimeout.
func (n *Node) loyalReason(reason string) string {
	if n.cfg.Stickiness == StickyUntilTimeout && n.role != Leader {
		return reasonLeaderKnown
	}
	return reason
}

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

// restartElectionTimer re-arms the election timer with a fresh timeout, or
// (d > 0, KeepTimerOnStepDown only) to fire after exactly d. Every re-arm
// goes through here, so that a forced delay whose schedule was deferred
// (the timer's own trigger running) is never used by a later one.
func (n *Node) restartElectionTimer(d time.Duration) {
	n.keep.force(d)
	n.electionT.Restart()
}

// stopElectionTimer stops the election timer and clears a forced delay.
func (n *Node) stopElectionTimer() {
	n.keep.force(0)
	n.electionT.Stop()
}

// stopHeartbeats stops the leader's heartbeat timer(s).
func (n *Node) stopHeartbeats() {
	if n.heartbeatT != nil {
		n.heartbeatT.Stop()
	}
	for _, t := range n.peerHeartbeatT {
		t.Stop()
	}
}

// restartHeartbeats (re)arms the leader's heartbeat timer(s) with fresh
// periods.
func (n *Node) restartHeartbeats() {
	if n.heartbeatT != nil {
		n.heartbeatT.Restart()
	}
	for _, t := range n.peerHeartbeatT {
		t.Restart()
	}
}

// logOK applies Raft's up-to-date rule to a candidate's last entry.
func (n *Node) logOK(m Message) bool {
	idx, term := n.lv.Last()
	return m.LastLogTerm > term || (m.LastLogTerm == term && m.LastLogIndex >= idx)
}

// resetElectionTimer records contact and, in ResetOnHeartbeat mode, re-arms
// the election timer with a fresh random timeout.
func (n *Node) resetElectionTimer() {
	n.lastReset = n.w.Now()
	if n.cfg.Detection == ResetOnHeartbeat {
		n.restartElectionTimer(0)
	} else {
		n.keep.force(0)
		n.electionT.Start()
	}
}

// ---- timers ----

// lockForTimer locks the node for a timer trigger and reports whether the
// trigger should run: false, with the node unlocked again, once the node is
// stopped or not yet started.
func (n *Node) lockForTimer() bool {
	n.mu.Lock()
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
	switch n.role {
	case Leader, Candidate:
		// A fire that raced with becoming candidate or leader.
		n.stopElectionTimer()
	case Follower, PreCandidate:
		// A deadline forced while this fire was on its way (real-time
		// wheel) is void: the timer fired anyway.
		n.keep.force(0)
		if n.cfg.Detection == CheckLastContact && n.role == Follower &&
			n.w.Now()-n.lastReset < n.cfg.ElectionTimeout {
			break // heard from the leader recently; the timer keeps running
		}
		n.leader = None
		if !n.allowLaunchElection() {
			n.stats.PrioritySkips++
			n.logger.Debug("skipping election: priority below target", "priority", n.cfg.Priority, "target", n.targetPriority)
			break
		}
		n.startElection(reasonTimeout)
	}
	n.unlockAndFlush()
}

func (n *Node) onVoteTimer() {
	if !n.lockForTimer() {
		return
	}
	if n.role != Candidate {
		n.voteT.Stop()
		n.unlockAndFlush()
		return
	}
	if n.cfg.StepDownWhenVoteTimedOut {
		if n.stepDown(n.term, reasonVoteTimedOut, None) {
			if n.cfg.PreVote {
				n.becomePreCandidate(reasonVoteTimeout)
			} else {
				n.becomeCandidate(reasonVoteTimeout, false)
			}
		}
	} else {
		n.becomeCandidate(reasonVoteTimeout, false)
	}
	n.unlockAndFlush()
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
	now, lease := n.w.Now(), n.cfg.lease()
	n.obs.metrics.leaderContact(now, lease, n.acks)
	alive := 1
	for _, p := range n.peers {
		if at, ok := n.acks[p]; ok && now-at <= lease {
			alive++
		}
	}
	if alive < n.quorum {
		n.logger.Warn("stepping down: quorum not reachable", "alive", alive, "quorum", n.quorum, "lease", lease)
		n.stepDown(n.term, fmt.Sprintf("%s: %d of %d voters within lease %v", reasonCheckQuorum, alive, len(n.cfg.Voters), lease), None)
	}
	n.unlockAndFlush()
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
// (Config.HeartbeatPerPeer).
func (n *Node) onPeerHeartbeatTimer(peer ID, t *repeated.Timer) {
	if !n.lockForTimer() {
		return
	}
	if n.role != Leader {
		t.Stop()
	} else {
		n.send(Message{Type: MsgHeartbeat, To: peer, Term: n.term})
	}
	n.unlockAndFlush()
}

func (n *Node) onSnapshotTimer() {
	if !n.lockForTimer() {
		return
	}
	async := n.cfg.SnapshotAsync
	if async && n.snapshotRunning {
		n.stats.SnapshotsSkipped++
		n.logger.Warn("snapshot still running; skipping this tick")
		n.unlockAndFlush()
		return
	}
	n.stats.Snapshots++
	n.snapshotRunning = async
	n.emit(EventSnapshot, None, "")
	n.unlockAndFlush()
	if !async {
		n.cfg.OnSnapshot()
		return
	}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				n.logger.Error("OnSnapshot panicked", "panic", r)
			}
			n.mu.Lock()
			n.snapshotRunning = false
			n.mu.Unlock()
		}()
		n.cfg.OnSnapshot()
	}()
}

// ---- elections ----

// allowLaunchElection implements SOFAJRaft's priority rule: a node below
// the target priority skips one election timeout, and every second skip
// decays the target.
func (n *Node) allowLaunchElection() bool {
	p := n.cfg.Priority
	if p == 0 {
		return true
	}
	if p < n.targetPriority {
		n.priorityCounter++
		if n.priorityCounter > 1 {
			gap := max(n.cfg.PriorityDecayGap, n.targetPriority/5)
			n.targetPriority = max(1, n.targetPriority-gap)
			n.priorityCounter = 0
			n.logger.Debug("decayed target priority", "target", n.targetPriority)
		}
		if n.priorityCounter == 1 {
			return false
		}
	}
	return p >= n.targetPriority
}

func (n *Node) resetPriority() {
	n.targetPriority = n.cfg.targetPriority()
	n.priorityCounter = 0
}

func (n *Node) startElection(reason string) {
	if n.cfg.PreVote {
		n.becomePreCandidate(reason)
	} else {
		n.becomeCandidate(reason, false)
	}
}

func (n *Node) becomePreCandidate(reason string) {
	n.leader = None
	n.setRole(PreCandidate, reason)
	n.votes = map[ID]bool{n.id: true}
	n.restartElectionTimer(0)
	n.stats.PreVotes++
	n.emitEvent(Event{Type: EventElectionStart, Term: n.term + 1, Reason: reason, PreVote: true})
	idx, lt := n.lv.Last()
	for _, p := range n.peers {
		n.send(Message{Type: MsgPreVote, To: p, Term: n.term + 1, LastLogIndex: idx, LastLogTerm: lt, Priority: n.cfg.Priority})
	}
	if n.quorum <= 1 {
		n.becomeCandidate(reasonPreVoteWon, false)
	}
}

func (n *Node) becomeCandidate(reason string, transfer bool) {
	term := n.term + 1
	if !n.persist(HardState{Term: term, Vote: n.id}, None) {
		// Could not vote for ourselves: stay (or become) a follower and
		// retry at the next election timeout.
		if n.role != Follower {
			n.stepDown(n.term, reasonStorage, None)
		}
		return
	}
	n.term, n.vote, n.leader = term, n.id, None
	n.emit(EventTermChange, None, reason)
	n.setRole(Candidate, reason)
	n.votes = map[ID]bool{n.id: true}
	n.stopElectionTimer()
	n.voteT.Restart()
	n.stats.Elections++
	n.emit(EventElectionStart, None, reason)
	n.emit(EventVoteGranted, n.id, "self")
	idx, lt := n.lv.Last()
	for _, p := range n.peers {
		n.send(Message{Type: MsgVote, To: p, Term: term, LastLogIndex: idx, LastLogTerm: lt, Transfer: transfer, Priority: n.cfg.Priority})
	}
	if n.quorum <= 1 {
		n.becomeLeader()
	}
}

func (n *Node) becomeLeader() {
	now := n.w.Now()
	n.leader = n.id
	n.setRole(Leader, "won election")
	n.votes = nil
	n.voteT.Stop()
	n.stopElectionTimer()
	n.lastContact, n.hasContact = now, true
	n.acks = make(map[ID]time.Duration, len(n.peers))
	for _, p := range n.peers {
		n.acks[p] = now // grace period: the first check-quorum tick needs answers from after now
	}
	n.resetPriority()
	n.stats.LeaderElected++
	n.logger.Info("elected leader", "term", n.term)
	n.emit(EventLeaderElected, None, "")
	n.broadcastHeartbeat()
	n.restartHeartbeats()
	if n.cfg.CheckQuorum {
		n.stepDownT.Restart()
	}
}

func (n *Node) broadcastHeartbeat() {
	for _, p := range n.peers {
		n.send(Message{Type: MsgHeartbeat, To: p, Term: n.term})
	}
}

// tally counts the granted and rejected responses of the current round.
func (n *Node) tally() (granted, rejected int) {
	for _, g := range n.votes {
		if g {
			granted++
		} else {
			rejected++
		}
	}
	return granted, rejected
}

// ---- messages ----

// Step delivers an inbound message. Messages that are malformed, not for
// this node, from an unknown sender, stale or unexpected are ignored,
// counted in Stats and reported as EventIgnored; Step never panics on
// them. Messages before Start or after Stop are ignored and counted.
func (n *Node) Step(m Message) {
	n.mu.Lock()
	n.stats.Received++
	if n.usable() != nil {
		n.stats.IgnoredStopped++
		n.mu.Unlock()
		return
	}
	switch {
	case m.To != n.id:
		n.ignore(m, &n.stats.IgnoredWrongTo, reasonWrongTo)
	case m.From == n.id || !n.voter[m.From]:
		n.ignore(m, &n.stats.IgnoredUnknown, reasonUnknownSender)
	case m.Type < MsgPreVote || m.Type > MsgTimeoutNow || (!m.Type.IsResponse() && m.Term == 0):
		n.ignore(m, &n.stats.IgnoredMalformed, reasonMalformed)
	default:
		n.step(m)
	}
	n.unlockAndFlush()
}

func (n *Node) step(m Message) {
	switch m.Type {
	case MsgHeartbeat:
		n.handleHeartbeat(m)
	case MsgHeartbeatResp:
		n.handleHeartbeatResp(m)
	case MsgPreVote:
		n.handlePreVote(m)
	case MsgPreVoteResp:
		n.handlePreVoteResp(m)
	case MsgVote:
		n.handleVote(m)
	case MsgVoteResp:
		n.handleVoteResp(m)
	case MsgTimeoutNow:
		n.handleTimeoutNow(m)
	}
}

func (n *Node) handleHeartbeat(m Message) {
	if m.Term < n.term {
		// Tell the stale leader about our term so that it steps down.
		n.ignore(m, &n.stats.IgnoredStale, reasonStale)
		n.send(Message{Type: MsgHeartbeatResp, To: m.From, Term: n.term})
		return
	}
	if m.Term == n.term && n.role == Leader {
		n.anomaly(m, reasonAnomalyLeaders)
		return
	}
	if m.Term > n.term || n.role != Follower {
		reason := reasonLeaderHB
		if m.Term > n.term {
			reason = reasonHigherTerm
		}
		if !n.stepDown(m.Term, reason, m.From) {
			return
		}
	}
	if n.leader != m.From {
		if n.leader != None {
			n.anomaly(m, reasonAnomalyLeaders)
			return
		}
		n.leader = m.From
		n.resetPriority()
		n.logger.Debug("leader known", "leader", m.From, "term", n.term)
		n.emit(EventLeaderKnown, m.From, "")
	}
	n.lastContact, n.hasContact = n.w.Now(), true
	n.resetElectionTimer()
	n.send(Message{Type: MsgHeartbeatResp, To: m.From, Term: n.term, Granted: true})
}

func (n *Node) anomaly(m Message, reason string) {
	n.logger.Error("anomaly", "msg", m.String(), "reason", reason, "term", n.term, "role", n.role, "leader", n.leader)
	n.ignore(m, &n.stats.Anomalies, reason)
}

func (n *Node) handleHeartbeatResp(m Message) {
	switch {
	case m.Term > n.term:
		n.stepDown(m.Term, reasonHigherTerm, m.From)
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, reasonStale)
	case n.role != Leader:
		n.ignore(m, &n.stats.IgnoredOther, reasonUnexpected)
	default:
		n.acks[m.From] = n.w.Now()
	}
}

func (n *Node) deny(m Message, respType MsgType, reason string, prevote bool) {
	if n.logger.IsTrace() {
		n.logger.Trace("vote denied", "msg", m.String(), "reason", reason)
	}
	n.emitEvent(Event{Type: EventVoteDenied, Term: m.Term, Peer: m.From, Reason: reason, PreVote: prevote, Msg: m.Type})
	n.send(Message{Type: respType, To: m.From, Term: n.term})
}

func (n *Node) handlePreVote(m Message) {
	switch {
	case m.Term < n.term:
		n.stats.IgnoredStale++
		n.deny(m, MsgPreVoteResp, reasonStale, true)
		return
	case n.loyal(m.From):
		n.stats.LeaseRejections++
		n.deny(m, MsgPreVoteResp, n.loyalReason(reasonLeaderAlive), true)
		return
	}
	canVote := m.Term > n.term || n.vote == m.From || (n.vote == None && n.leader == None)
	if !canVote {
		n.deny(m, MsgPreVoteResp, reasonAlreadyVoted, true)
		return
	}
	if !n.logOK(m) {
		n.deny(m, MsgPreVoteResp, reasonLogBehind, true)
		return
	}
	n.emitEvent(Event{Type: EventVoteGranted, Term: m.Term, Peer: m.From, PreVote: true, Msg: m.Type})
	n.send(Message{Type: MsgPreVoteResp, To: m.From, Term: m.Term, Granted: true})
}

func (n *Node) handlePreVoteResp(m Message) {
	if m.Term > n.term && !m.Granted {
		n.stepDown(m.Term, reasonHigherTerm, m.From)
		return
	}
	switch {
	case n.role != PreCandidate:
		n.ignore(m, &n.stats.IgnoredOther, reasonUnexpected)
		return
	case m.Granted && m.Term != n.term+1:
		// A grant for another round's term.
		n.ignore(m, &n.stats.IgnoredStale, reasonStale)
		return
	}
	// Pre-vote rounds of one term cannot be told apart: a late answer of an
	// earlier round counts in this one. That only affects liveness; votes
	// decide safety.
	granted, rejected, fresh := n.recordAnswer(m)
	switch {
	case !fresh:
	case granted >= n.quorum:
		n.becomeCandidate(reasonPreVoteWon, false)
	case n.cannotWin(rejected):
		n.stepDown(n.term, reasonLostPreVote, None)
	}
}

func (n *Node) handleVote(m Message) {
	if m.Term < n.term {
		n.stats.IgnoredStale++
		n.deny(m, MsgVoteResp, reasonStale, false)
		return
	}
	if n.cfg.LeaderStickiness && !m.Transfer && n.loyal(m.From) {
		n.stats.LeaseRejections++
		n.deny(m, MsgVoteResp, n.loyalReason(reasonLease), false)
		return
	}
	if m.Term > n.term {
		// New term: no vote and no leader in it yet, so the log decides.
		// Term and vote go to storage in one Save.
		grant := n.logOK(m)
		vote := None
		if grant {
			vote = m.From
		}
		if !n.stepDownVoting(m.Term, vote, reasonHigherTerm, m.From) {
			return
		}
		if !grant {
			n.deny(m, MsgVoteResp, reasonLogBehind, false)
			return
		}
		n.grantVote(m)
		return
	}
	switch {
	case n.vote != m.From && n.vote != None:
		n.deny(m, MsgVoteResp, fmt.Sprintf("%s for %d", reasonAlreadyVoted, n.vote), false)
		return
	case n.vote == None && n.leader != None:
		n.deny(m, MsgVoteResp, reasonLeaderKnown, false)
		return
	case !n.logOK(m):
		n.deny(m, MsgVoteResp, reasonLogBehind, false)
		return
	}
	if n.vote != m.From {
		if !n.persist(HardState{Term: n.term, Vote: m.From}, m.From) {
			return // no reply: the vote is not durable
		}
		n.vote = m.From
	}
	n.grantVote(m)
}

// grantVote answers a vote request whose grant is persisted.
func (n *Node) grantVote(m Message) {
	n.resetElectionTimer()
	n.emitEvent(Event{Type: EventVoteGranted, Term: n.term, Peer: m.From, Msg: m.Type})
	n.send(Message{Type: MsgVoteResp, To: m.From, Term: n.term, Granted: true})
}

func (n *Node) handleVoteResp(m Message) {
	switch {
	case m.Term > n.term:
		n.stepDown(m.Term, reasonHigherTerm, m.From)
		return
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, reasonStale)
		return
	case n.role != Candidate:
		n.ignore(m, &n.stats.IgnoredOther, reasonUnexpected)
		return
	}
	granted, rejected, fresh := n.recordAnswer(m)
	switch {
	case !fresh:
	case granted >= n.quorum:
		n.becomeLeader()
	case n.cannotWin(rejected) && !n.cfg.WaitForVoteTimeout:
		n.stepDown(n.term, reasonLostElection, None)
	}
}

// recordAnswer records a peer's answer to this round's (pre-)vote requests
// and returns the tally; a second answer from the same peer changes nothing
// and reports fresh == false.
func (n *Node) recordAnswer(m Message) (granted, rejected int, fresh bool) {
	if _, dup := n.votes[m.From]; dup {
		return 0, 0, false
	}
	n.votes[m.From] = m.Granted
	granted, rejected = n.tally()
	return granted, rejected, true
}

// cannotWin reports whether so many voters rejected this round that it can
// no longer reach a quorum.
func (n *Node) cannotWin(rejected int) bool {
	return rejected > len(n.cfg.Voters)-n.quorum
}

func (n *Node) handleTimeoutNow(m Message) {
	switch {
	case m.Term < n.term:
		n.ignore(m, &n.stats.IgnoredStale, reasonStale)
		return
	case n.role == Leader && m.Term == n.term:
		n.ignore(m, &n.stats.IgnoredOther, reasonUnexpected)
		return
	}
	if m.Term > n.term && !n.stepDown(m.Term, reasonHigherTerm, m.From) {
		return
	}
	n.logger.Debug("leadership transfer requested", "by", m.From, "term", n.term)
	n.becomeCandidate(reasonTransfer, true)
}
