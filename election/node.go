package election

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/internal/randsrc"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// Node is one voting member of a Raft group doing leader election. It is a
// state machine driven by Step (inbound messages) and by its timers on a
// shared wheel; all of them are serialized by the node's mutex, so a Node
// behaves as single-threaded. Outbound messages and observer events are
// collected while the mutex is held and delivered after it is released, in
// the order they were produced (events before messages).
//
// Create a Node with NewNode and call Start; the zero Node is not usable.
// Stop models a crash: to restart, create a new Node with the same
// Storage and call Start.
//
// All methods are safe for concurrent use.
type Node struct {
	// The fields a heartbeat and its answer touch come first, followed by
	// the election timer, which starts on the sixth cache line. Stepped
	// under the lock (Step), a follower's heartbeat touches the lines
	// from outbox's to the timer's first two; taken lock-free
	// (Config.ExternalContact), a heartbeat touches the first line only,
	// and an answer to a leader the second. Everything but the atomics is
	// guarded by mu, and the fields marked immutable are set by NewNode
	// and never written again.
	//
	// The first line: what TryHeartbeat and SuperviseContact read and
	// write (see contact.go), Leading's flag and the peers.
	gate      atomic.Uint64 // 0: closed; else gateWord(term, leader)
	contact   atomic.Int64  // latest contact recorded for the supervision
	fastBeats atomic.Int64  // heartbeats TryHeartbeat answered
	// parked is set while a follower's election timer is stopped and its
	// caller's SuperviseContact watches contact instead.
	parked atomic.Bool
	// leading mirrors role == Leader of a started, running node, for
	// Leading; written with mu held, read without it.
	leading atomic.Bool
	// peerArr holds peers for groups of up to five voters (nPeers), inside
	// the Node, so that checking a message's sender (isVoter) touches no
	// memory of its own. Immutable.
	peerArr [4]ID
	// fastAnswers counts the answers TryHeartbeatResp took, and fastAcks
	// holds them per peer (peerArr's order) until the lock takes them into
	// acks: a leader's answers touch this line and no other.
	fastAnswers atomic.Int64
	fastAcks    [4]fastAck

	mu sync.Mutex
	// extContact is Config.ExternalContact. Immutable.
	extContact bool
	// nPeers is len(peers) when peerArr holds them (groups of up to five
	// voters), and 0 otherwise. Immutable.
	nPeers           uint8
	started, stopped bool
	role             Role
	// detection is Config.Detection, here beside the other hot fields.
	// Immutable.
	detection DetectionMode
	// electionOn is set while the election timer is started (the node's
	// view: Start or Restart succeeded and no Stop since), electionFresh
	// while no trigger of it ran since the last Start or Restart. Then,
	// with fastReset (a stateless ElectionJitter and no wrapper of it;
	// immutable), a heartbeat's re-arm by the timer's lock-free Reset
	// means the same as Restart: see resetElectionTimer.
	electionOn, electionFresh, fastReset bool
	hasContact, hasPromise               bool
	// holding is set while a deferred node's last HardState is not
	// durable (durableSeq < deferSeq): what it sends waits in held.
	holding bool
	// tickCQ is CheckQuorum with ExternalCheckQuorum, and hbTimers is
	// set when the node has a heartbeat timer of its own (no
	// ExternalHeartbeat): LeaderTick's questions, answered here rather
	// than in the cold state. Immutable.
	tickCQ, hbTimers bool
	id               ID // immutable
	term             uint64
	leader           ID
	w                *wheel.Wheel // immutable
	// received and sent are Stats.Received and Stats.Sent, here beside
	// the other hot fields.
	received, sent int64
	tr             Transport     // immutable
	lastContact    time.Duration // last accepted heartbeat of the leader
	// promised is when the node last heard a leader (promisedTo), or
	// started in a term above 0 (promisedTo None: it may have answered a
	// leader just before it stopped); hasPromise is false if neither
	// happened. The node stays loyal (refuses pre-votes, and votes where
	// Config.refusesVotesInLease) for an ElectionTimeout after it, across
	// term changes: a leader's lease counts on it (QuorumContact).
	promised   time.Duration
	promisedTo ID
	// outbox and events collect what unlockAndFlush delivers. A follower's
	// answer to a heartbeat bypasses them when both are empty (Step).
	outbox []Message
	events []Event
	// What CheckQuorum reads, here rather than in the cold state, for a
	// host that runs it for every leader at every tick: copies of
	// Config.lease() and HeartbeatInterval, and the node's metrics (nil:
	// off). Immutable.
	leaseD, hbD time.Duration
	metrics     *nodeMetrics
	// electionT is the election timer, inside the Node
	// (repeated.Timer.Init) right after the fields above, at a multiple
	// of 64 bytes from the Node's start; its own hot fields come first.
	electionT repeated.Timer

	// The rest of the node's state, which heartbeats and their answers do
	// not touch, is allocated apart, so that the Node, 576 bytes, leaves
	// room in the cache and the TLB for the hot lines of many others.
	*nodeCold

	// acks is a leader's answers per peer, in peers' order (empty when not
	// leading; its array, ackArr for up to five voters, is kept for the
	// next term led): what a heartbeat's answer to a leader writes.
	acks   []quorum.Ack
	ackArr [4]quorum.Ack
	// The Node's size, 576 bytes, is a size class of whole cache lines, so
	// that each Node starts on one (see TestHeartbeatLayout).
}

