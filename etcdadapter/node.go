package etcdadapter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// Transport carries a node's outbound messages. Send is called without
// any lock of the node held, on the goroutine that is processing the node
// (the one advancing a virtual wheel, the wheel's driver, or a caller of
// Step), so it may deliver synchronously, even back to the sender: a Node
// queues work that arrives while it is busy. Send must not block for long
// and may drop messages (raft tolerates loss). The node never touches m
// again; m.From and m.To name the endpoints.
type Transport interface {
	Send(m *pb.Message)
}

// TransportFunc adapts a function to the Transport interface.
type TransportFunc func(m *pb.Message)

// Send calls f(m).
func (f TransportFunc) Send(m *pb.Message) { f(m) }

// Status is a snapshot of a node.
type Status struct {
	ID uint64
	// Running is true between Start and Crash (or Close).
	Running bool
	// Role, Term, Vote and Leader are etcd's state (zero when not
	// running). Leader is the leader the node follows (itself for a
	// leader), 0 if none.
	Role               election.Role
	Term, Vote, Leader uint64
	// Commit and Applied are the commit index and the last index the node
	// applied.
	Commit, Applied uint64
	// ElectionTimeout is the current randomized election timeout in ticks
	// and ElectionElapsed the ticks counted towards it (0 when the hook on
	// etcd's internals is unavailable; see doc.go).
	ElectionTimeout, ElectionElapsed int
}

// Stats counts what a node did. Counters only grow, across restarts.
type Stats struct {
	Ticks    int64 // Tick calls
	Received int64 // messages passed to Step while running
	Sent     int64 // messages handed to the Transport
	// IgnoredStopped counts messages (and queued work) dropped because the
	// node was not running.
	IgnoredStopped int64
	// StepErrors counts messages etcd refused (raft.ErrStepPeerNotFound,
	// raft.ErrStepLocalMsg, ...); each is also an EventIgnored.
	StepErrors int64
	// ProposalsDropped counts Propose calls etcd refused (no leader, ...).
	ProposalsDropped int64
	// Writes counts storage writes (Readys that had to be synced) and
	// DelayedWrites those that Config.Disk delayed; LostWrites counts
	// writes still in flight when the node crashed (their state and
	// messages are lost).
	Writes, DelayedWrites, LostWrites int64
	// TimeoutDraws counts randomized election timeouts drawn (by the
	// adapter from Config.Rand, or observed from etcd without it).
	TimeoutDraws int64
	// Applied counts committed entries applied.
	Applied int64
}

type workKind uint8

const (
	workStart workKind = iota
	workTick
	workStep
	workCampaign
	workPropose
	workDiskDone
)

type work struct {
	kind workKind
	gen  uint64 // incarnation the work belongs to
	msg  *pb.Message
	data []byte
}

// view is the part of etcd's state the node reports changes of.
type view struct {
	role               election.Role
	term, vote, leader uint64
}

// Node is one go.etcd.io/raft/v3 RawNode driven by a wheel: a repeated
// timer calls Tick every Config.TickInterval, inbound messages arrive
// through Step, and the node processes every Ready itself: it persists
// the HardState and entries to its raft.MemoryStorage (after Config.Disk's
// delay, if any), hands the messages to its Transport, applies committed
// entries (it has no state machine: applying is counting) and calls
// Advance. The voters are fixed by Config.Peers: the node has no way to
// propose a configuration change.
//
// All work on the RawNode is serialized: a Step, tick or disk completion
// that arrives while the node is busy (from another goroutine, or
// re-entrantly from its own Transport or Observer) is queued and processed
// by the goroutine already working, in arrival order, before it returns.
// Observers and the Transport are called without the node's lock held.
// On a virtual wheel driven by one goroutine everything is therefore
// sequential and reproducible.
//
// A Node is safe for concurrent use.
type Node struct {
	cfg    Config
	w      *wheel.Wheel
	tr     Transport
	st     *raft.MemoryStorage
	obs    func(election.Event)
	ticker *repeated.Timer

	mu        sync.Mutex
	rn        *raft.RawNode // nil unless running
	hook      *timeoutHook  // nil unless running (or etcd's layout is unknown)
	gen       uint64        // incremented by every Start and Crash
	running   bool
	closed    bool
	busy      bool
	queue     []work
	firstTick time.Duration
	writing   bool         // a Ready waits for its disk write
	pending   raft.Ready   // that Ready
	diskT     *wheel.Timer // completes the write
	cur       view
	seq       uint64
	applied   uint64
	stats     Stats
	out       []*pb.Message
	events    []election.Event
}

