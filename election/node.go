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
	mu sync.Mutex
	// leading mirrors role == Leader of a started, running node, for
	// Leading; written with mu held, read without it.
	leading atomic.Bool
	cfg     Config
	id      ID
	w       *wheel.Wheel
	tr      Transport
	st      Storage
	lv      LogView
	logger  hclog.Logger
	peers   []ID // voters other than id, in Config order
	// peerArr holds peers for groups of up to five voters, inside the
	// Node, so that checking a message's sender (isVoter) touches no
	// memory of its own.
	peerArr [4]ID
	// acks is a leader's answers per peer, in peers' order (empty when not
	// leading; its array is kept for the next term led). Not inline: the
	// Node would outgrow its 1,024-byte size class.
	acks   []peerAck
	voter  map[ID]bool
	quorum int

	electionT, voteT, stepDownT, heartbeatT, snapshotT *repeated.Timer
	// peerHeartbeatT holds one heartbeat timer per peer (same order as
	// peers) with Config.HeartbeatPerPeer; heartbeatT is nil then, and
	// both are empty with Config.ExternalHeartbeat.
	peerHeartbeatT []*repeated.Timer
	// keep forces the next schedule of the election timer to a given
	// delay (Config.KeepTimerOnStepDown); nil without that option.
	keep *keepJitter
	// voteJ is the vote timer's jitter, which counts consecutive rounds.
	voteJ *roundJitter
	// grid is the node's ticker with Config.Tick (tick.go).
	grid tickGrid
	// host is the state of timers deferred by Config.Host (host.go).
	host hostDeferred

	started, stopped bool

	role   Role
	term   uint64
	vote   ID
	leader ID

	lastContact time.Duration // last accepted heartbeat of the leader
	hasContact  bool
	lastReset   time.Duration // last heartbeat or granted vote (CheckLastContact)

	votes map[ID]bool // responses of the current (pre-)vote round

	targetPriority  int
	priorityCounter int

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
	n.peers = n.peerArr[:0]
	for _, v := range c.Voters {
		n.voter[v] = true
		if v != c.ID {
			n.peers = append(n.peers, v)
		}
	}
	n.targetPriority = c.targetPriority()
	n.obs.metrics = newNodeMetrics(c)

	// One random source per timer, derived from Config.Rand: the timers
	// may re-arm on different goroutines of a real-time wheel. WithSeed
	// keeps each inside its timer and draws what sub's would.
	sub := func() *rand.Rand { return rand.New(rand.NewPCG(c.Rand.Uint64(), c.Rand.Uint64())) }
	if c.Tick > 0 {
		n.grid = newTickGrid(c.Tick, sub())
	}
	mk := func(name string, d time.Duration, f func(), j repeated.Jitter) (*repeated.Timer, error) {
		return repeated.New(w, fmt.Sprintf("n%d-%s", c.ID, name), d, f,
			repeated.WithJitter(n.onTicks(j)), repeated.WithSeed(c.Rand.Uint64(), c.Rand.Uint64()), repeated.WithLogger(n.logger))
	}
	electionJitter := c.ElectionJitter
	if c.Host != nil {
		n.host.delay = &delayJitter{inner: electionJitter}
		electionJitter = n.host.delay
	}
	if c.KeepTimerOnStepDown {
		n.keep = &keepJitter{inner: electionJitter}
		electionJitter = n.keep
	}
	if n.electionT, err = mk("election", c.ElectionTimeout, n.onElectionTimer, electionJitter); err != nil {
		return nil, err
	}
	n.voteJ = &roundJitter{inner: c.VoteJitter}
	if n.voteT, err = mk("vote", c.VoteTimeout, n.onVoteTimer, n.voteJ); err != nil {
		return nil, err
	}
	if n.stepDownT, err = mk("stepdown", c.StepDownInterval, n.onStepDownTimer, repeated.None()); err != nil {
		return nil, err
	}
	switch {
	case c.ExternalHeartbeat:
		// The caller heartbeats through BroadcastHeartbeat: no timer.
	case c.HeartbeatPerPeer:
		for _, p := range n.peers {
			var t *repeated.Timer
			t, err = mk(fmt.Sprintf("heartbeat-%d", p), c.HeartbeatInterval, func() { n.onPeerHeartbeatTimer(p, t) }, c.HeartbeatJitter)
			if err != nil {
				return nil, err
			}
			n.peerHeartbeatT = append(n.peerHeartbeatT, t)
		}
	default:
		if n.heartbeatT, err = mk("heartbeat", c.HeartbeatInterval, n.onHeartbeatTimer, c.HeartbeatJitter); err != nil {
			return nil, err
		}
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

// Leading reports whether the node is a started, running leader, without
// taking the node's lock: a host that drives many nodes (package
// multiraft) skips its followers cheaply. The answer may be stale by the
// time it is used; a method that needs the role checks it again under
// the lock (BroadcastHeartbeat returns ErrNotLeader).
func (n *Node) Leading() bool { return n.leading.Load() }