// nodeCold is the part of a Node's state that a follower's heartbeat does
// not touch (see Node), guarded by the Node's mutex as the rest.
type nodeCold struct {
	peers []ID // voters other than id, in Config order; immutable
	// metricsRole is the role as of the node's last event, for its
	// metrics (see nodeMetrics.event).
	metricsRole Role
	lastReset   time.Duration // last heartbeat or granted vote (CheckLastContact only)
	// outArr is outbox's first array.
	outArr [1]Message
	stats  Stats // but Received and Sent

	// The other timers, inside the node's cold state, which NewNode
	// allocates beside the Node. heartbeatT and snapshotT point to
	// heartbeatTimer and snapshotTimer when the configuration has them,
	// and are nil otherwise.
	voteT, stepDownT              repeated.Timer
	heartbeatT, snapshotT         *repeated.Timer
	heartbeatTimer, snapshotTimer repeated.Timer
	// peerHeartbeatT holds one heartbeat timer per peer (same order as
	// peers) with Config.Emulate.HeartbeatPerPeer; heartbeatT is nil then,
	// and both are empty with Config.ExternalHeartbeat.
	peerHeartbeatT []*repeated.Timer

	cfg Config
	st  Storage
	// dst is the DeferredStorage of a node made by NewDeferredNode, nil
	// otherwise. deferSeq is the sequence number of the last HardState
	// handed to it, durableSeq the last one reported durable (Persisted);
	// held are the messages sent since the first state not durable yet.
	dst                  DeferredStorage
	deferSeq, durableSeq uint64
	held                 []heldMsg
	lv                   LogView
	logger               hclog.Logger
	voter                map[ID]bool     // only when nPeers is 0 (see isVoter)
	majority             quorum.Majority // of cfg.Voters

	// keep forces the next schedule of the election timer to a given
	// delay (Config.Emulate.KeepTimerOnStepDown); nil without that option.
	keep *keepJitter
	// rest shortens the election timer's next schedule by the time since
	// the last contact (ContactDeadline); nil in the other modes.
	rest *restJitter
	// gateOpenAt is when TryHeartbeat's gate last opened: a contact it
	// recorded before that is not taken in (see closeGate).
	gateOpenAt time.Duration
	// restBase is when the election timer's schedule last started
	// counting (ContactDeadline): its restart, or the contact it was
	// re-armed from. A fire that finds no later contact is due.
	restBase time.Duration
	// voteJ is the vote timer's jitter, which counts consecutive rounds.
	voteJ *roundJitter
	// grid is the node's ticker with Config.Emulate.Tick (tick.go).
	grid tickGrid
	// deferred is the state of timers deferred by
	// Config.Emulate.ServerLock (serverlock.go).
	deferred deferredTimers

	vote ID
	// transferring is set on a leader that sent MsgTimeoutNow in its
	// term: the transferee's vote requests bypass every voter's loyalty,
	// so the leader holds no lease for the rest of the term.
	transferring bool

	votes quorum.Votes[ID] // answers of the current (pre-)vote round

	targetPriority  int
	priorityCounter int

	obs observation // Observers, LeaderCh, WaitLeader, metrics (observer.go)

	seq uint64
	// Recycled buffers for outbox and events (see unlockAndFlush).
	spareOut    []Message
	spareEvents []Event
}