// NewNode returns a stopped node on wheel w that sends through tr and
// publishes its state changes to cfg.Observer. Its storage is a
// fresh raft.MemoryStorage bootstrapped with cfg.Peers; it survives
// Crash. NewNode reports a cfg that fails this package's checks (a
// *FieldError wrapping ErrInvalidConfig; a nil w or tr wraps it too) and, when
// cfg.Rand is set, ErrUnsupportedRaft if the linked etcd raft cannot take
// the deterministic timeout; etcd's own validation runs when Start builds
// the RawNode (Config.Validate runs both up front, at the cost of a
// throwaway RawNode).
func NewNode(cfg Config, w *wheel.Wheel, tr Transport) (*Node, error) {
	if w == nil {
		return nil, fmt.Errorf("%w: nil wheel", ErrInvalidConfig)
	}
	if tr == nil {
		return nil, fmt.Errorf("%w: nil transport", ErrInvalidConfig)
	}
	if err := cfg.validateNode(); err != nil {
		return nil, err
	}
	if cfg.Rand != nil {
		if l := raftLayout(); l.err != nil {
			return nil, l.err
		}
	}
	cfg.Peers = append([]uint64(nil), cfg.Peers...)
	st, err := bootstrapStorage(cfg.Peers)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, w: w, tr: tr, st: st, obs: cfg.Observer}
	phase := repeated.Func(func(base time.Duration, s repeated.State, _ *rand.Rand) time.Duration {
		if s.First && n.firstTick > 0 {
			return n.firstTick
		}
		return base
	})
	n.ticker, err = repeated.New(w, fmt.Sprintf("etcd-tick-%d", cfg.ID), cfg.TickInterval, n.onTick, repeated.WithJitter(phase))
	if err != nil {
		return nil, fmt.Errorf("etcdadapter: node %d: ticker: %w", cfg.ID, err)
	}
	return n, nil
}

// ID returns the node's ID.
func (n *Node) ID() uint64 { return n.cfg.ID }

// Config returns the node's configuration.
func (n *Node) Config() Config {
	c := n.cfg
	c.Peers = slices.Clone(c.Peers)
	return c
}

// Storage returns the node's storage: its persisted HardState, log and
// snapshot, which survive Crash.
func (n *Node) Storage() *raft.MemoryStorage { return n.st }

// HardState returns the persisted term, vote and commit index.
func (n *Node) HardState() (term, vote, commit uint64) {
	hs, _, _ := n.st.InitialState()
	return hs.GetTerm(), hs.GetVote(), hs.GetCommit()
}

// Start starts a stopped node, fresh or after Crash: it builds a RawNode
// from the storage (so a restarted node resumes with its persisted term,
// vote and log, as a follower) and starts ticking. The first tick comes
// after firstTick, later ones every TickInterval; firstTick <= 0 means a
// full TickInterval. Pass a draw from [1ns, TickInterval] to give nodes
// independent tick phases, as separate processes have. Start returns
// ErrRunning on a running node and ErrClosed after Close.
func (n *Node) Start(firstTick time.Duration) error {
	n.mu.Lock()
	switch {
	case n.closed:
		n.mu.Unlock()
		return ErrClosed
	case n.running:
		n.mu.Unlock()
		return fmt.Errorf("%w: node %d", ErrRunning, n.cfg.ID)
	}
	rn, err := newRawNode(n.cfg.raftConfig(n.st))
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var hook *timeoutHook
	if raftLayout().err == nil {
		hook, err = newTimeoutHook(rn, n.cfg.ElectionTick, n.cfg.Rand)
		if err != nil && n.cfg.Rand != nil {
			n.mu.Unlock()
			return err
		}
		if hook != nil {
			n.stats.TimeoutDraws += hook.draws
			hook.draws = 0
		}
	}
	n.rn, n.hook = rn, hook
	n.gen++
	n.running = true
	n.firstTick = firstTick
	n.cur = view{}
	n.mu.Unlock()
	n.ticker.Restart()
	n.submit(work{kind: workStart})
	return nil
}

// Restart crashes the node if it is running, then starts it (see Start).
func (n *Node) Restart(firstTick time.Duration) error {
	n.Crash()
	return n.Start(firstTick)
}

// Crash stops the node at once, as a process crash: the ticker stops, the
// RawNode and everything volatile (queued work, a Ready waiting for its
// disk write, with its messages) are dropped; the storage keeps what was
// written. Messages already handed to the Transport stay in flight.
// Crashing a stopped node does nothing.
func (n *Node) Crash() {
	n.mu.Lock()
	if !n.running {
		n.mu.Unlock()
		return
	}
	n.crashLocked()
	n.mu.Unlock()
	n.ticker.Stop()
}

func (n *Node) crashLocked() {
	n.running = false
	n.gen++
	if n.hook != nil {
		n.stats.TimeoutDraws += n.hook.draws
	}
	n.rn, n.hook = nil, nil
	if n.writing {
		n.stats.LostWrites++
		n.writing, n.pending = false, raft.Ready{}
		n.diskT.Stop()
		n.diskT = nil
	}
	n.stats.IgnoredStopped += int64(len(n.queue))
	clear(n.queue)
	n.queue = n.queue[:0]
	n.cur = view{}
}

