package etcdadapter

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/cfgerr"
)

// ErrInvalidConfig is wrapped by every error that Config.Validate,
// Config.ValidateTiming, NewNode, Node.Start (for a config etcd raft
// refuses) and the mapping helpers (Ticks, FromTimeouts, FromRange)
// report about their input. An error about one field is a *FieldError.
var ErrInvalidConfig = errors.New("etcdadapter: invalid config")

// A FieldError reports one invalid field of a configuration: its name
// (e.g. "ElectionTick"), the value it had and why it is refused. It is
// the type every raftick package reports configuration errors with (see
// election.FieldError, sim.FieldError); this package's wrap
// ErrInvalidConfig, and a refusal by etcd raft's own validation carries
// etcd's error as Cause.
type FieldError = cfgerr.FieldError

// fieldErr returns a *FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Other sentinel errors. Errors returned by this package wrap one of them
// or ErrInvalidConfig (with %w), so callers can test with errors.Is.
var (
	// ErrNotRunning is returned by the Node's methods that need a running
	// node (started and not crashed).
	ErrNotRunning = errors.New("etcdadapter: node not running")
	// ErrRunning is returned by Start on a running node.
	ErrRunning = errors.New("etcdadapter: node already running")
	// ErrClosed is returned by every method of a closed Node.
	ErrClosed = errors.New("etcdadapter: node closed")
	// ErrUnsupportedRaft is returned by NewNode when Config.Rand is set but
	// the linked go.etcd.io/raft/v3 does not have the internal layout the
	// deterministic election timeout relies on (see doc.go,
	// "Determinism").
	ErrUnsupportedRaft = errors.New("etcdadapter: go.etcd.io/raft/v3 layout not supported for deterministic timeouts")
	// ErrBadMessage is returned by Node.Step for a nil message.
	ErrBadMessage = errors.New("etcdadapter: bad message")
)

// errWrongTo is the reason of an EventIgnored for a message addressed to
// another node.
var errWrongTo = errors.New("wrong recipient")

// Config configures one Node: the election settings of go.etcd.io/raft/v3
// and how the adapter drives them. Start from DefaultConfig.
type Config struct {
	// ID is the node's raft ID; not 0.
	ID uint64
	// Peers lists the IDs of every voter of the group, this node included,
	// without duplicates or 0. It bootstraps a fresh node's storage (the
	// ConfState of an initial snapshot at index 1, term 1, as etcd's own
	// interaction tests do); a node restarted from its storage ignores it.
	Peers []uint64

	// ElectionTick is raft.Config.ElectionTick: a follower that hears
	// nothing from a leader for a randomized timeout drawn uniformly from
	// the integers [ElectionTick, 2*ElectionTick-1] ticks starts an
	// election; a leader with CheckQuorum checks its quorum every
	// ElectionTick ticks. Must be greater than HeartbeatTick. etcd's
	// server default is 10 (1000 ms at 100 ms ticks).
	ElectionTick int
	// HeartbeatTick is raft.Config.HeartbeatTick: a leader broadcasts
	// heartbeats every HeartbeatTick ticks. At least 1; etcd's default is
	// 1.
	HeartbeatTick int
	// PreVote is raft.Config.PreVote (Ongaro's thesis, section 9.6).
	// etcd's server default is true.
	PreVote bool
	// CheckQuorum is raft.Config.CheckQuorum: a leader steps down when no
	// quorum was active within ElectionTick ticks, and followers ignore
	// (pre-)vote requests while they heard from a leader within
	// ElectionTick ticks. etcd's server always sets it.
	CheckQuorum bool
	// TickInterval is the time between two Tick calls (etcd's
	// --heartbeat-interval is HeartbeatTick * TickInterval). Positive.
	// Default 100ms, etcd's.
	TickInterval time.Duration

	// Rand, if not nil, makes the node's randomized election timeout a
	// function of this source: each time etcd draws a new timeout (on
	// becoming follower, candidate or leader) the adapter replaces it with
	// ElectionTick + Rand.IntN(ElectionTick), the same distribution. nil
	// leaves etcd's own draw from crypto/rand in place (production). The
	// node uses Rand only while it processes work, so nodes driven by one
	// goroutine (a virtual wheel) may share one source; see doc.go,
	// "Determinism", for how and why.
	Rand *rand.Rand
	// Disk, if not nil, models storage latency: it is called for every
	// Ready that must be synced (a new term or vote, or entries) and
	// returns how long the write takes. Meanwhile the node keeps stepping
	// messages and ticking, but its Ready stays pending (etcd's loop does
	// not produce the next Ready before Advance); a leader's messages leave
	// at once, everyone else's when the write completes, as etcd's server
	// does (it sends a leader's messages in parallel with the WAL write and
	// a follower's after it). A result <= 0 means an instantaneous write.
	// Disk is called on the goroutine processing the node, with the node's
	// lock held: it must be quick and must not call the node.
	Disk func(Write) time.Duration
	// Observer, if set, receives the node's state changes as the election
	// package's events (see doc.go), in order, without the node's lock
	// held, on the goroutine processing the node. It may call the node.
	Observer func(election.Event)
	// Logger receives etcd raft's log. nil means the module's default:
	// etcd raft's warnings and errors to standard error, named
	// raftick.etcd, so that a failure is never silent; NullLogger()
	// discards everything.
	Logger raft.Logger
}