// NewNode returns a Node for cfg whose timers live on w, that sends through
// tr, persists its term and vote in st and reads its log's last entry from
// log. The node does nothing until Start. NewNode returns the Config's
// validation error, ErrNilArgument (wrapped) for a nil argument, or the
// error of creating a timer. An interface holding a nil pointer, func,
// map, channel or slice (a nil *MemoryStorage, a nil TransportFunc) is a
// nil argument.
func NewNode(cfg Config, w *wheel.Wheel, tr Transport, st Storage, log LogView) (*Node, error) {
	c, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	switch {
	case w == nil:
		return nil, fmt.Errorf("%w: wheel", ErrNilArgument)
	case isNil(tr):
		return nil, fmt.Errorf("%w: transport (%T)", ErrNilArgument, tr)
	case isNil(st):
		return nil, fmt.Errorf("%w: storage (%T)", ErrNilArgument, st)
	case isNil(log):
		return nil, fmt.Errorf("%w: log view (%T)", ErrNilArgument, log)
	}
	if err := c.fitWheel(w); err != nil {
		return nil, err
	}
	if c.Rand == nil {
		c.Rand = randsrc.New()
	}
	metrics, logger := c.state()
	n := &Node{
		id:         c.ID,
		w:          w,
		tr:         tr,
		detection:  c.Detection,
		extContact: c.ExternalContact,
		nodeCold: &nodeCold{
			cfg:      c,
			st:       st,
			lv:       log,
			logger:   logger,
			majority: quorum.Majority(len(c.Voters)),
		},
	}
	n.outbox = n.outArr[:0]
	n.acks = n.ackArr[:0]
	n.peers = n.peerArr[:0]
	for _, v := range c.Voters {
		if v != c.ID {
			n.peers = append(n.peers, v)
		}
	}
	if len(n.peers) <= len(n.peerArr) {
		n.nPeers = uint8(len(n.peers))
	}
	if n.nPeers == 0 { // a group of one voter, or of more than five
		n.voter = make(map[ID]bool, len(c.Voters))
		for _, v := range c.Voters {
			n.voter[v] = true
		}
	}
	n.targetPriority = c.targetPriority()
	n.metrics = metrics
	n.leaseD, n.hbD = c.lease(), c.HeartbeatInterval
	n.tickCQ = c.CheckQuorum && c.ExternalCheckQuorum

	// One random source per timer, derived from Config.Rand: the timers
	// may re-arm on different goroutines of a real-time wheel. WithSeed
	// keeps each inside its timer and draws what sub's would.
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(c.Rand.Uint64(), c.Rand.Uint64())) }
	if c.Emulate.Tick > 0 {
		n.grid = newTickGrid(c.Emulate.Tick, sub())
	}
	mk := func(t *repeated.Timer, name string, d time.Duration, f func(), j repeated.Jitter) error {
		return t.Init(w, fmt.Sprintf("n%d-%s", c.ID, name), d, f,
			repeated.WithJitter(n.onTicks(j)), repeated.WithSeed(c.Rand.Uint64(), c.Rand.Uint64()), repeated.WithLogger(n.logger))
	}
	electionJitter := c.ElectionJitter
	if c.Emulate.ServerLock != nil {
		n.deferred.delay = &delayJitter{inner: electionJitter}
		electionJitter = n.deferred.delay
	}
	if c.Emulate.KeepTimerOnStepDown {
		n.keep = &keepJitter{inner: electionJitter}
		electionJitter = n.keep
	}
	if c.Detection == ContactDeadline {
		n.rest = &restJitter{inner: electionJitter}
		electionJitter = n.rest
	}
	n.fastReset = n.keep == nil && n.deferred.delay == nil && c.Emulate.Tick <= 0 && statelessJitter(c.ElectionJitter, c.ElectionTimeout)
	if err := mk(&n.electionT, "election", c.ElectionTimeout, n.onElectionTimer, electionJitter); err != nil {
		return nil, err
	}
	n.voteJ = &roundJitter{inner: c.VoteJitter}
	if err := mk(&n.voteT, "vote", c.VoteTimeout, n.onVoteTimer, n.voteJ); err != nil {
		return nil, err
	}
	if err := mk(&n.stepDownT, "stepdown", c.StepDownInterval, n.onStepDownTimer, repeated.None()); err != nil {
		return nil, err
	}
	n.hbTimers = !c.ExternalHeartbeat
	switch {
	case c.ExternalHeartbeat:
		// The caller heartbeats through BroadcastHeartbeat: no timer.
	case c.Emulate.HeartbeatPerPeer:
		for _, p := range n.peers {
			t := new(repeated.Timer)
			if err := mk(t, fmt.Sprintf("heartbeat-%d", p), c.HeartbeatInterval, func() { n.onPeerHeartbeatTimer(p, t) }, c.HeartbeatJitter); err != nil {
				return nil, err
			}
			n.peerHeartbeatT = append(n.peerHeartbeatT, t)
		}
	default:
		n.heartbeatT = &n.heartbeatTimer
		if err := mk(n.heartbeatT, "heartbeat", c.HeartbeatInterval, n.onHeartbeatTimer, c.HeartbeatJitter); err != nil {
			return nil, err
		}
	}
	if c.SnapshotInterval > 0 {
		n.snapshotT = &n.snapshotTimer
		if err := mk(n.snapshotT, "snapshot", c.SnapshotInterval, n.onSnapshotTimer, c.SnapshotJitter); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// isNil reports whether v is nil or holds a nil pointer, func, map,
// channel, slice or interface, whose methods would dereference nil.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.Slice, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// statelessJitter reports whether j's draws for base do not depend on the
// repeated.State they are given (First, Consecutive), as for None,
// Proportional and UniformExtra, probed with equal sources. Only then is a
// re-arm by Reset, which draws as a later schedule, the same as Restart,
// which draws as the first. A policy that panics counts as stateful.
func statelessJitter(j repeated.Jitter, base time.Duration) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	// One source, reseeded for every draw (2 allocations): the probe runs
	// for every node built, each wake of a hibernating group included.
	src := new(rand.PCG)
	r := rand.New(src)
	for seed := uint64(1); seed <= 3; seed++ {
		draw := func(st repeated.State) time.Duration {
			src.Seed(seed, seed)
			return j.Next(base, st, r)
		}
		first := draw(repeated.State{First: true})
		if draw(repeated.State{}) != first || draw(repeated.State{Consecutive: 3}) != first {
			return false
		}
	}
	return true
}

// ID returns the node's ID.
func (n *Node) ID() ID { return n.id }

// Config returns the node's configuration with defaults applied.
func (n *Node) Config() Config { return n.cfg }

// Leading reports whether the node is a started, running leader, without
// taking the node's lock: a host that drives many nodes (package
// multiraft) skips its followers cheaply. The answer may be stale by the
// time it is used; a method that needs the role checks it again under
// the lock (BroadcastHeartbeat returns ErrNotLeader).
func (n *Node) Leading() bool { return n.leading.Load() }