// Close crashes the node and releases its timers; every later call
// returns ErrClosed (or does nothing).
func (n *Node) Close() {
	n.mu.Lock()
	if n.running {
		n.crashLocked()
	}
	n.closed = true
	n.mu.Unlock()
	n.ticker.Destroy()
}

// Step hands an inbound message to the node. It returns ErrBadMessage for
// a nil message and ErrNotRunning (counting the message in
// Stats.IgnoredStopped) if the node is not running. A message addressed to
// another node, and messages etcd refuses (a local message type from the
// network, a response from a node outside the group), are reported as
// EventIgnored and counted in Stats.StepErrors. Callers must not modify
// m afterwards (etcd may keep it).
func (n *Node) Step(m *pb.Message) error {
	if m == nil {
		return fmt.Errorf("%w: nil message", ErrBadMessage)
	}
	return n.submitRunning(work{kind: workStep, msg: m})
}

// Campaign makes the node start an election now, as if its election
// timeout had fired (a pre-vote first with PreVote).
func (n *Node) Campaign() error { return n.submitRunning(work{kind: workCampaign}) }

// Propose proposes data for the log. A refused proposal (no leader known,
// ...) is counted in Stats.ProposalsDropped.
func (n *Node) Propose(data []byte) error {
	return n.submitRunning(work{kind: workPropose, data: data})
}

// Status returns a snapshot of the node.
func (n *Node) Status() Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := Status{ID: n.cfg.ID, Running: n.running, Applied: n.applied}
	if n.rn != nil {
		bs := n.rn.BasicStatus()
		s.Role, s.Term, s.Vote, s.Leader = roleOf(bs.RaftState), bs.GetTerm(), bs.GetVote(), bs.Lead
		s.Commit = bs.GetCommit()
	}
	if n.hook != nil {
		s.ElectionTimeout, s.ElectionElapsed = n.hook.timeout(), n.hook.elapsedTicks()
	}
	return s
}

// Accepted reports whether the node is running and recognizes leader as
// the leader of term: it is leader itself in term, or it is a follower in
// term that has accepted leader's first append or heartbeat (etcd sets a
// follower's leader when it steps a MsgApp, MsgHeartbeat or MsgSnap of
// the leader's term). This is what "every survivor accepted the new
// leader" means in the failover measurement.
func (n *Node) Accepted(leader, term uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.running && n.cur.term == term && n.cur.leader == leader && leader != 0
}

// state returns the node's view of etcd's state as of its last work
// item, and whether it is running: a cheap Status for the cluster's
// checks after every instant.
func (n *Node) state() (view, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cur, n.running
}

// Stats returns the node's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.stats
	if n.hook != nil {
		s.TimeoutDraws += n.hook.draws
	}
	return s
}

func (n *Node) onTick() { n.submit(work{kind: workTick}) }

func (n *Node) submitRunning(w work) error {
	n.mu.Lock()
	if !n.running {
		if w.kind == workStep {
			n.stats.IgnoredStopped++
		}
		closed := n.closed
		n.mu.Unlock()
		if closed {
			return ErrClosed
		}
		return fmt.Errorf("%w: node %d", ErrNotRunning, n.cfg.ID)
	}
	n.mu.Unlock()
	n.submit(w)
	return nil
}

// submit queues w and, unless another call is already working on the
// node, processes the queue until it is empty, dispatching the messages
// and events of each item without the lock held.
func (n *Node) submit(w work) {
	n.mu.Lock()
	if w.gen == 0 {
		w.gen = n.gen
	}
	n.queue = append(n.queue, w)
	if n.busy {
		n.mu.Unlock()
		return
	}
	n.busy = true
	for len(n.queue) > 0 {
		w := n.queue[0]
		n.queue[0] = work{}
		n.queue = n.queue[1:]
		if w.gen == n.gen && n.running {
			n.process(w)
		} else if w.kind == workStep {
			n.stats.IgnoredStopped++
		}
		out, events := n.out, n.events
		n.out, n.events = nil, nil
		if len(out) == 0 && len(events) == 0 {
			continue
		}
		n.mu.Unlock()
		for _, e := range events {
			n.obs(e)
		}
		for _, m := range out {
			n.tr.Send(m)
		}
		n.mu.Lock()
		if n.out == nil {
			n.out = out[:0]
		}
		if n.events == nil {
			n.events = events[:0]
		}
	}
	if cap(n.queue) > 64 {
		n.queue = nil
	} else {
		n.queue = n.queue[:0:cap(n.queue)]
	}
	n.busy = false
	n.mu.Unlock()
}