// Write describes a storage write a node is about to make (Config.Disk).
type Write struct {
	Node uint64
	// TermChanged and VoteChanged report which parts of the HardState
	// changed; Entries is the number of log entries appended.
	TermChanged, VoteChanged bool
	Entries                  int
}

// DefaultConfig returns etcd's server defaults: a 100 ms tick,
// ElectionTick 10, HeartbeatTick 1 (heartbeats every 100 ms, election
// timeouts in [1000, 2000) ms), PreVote and CheckQuorum on; Rand nil
// (etcd's own random timeouts).
func DefaultConfig() Config {
	return Config{
		ElectionTick:  10,
		HeartbeatTick: 1,
		PreVote:       true,
		CheckQuorum:   true,
		TickInterval:  100 * time.Millisecond,
	}
}

// ElectionRange returns the span of the randomized election timeout in
// time: etcd draws it from the integers [ElectionTick, 2*ElectionTick-1]
// ticks, so it lies in [ElectionTick*TickInterval, 2*ElectionTick*TickInterval).
// As the node counts whole ticks, a follower actually times out between
// one tick less and the drawn value after its last contact with a leader,
// depending on the phase of its ticker (see doc.go).
func (c Config) ElectionRange() (lo, hi time.Duration) {
	return time.Duration(c.ElectionTick) * c.TickInterval, time.Duration(2*c.ElectionTick) * c.TickInterval
}

// HeartbeatInterval returns HeartbeatTick*TickInterval.
func (c Config) HeartbeatInterval() time.Duration {
	return time.Duration(c.HeartbeatTick) * c.TickInterval
}

// Ticks converts d to a whole number of ticks of length tick: d must be
// a positive multiple of tick. It is what etcd's server does with
// --election-timeout and --heartbeat-interval, except that etcd truncates
// silently; Ticks refuses a remainder, so a configuration never means
// something other than it says. Its errors are *FieldError values without
// a Field.
func Ticks(d, tick time.Duration) (int, error) {
	return ticks("", "", d, tick)
}

// ticks is Ticks with the fields to name in errors: field for d,
// tickField for tick.
func ticks(field, tickField string, d, tick time.Duration) (int, error) {
	switch {
	case tick <= 0:
		return 0, fieldErr(tickField, tick, "the tick interval must be positive")
	case d <= 0:
		return 0, fieldErr(field, d, "must be positive")
	case d%tick != 0:
		return 0, fieldErr(field, d, "is not a whole number of %v ticks", tick)
	}
	n := d / tick
	if n > 1<<30 {
		return 0, fieldErr(field, d, "is too many (%d) %v ticks", n, tick)
	}
	return int(n), nil
}