// process runs one work item on the RawNode, with the lock held.
func (n *Node) process(w work) {
	rn := n.rn
	reason := ""
	hup := false
	switch w.kind {
	case workStart:
		n.refresh(election.ReasonStart, false)
		n.emit(election.EventRoleChange, 0, election.ReasonStart)
	case workTick:
		n.stats.Ticks++
		before := n.cur.role
		rn.Tick()
		// tickElection sets electionElapsed to 0 exactly when the
		// election timeout fired (MsgHup); a pre-candidate that times out
		// starts a new pre-vote round without any other visible change.
		hup = before != election.Leader && n.hook != nil && n.hook.elapsedTicks() == 0
		reason = election.ReasonTimeout
		if before == election.Candidate {
			reason = election.ReasonVoteTimeout
		}
	case workStep:
		n.stats.Received++
		err := errWrongTo
		if w.msg.GetTo() == n.cfg.ID {
			err = rn.Step(w.msg)
		}
		if err != nil {
			n.stats.StepErrors++
			n.emitEvent(election.Event{Type: election.EventIgnored, Term: n.cur.term, Peer: election.ID(w.msg.GetFrom()), Reason: err.Error()})
		}
		if w.msg.GetType() == pb.MsgTimeoutNow {
			reason = election.ReasonTransfer
		}
	case workCampaign:
		_ = rn.Campaign() // MsgHup: etcd logs and ignores what it cannot do
		reason, hup = election.ReasonCampaign, true
	case workPropose:
		if err := rn.Propose(w.data); err != nil {
			n.stats.ProposalsDropped++
		}
	case workDiskDone:
		if !n.writing {
			return
		}
		rd := n.pending
		n.writing, n.pending, n.diskT = false, raft.Ready{}, nil
		n.finishReady(rd)
	}
	n.refresh(reason, hup)
	n.handleReady()
}

// handleReady processes Readys until there is none, or one waits for its
// disk write.
func (n *Node) handleReady() {
	for !n.writing && n.rn.HasReady() {
		rd := n.rn.Ready()
		n.voteEvents(rd.Messages)
		var d time.Duration
		if rd.MustSync {
			n.stats.Writes++
			if n.cfg.Disk != nil {
				prevTerm, prevVote := n.persisted()
				d = n.cfg.Disk(Write{
					Node:        n.cfg.ID,
					TermChanged: rd.HardState != nil && rd.HardState.GetTerm() != prevTerm,
					VoteChanged: rd.HardState != nil && rd.HardState.GetVote() != prevVote,
					Entries:     len(rd.Entries),
				})
			}
		}
		if d <= 0 {
			n.finishReady(rd)
			continue
		}
		n.stats.DelayedWrites++
		if n.cur.role == election.Leader {
			// etcd's server sends a leader's messages in parallel with its
			// WAL write, everyone else's after it.
			n.queueOut(rd.Messages)
			rd.Messages = nil
		}
		gen := n.gen
		t, err := n.w.AfterFunc(d, func() { n.submit(work{kind: workDiskDone, gen: gen}) })
		if err != nil {
			// The wheel is stopped: nothing will fire any more, so the
			// write can as well complete now.
			n.finishReady(rd)
			continue
		}
		n.writing, n.pending, n.diskT = true, rd, t
	}
}

// persisted returns the persisted term and vote.
func (n *Node) persisted() (term, vote uint64) {
	hs, _, _ := n.st.InitialState()
	return hs.GetTerm(), hs.GetVote()
}

// finishReady makes rd durable, sends its messages, applies its committed
// entries and advances the RawNode.
func (n *Node) finishReady(rd raft.Ready) {
	if !raft.IsEmptySnap(rd.Snapshot) {
		_ = n.st.ApplySnapshot(rd.Snapshot)
	}
	if len(rd.Entries) > 0 {
		_ = n.st.Append(rd.Entries)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		_ = n.st.SetHardState(rd.HardState)
	}
	n.queueOut(rd.Messages)
	// Applying is counting: the node has no state machine, and no
	// configuration-change entry can reach its log (the voters are fixed
	// by Config.Peers and Propose appends normal entries only).
	if k := len(rd.CommittedEntries); k > 0 {
		n.applied = rd.CommittedEntries[k-1].GetIndex()
		n.stats.Applied += int64(k)
	}
	n.rn.Advance(rd)
	// Advance steps the node's own responses (its vote, its append):
	// a candidate may win here.
	n.refresh("", false)
}

func (n *Node) queueOut(msgs []*pb.Message) {
	for _, m := range msgs {
		if m.GetTo() == n.cfg.ID {
			n.queue = append(n.queue, work{kind: workStep, gen: n.gen, msg: m})
			continue
		}
		n.stats.Sent++
		n.out = append(n.out, m)
	}
}