// FromTimeouts returns DefaultConfig with TickInterval tick and the tick
// counts of etcd's two timing flags: electionTimeout (etcd's
// --election-timeout, the lower end of the randomized range, so timeouts
// fall in [electionTimeout, 2*electionTimeout)) and heartbeat (etcd's
// --heartbeat-interval). Both must be whole multiples of tick, and
// electionTimeout must exceed heartbeat. A tick of 0 means heartbeat,
// etcd's own choice (its tick is the heartbeat interval). Errors are
// *FieldError values naming the Config field the argument sets:
// ElectionTick for electionTimeout, HeartbeatTick for heartbeat,
// TickInterval for tick.
func FromTimeouts(electionTimeout, heartbeat, tick time.Duration) (Config, error) {
	if tick == 0 {
		tick = heartbeat
	}
	c := DefaultConfig()
	c.TickInterval = tick
	et, err := ticks("ElectionTick", "TickInterval", electionTimeout, tick)
	if err != nil {
		return Config{}, err
	}
	hb, err := ticks("HeartbeatTick", "TickInterval", heartbeat, tick)
	if err != nil {
		return Config{}, err
	}
	c.ElectionTick, c.HeartbeatTick = et, hb
	if err := c.ValidateTiming(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// FromRange is FromTimeouts for a timeout range [lo, hi): etcd can only
// draw from [T, 2T), so hi must be 2*lo (hi == 0 means 2*lo). A range of
// another form is a *FieldError for ElectionTick with the range as its
// Value.
func FromRange(lo, hi, heartbeat, tick time.Duration) (Config, error) {
	if hi != 0 && hi != 2*lo {
		return Config{}, fieldErr("ElectionTick", fmt.Sprintf("%v-%v", lo, hi),
			"etcd draws election timeouts from [T, 2T): want %v-%v", lo, 2*lo)
	}
	return FromTimeouts(lo, heartbeat, tick)
}

// ValidateTiming reports the first invalid timing field of c
// (TickInterval, ElectionTick, HeartbeatTick), or nil: the checks of
// Validate that do not depend on the node's identity or etcd's own
// validation, for a configuration that is a template of many nodes.
func (c Config) ValidateTiming() error {
	switch {
	case c.TickInterval <= 0:
		return fieldErr("TickInterval", c.TickInterval, "must be positive")
	case c.HeartbeatTick < 1:
		return fieldErr("HeartbeatTick", c.HeartbeatTick, "must be at least 1")
	case c.ElectionTick <= c.HeartbeatTick:
		return fieldErr("ElectionTick", c.ElectionTick, "must be greater than HeartbeatTick (%d)", c.HeartbeatTick)
	case c.ElectionTick > 1<<30:
		return fieldErr("ElectionTick", c.ElectionTick, "must be at most %d", 1<<30)
	case c.TickInterval < election.MinPeriod:
		return fieldErr("TickInterval", c.TickInterval, "is below the floor of %v (time.Duration counts nanoseconds: did you forget a unit?)", election.MinPeriod)
	case time.Duration(c.ElectionTick)*c.TickInterval < election.MinElectionTimeout:
		return fieldErr("TickInterval", c.TickInterval, "gives an election timeout of %v (%d ticks), below election.MinElectionTimeout (%v)",
			time.Duration(c.ElectionTick)*c.TickInterval, c.ElectionTick, election.MinElectionTimeout)
	}
	return nil
}

// validateNode checks everything but etcd's own validation.
func (c Config) validateNode() error {
	if err := c.ValidateTiming(); err != nil {
		return err
	}
	if c.ID == 0 {
		return fieldErr("ID", c.ID, "must not be 0")
	}
	if raft.IsLocalMsgTarget(c.ID) {
		return fieldErr("ID", c.ID, "is reserved by etcd raft for local targets (%#x)", c.ID)
	}
	if !slices.Contains(c.Peers, c.ID) {
		return fieldErr("Peers", c.Peers, "must contain the node's own ID %d", c.ID)
	}
	seen := make(map[uint64]bool, len(c.Peers))
	for _, p := range c.Peers {
		switch {
		case p == 0:
			return fieldErr("Peers", c.Peers, "contains 0")
		case raft.IsLocalMsgTarget(p):
			return fieldErr("Peers", c.Peers, "contains %#x, reserved by etcd raft for local targets", p)
		case seen[p]:
			return fieldErr("Peers", c.Peers, "lists %d twice", p)
		}
		seen[p] = true
	}
	return nil
}

// Validate reports the first invalid field of c, or nil. After this
// package's own checks (with messages naming the field) it runs etcd's
// validation of the raft.Config the node would use, by building a
// throwaway RawNode on an empty MemoryStorage (etcd keeps its validation
// unexported and panics on a bad config; Validate turns that into an
// error wrapping ErrInvalidConfig with etcd's as its cause).
func (c Config) Validate() error {
	if err := c.validateNode(); err != nil {
		return err
	}
	st, err := bootstrapStorage(c.Peers)
	if err != nil {
		return err
	}
	_, err = newRawNode(c.raftConfig(st))
	return err
}

// raftConfig is the raft.Config of a node on storage st.
func (c Config) raftConfig(st raft.Storage) *raft.Config {
	logger := c.Logger
	if logger == nil {
		logger = defaultLogger()
	}
	return &raft.Config{
		ID:              c.ID,
		ElectionTick:    c.ElectionTick,
		HeartbeatTick:   c.HeartbeatTick,
		Storage:         st,
		MaxSizePerMsg:   1 << 20, // etcd's server: 1 MiB
		MaxInflightMsgs: 512,     // etcd's server: maxInflightMsgs
		CheckQuorum:     c.CheckQuorum,
		PreVote:         c.PreVote,
		Logger:          logger,
	}
}

// newRawNode is raft.NewRawNode with etcd's panics on a bad config or
// storage turned into errors: a *FieldError (without a Field: etcd judges
// the config as a whole) whose Cause is etcd's error.
func newRawNode(rc *raft.Config) (rn *raft.RawNode, err error) {
	defer func() {
		if p := recover(); p != nil {
			cause, ok := p.(error)
			if !ok {
				cause = errors.New(fmt.Sprint(p))
			}
			rn, err = nil, etcdRefused(cause)
		}
	}()
	rn, err = raft.NewRawNode(rc)
	if err != nil {
		return nil, etcdRefused(err)
	}
	return rn, nil
}

// etcdRaft is the Value of an error etcd raft's validation reports: the
// raft.Config the adapter built, described rather than printed.
type etcdRaft struct{}

func (etcdRaft) String() string { return "etcd raft config" }

// etcdRefused returns the error for a config etcd raft refused with cause.
func etcdRefused(cause error) error {
	return &FieldError{Value: etcdRaft{}, Reason: "refused by etcd raft: " + cause.Error(), Err: ErrInvalidConfig, Cause: cause}
}
