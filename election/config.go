package election

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/internal/logging"
	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/repeated"
)

// Config configures a Node. Start from DefaultConfig and set ID and Voters.
// Zero values of optional fields select the documented defaults; Validate
// reports the first invalid field.
//
// Every field but Emulate is for production use. Emulate groups the
// settings that exist only so that a simulator can imitate other
// implementations; production code leaves it zero.
type Config struct {
	// ID is this node's ID; non-zero and one of Voters.
	ID ID
	// Voters lists every voting member of the group, this node included;
	// non-empty, no duplicates, no None. A majority of Voters is a quorum.
	Voters []ID

	// ElectionTimeout (ET) is the minimum time a follower waits without
	// hearing from a leader before it campaigns; > 0. The actual timeout is
	// ElectionJitter applied to ET on every schedule.
	ElectionTimeout time.Duration
	// ElectionJitter randomizes the election timeout. nil means
	// repeated.Proportional(1): uniform in [ET, 2ET). NewNode calls its
	// Next a few times with sources of its own, to learn whether its draws
	// depend on repeated.State: if not (None, Proportional, UniformExtra),
	// a heartbeat re-arms the timer without a lock (see Node.Step).
	ElectionJitter repeated.Jitter

	// HeartbeatInterval is how often a leader sends heartbeats; in
	// (0, ElectionTimeout). 0 means ElectionTimeout/10. It is the base of
	// HeartbeatJitter.
	HeartbeatInterval time.Duration
	// HeartbeatJitter randomizes every heartbeat period; nil means
	// repeated.None(): exactly HeartbeatInterval. hashicorp/raft waits
	// uniform [HT/10, HT/5) between heartbeats, which is
	// HeartbeatInterval HT/10 with repeated.Proportional(1). Choose it so
	// that periods stay well below ElectionTimeout; that is not checked.
	HeartbeatJitter repeated.Jitter
	// ExternalHeartbeat makes the caller drive the leader's heartbeats: the
	// node arms no heartbeat timer, and its owner calls
	// Node.BroadcastHeartbeat at least every HeartbeatInterval while the
	// node leads (Node.Leading tells which nodes do). A host of many groups
	// (package multiraft) heartbeats all its leaders from one tick this
	// way instead of keeping a timer per leader that its tick always
	// outruns. On winning, the leader still heartbeats every peer at once.
	// HeartbeatInterval keeps its meaning: CheckQuorum waits that long for
	// an unanswered heartbeat before it counts a peer as silent, so a
	// caller that heartbeats less often makes its leaders step down.
	// HeartbeatJitter is not used. It cannot be combined with
	// Emulate.HeartbeatPerPeer.
	ExternalHeartbeat bool
	// ExternalCheckQuorum makes the caller drive CheckQuorum too: the
	// leader arms no step-down timer, and Node.LeaderTick, which the
	// caller calls instead of BroadcastHeartbeat, checks the quorum before
	// it heartbeats (at every call, so at least every HeartbeatInterval,
	// more often than StepDownInterval, which it does not use). A host of
	// many groups judges all its leaders from its one heartbeat tick
	// instead of one timer per leader. It requires ExternalHeartbeat;
	// without CheckQuorum it does nothing.
	ExternalCheckQuorum bool
	// ExternalContact lets the caller take a follower's heartbeats
	// without the node's lock and watch the follower's contact in place
	// of its election timer: a host of many groups then answers a
	// heartbeat with a compare and a store, and re-arms no timer for it.
	// Node.TryHeartbeat accepts a heartbeat of the follower's leader in
	// its term when nothing else happened to the node since the last one
	// it stepped; while a follower hears its leader, its election timer
	// is stopped and Node.SuperviseContact, which the caller calls for
	// every follower at least every ElectionTimeout minus its argument,
	// arms the timer for a fresh timeout after the last contact once
	// that contact is older than the argument. The election then comes
	// when ContactDeadline's would. It requires Detection ContactDeadline
	// and groups of at most five voters (TryHeartbeat declines others),
	// and cannot be combined with Emulate.ServerLock.
	ExternalContact bool

	// VoteTimeout bounds one election round of a candidate; when it expires
	// the candidate starts its next round: with PreVote a pre-vote (as
	// etcd's candidate does), otherwise a new term. >= 0; 0 means
	// ElectionTimeout.
	VoteTimeout time.Duration
	// VoteJitter randomizes the vote timeout; nil means ElectionJitter.
	// Its State.Consecutive is the number of candidate rounds the node
	// has run in a row before this one, since it last knew a leader, so
	// repeated.Backoff backs off across failed rounds.
	VoteJitter repeated.Jitter
	// Lagging, if set, is asked before a timer acts on a peer's silence
	// whether that silence may be the host's own backlog (or the peer
	// host's) rather than the peer's: a follower's or pre-candidate's
	// election timer asks about the leader it knows (none: nothing is
	// asked), a candidate's vote timer about each voter that has not
	// answered its round, a leader's CheckQuorum check about each voter it
	// finds silent. A follower whose Lagging says true starts nothing and
	// its timer runs on with a fresh timeout; a candidate whose unanswered
	// voters it holds, with the votes granted, make a quorum keeps its
	// round; a leader counts the voters it holds as reachable. The caller
	// must bound every hold (package multiraft holds a peer only while its
	// host is known alive and at most a few election timeouts). Safety
	// does not depend on it: the lease (QuorumContact) still counts only
	// answers within it. nil means never. It is called with the node's
	// lock held and must not call the node.
	Lagging func(Silence) bool

	// StepDownInterval is the period of the leader's step-down timer, which
	// checks (with CheckQuorum) that a quorum answered within the lease.
	// >= 0; 0 means ElectionTimeout/2.
	StepDownInterval time.Duration
	// LeaseRatio sets the leader lease to ElectionTimeout*LeaseRatio; in
	// (0, 1]. 0 means 0.9 (SOFAJRaft's leaderLeaseTimeRatio).
	LeaseRatio float64

	// SnapshotInterval is the period of the snapshot timer; >= 0, 0 means
	// no snapshot timer. It requires OnSnapshot.
	SnapshotInterval time.Duration
	// SnapshotJitter randomizes the snapshot period; nil means
	// repeated.FirstOnly(): first period in [T/2, T), then T, so the
	// snapshots of many groups do not coincide.
	SnapshotJitter repeated.Jitter
	// OnSnapshot is called by the snapshot timer, without the node's lock,
	// on the goroutine that runs the wheel's callbacks: it must be short. To
	// take a snapshot that may block, hand the work off from OnSnapshot (or
	// give the wheel an Executor); a timer never runs two OnSnapshot calls
	// of one node at once. Required when SnapshotInterval > 0, forbidden
	// otherwise.
	OnSnapshot func()

	// PreVote enables the pre-vote phase: a node first asks whether it
	// could win (without changing any term) and campaigns only if a quorum
	// says yes. A node refuses a pre-vote while it has heard from a leader
	// within ElectionTimeout, so a rejoining node cannot disrupt a healthy
	// group.
	PreVote bool
	// CheckQuorum makes a leader step down when, at a step-down tick, fewer
	// than a quorum of voters (itself included) answered within the lease,
	// counting as answering a voter that has had no heartbeat unanswered
	// for a HeartbeatInterval: a leader steps down for heartbeats its peers
	// did not answer, not for heartbeats it was late to send (a stalled
	// process or timer goroutine). The lease (QuorumContact) counts only
	// answers within it.
	//
	// As etcd's CheckQuorum does, it also makes a node keep the promise
	// the lease relies on: for ElectionTimeout after it hears a leader (or
	// starts in a term above 0) it ignores vote requests other than
	// leadership transfers, without adopting their term, and does not
	// campaign in a new term itself (see Node.QuorumContact).
	CheckQuorum bool
	// LeaderStickiness makes a node ignore vote requests (other than
	// leadership transfers), without adopting their term, while it is
	// leader or a leader is alive in the sense of Stickiness. It keeps the
	// lease's promise as CheckQuorum does.
	LeaderStickiness bool
	// Stickiness decides for how long a node stays loyal to a leader it
	// knows, refusing pre-votes (with PreVote) and votes (with
	// CheckQuorum or LeaderStickiness). StickyByContact (the zero value):
	// while it heard from the leader within ElectionTimeout (the thesis,
	// etcd, SOFAJRaft). StickyUntilTimeout: as long as it knows the
	// leader, however long ago the last contact was, except to the leader
	// itself campaigning; it forgets the leader only when its own election
	// timer fires and finds the leader silent, or when it campaigns or
	// moves to a higher term (hashicorp/raft). After a leader crash, a
	// candidate then wins only once a quorum of survivors have each timed
	// out on their own timers. Either way a node stays loyal for
	// ElectionTimeout after it heard a leader (see Node.QuorumContact).
	Stickiness StickinessMode

	// Priority is this node's election priority; >= 0, 0 disables priority
	// election for this node (it always may campaign). A node whose
	// priority is below the target priority (the highest in Priorities)
	// skips election timeouts; the target decays after every second skip,
	// as in SOFAJRaft, so lower priorities get their turn if the best node
	// is down.
	Priority int
	// Priorities gives the election priority of voters (missing: 0). Keys
	// must be voters, values >= 0; if the entry for ID is present it must
	// equal Priority.
	Priorities map[ID]int
	// PriorityDecayGap is the minimum step by which the target priority
	// decays; >= 0, 0 means 10. Each decay lowers the target by
	// max(PriorityDecayGap, target/5), to no lower than 1.
	PriorityDecayGap int

	// Detection selects how a follower detects a dead leader.
	Detection DetectionMode

	// Rand is the source of all randomness of the node (timer jitter). It
	// is consumed only in NewNode (to seed the timers' own generators), so
	// it may be shared by nodes created one after another on one goroutine
	// (a simulated cluster). nil means a source seeded from the operating
	// system's entropy, different for every node and run; set it for
	// reproducible runs.
	Rand *rand.Rand
	// Logger receives the node's logs. nil means a logger writing to
	// standard error at level Warn (hclog's format, as hashicorp/raft
	// logs), so that what goes wrong (a failing disk, a lost quorum, an
	// impossible message) is never silent; pass hclog.NewNullLogger() to
	// silence a node on purpose, or a logger of your own.
	Logger hclog.Logger
	// Observer, if set, receives every Event, synchronously, on the
	// goroutine that caused it, without the node's lock held. It may call
	// the node (Status, Step, ...). Events of one node carry increasing Seq.
	//
	// Observer must not block: a timer's event is delivered on the wheel's
	// driver goroutine (or the goroutine advancing a virtual wheel), so a
	// blocking Observer (an unbuffered "ch <- e") stalls every timer of
	// every group on the wheel, and Start, which reports an event, blocks
	// until it returns. To read events from a channel, use NewObserver and
	// Node.RegisterObserver instead, which never hold the wheel.
	Observer func(Event)

	// Metrics receives the node's metrics (the raftick.* names listed in
	// the package documentation). nil means go-metrics' global sink
	// (metrics.Default(), set up with metrics.NewGlobal), as hashicorp/raft
	// does. Set it to *metrics.BlackholeSink to turn metrics off: the node
	// then computes nothing for them (simulations of many clusters).
	Metrics metrics.MetricSink
	// MetricsLabels are added to every metric of the node, after the
	// label node (the node's ID, always present): a multi-raft host or
	// the user labels a group's nodes with the group, for example. Each
	// label adds series: with many groups in a process prefer few labels
	// of few values (a group label per group makes a series per group and
	// name). Names must be non-empty, distinct and not "node".
	MetricsLabels []metrics.Label

	// Emulate makes the node imitate other implementations' timing, for
	// simulators (see Emulation); production code leaves it zero.
	Emulate Emulation

	// share is set by Shared: the state the nodes made from this Config
	// and its copies share.
	share *nodeShare
}

// DefaultConfig returns a Config with ElectionTimeout 1s randomized to
// [ET, 2ET) (ElectionJitter repeated.Proportional(1)), PreVote and
// CheckQuorum on, ResetOnHeartbeat detection (the Raft paper's and etcd's;
// hashicorp/raft and SOFAJRaft check the last contact instead, see
// CheckLastContact) and leader stickiness off. Every other field is zero,
// so the fields derived from ElectionTimeout follow it when you change it:
// heartbeats every ET/10, a vote timeout of ET, a step-down check every
// ET/2 and a lease of 0.9 ET. With ElectionTimeout 150ms that is 15ms,
// 150ms, 75ms and 135ms. Effective and Node.Config report the values in
// force. ID and Voters must still be set.
func DefaultConfig() Config {
	return Config{
		ElectionTimeout: time.Second,
		ElectionJitter:  repeated.Proportional(1),
		PreVote:         true,
		CheckQuorum:     true,
		Detection:       ResetOnHeartbeat,
	}
}

// Validate reports the first invalid field of c (after defaults are
// applied), or nil. Errors name the field.
func (c Config) Validate() error {
	_, err := c.normalized()
	return err
}

// Effective returns c with every zero optional field replaced by its
// default, as a Node created from c runs it (see Node.Config), or the
// error of Validate. Rand stays nil if it was: NewNode then draws a fresh
// seed.
func (c Config) Effective() (Config, error) { return c.normalized() }

// Quorum returns the number of votes that make a majority of Voters.
func (c Config) Quorum() int { return quorum.Majority(len(c.Voters)).Size() }

// normalized returns a copy of c with defaults applied, or the first
// validation error.
func (c Config) normalized() (Config, error) {
	// A typed nil in an interface field is not nil to a comparison: it
	// would select no default and panic at its first use.
	for _, f := range []struct {
		name string
		v    any
	}{
		{"ElectionJitter", c.ElectionJitter}, {"VoteJitter", c.VoteJitter},
		{"HeartbeatJitter", c.HeartbeatJitter}, {"SnapshotJitter", c.SnapshotJitter},
		{"Logger", c.Logger}, {"Metrics", c.Metrics}, {"Emulate.ServerLock", c.Emulate.ServerLock},
	} {
		if f.v != nil && isNil(f.v) {
			return c, fieldErr(f.name, f.v, "is a typed nil (%T): leave it nil for the default", f.v)
		}
	}
	if c.ID == None {
		return c, fieldErr("ID", c.ID, "must not be 0 (None)")
	}
	if len(c.Voters) == 0 {
		return c, fieldErr("Voters", c.Voters, "must not be empty")
	}
	c.Voters = slices.Clone(c.Voters)
	seen := make(map[ID]bool, len(c.Voters))
	for _, v := range c.Voters {
		if v == None {
			return c, fieldErr("Voters", c.Voters, "must not contain 0 (None)")
		}
		if seen[v] {
			return c, fieldErr("Voters", c.Voters, "lists %d twice", v)
		}
		seen[v] = true
	}
	if !seen[c.ID] {
		return c, fieldErr("ID", c.ID, "must be one of Voters %v", c.Voters)
	}
	if c.ElectionTimeout <= 0 {
		return c, fieldErr("ElectionTimeout", c.ElectionTimeout, "must be positive")
	}
	if err := floor("ElectionTimeout", c.ElectionTimeout, MinElectionTimeout); err != nil {
		return c, err
	}
	for _, j := range [...]struct {
		field string
		j     repeated.Jitter
	}{{"ElectionJitter", c.ElectionJitter}, {"HeartbeatJitter", c.HeartbeatJitter}, {"VoteJitter", c.VoteJitter}, {"SnapshotJitter", c.SnapshotJitter}} {
		if err := repeated.ValidateJitter(j.j); err != nil {
			return c, &FieldError{Field: j.field, Value: j.j, Reason: err.Error(), Err: ErrInvalidConfig, Cause: err}
		}
	}
	if c.ElectionJitter == nil {
		c.ElectionJitter = repeated.Proportional(1)
	}
	if c.HeartbeatInterval < 0 {
		return c, fieldErr("HeartbeatInterval", c.HeartbeatInterval, "must not be negative")
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = c.ElectionTimeout / 10
		if c.HeartbeatInterval <= 0 {
			return c, fieldErr("HeartbeatInterval", c.HeartbeatInterval, "defaults to ElectionTimeout/10, which is 0 for ElectionTimeout %v; set it", c.ElectionTimeout)
		}
	}
	if c.HeartbeatInterval >= c.ElectionTimeout {
		return c, fieldErr("HeartbeatInterval", c.HeartbeatInterval, "must be less than ElectionTimeout (%v)", c.ElectionTimeout)
	}
	if c.ExternalCheckQuorum && !c.ExternalHeartbeat {
		return c, fieldErr("ExternalCheckQuorum", c.ExternalCheckQuorum, "requires ExternalHeartbeat: the quorum is checked by Node.LeaderTick")
	}
	if c.ExternalContact && c.Detection != ContactDeadline {
		return c, fieldErr("ExternalContact", c.ExternalContact, "requires Detection ContactDeadline (is %v)", c.Detection)
	}
	if c.ExternalContact && c.Emulate.ServerLock != nil {
		return c, fieldErr("ExternalContact", c.ExternalContact, "cannot be combined with Emulate.ServerLock, which defers the election timer")
	}
	if c.ExternalHeartbeat && c.Emulate.HeartbeatPerPeer {
		return c, fieldErr("Emulate.HeartbeatPerPeer", c.Emulate.HeartbeatPerPeer, "cannot be combined with ExternalHeartbeat: the caller heartbeats every peer at once")
	}
	if c.VoteTimeout < 0 {
		return c, fieldErr("VoteTimeout", c.VoteTimeout, "must not be negative")
	}
	if c.VoteTimeout == 0 {
		c.VoteTimeout = c.ElectionTimeout
	}
	if c.VoteJitter == nil {
		c.VoteJitter = c.ElectionJitter
	}
	if c.StepDownInterval < 0 {
		return c, fieldErr("StepDownInterval", c.StepDownInterval, "must not be negative")
	}
	if c.StepDownInterval == 0 {
		c.StepDownInterval = c.ElectionTimeout / 2
		if c.StepDownInterval <= 0 {
			return c, fieldErr("StepDownInterval", c.StepDownInterval, "defaults to ElectionTimeout/2, which is 0 for ElectionTimeout %v; set it", c.ElectionTimeout)
		}
	}
	if math.IsNaN(c.LeaseRatio) || c.LeaseRatio < 0 {
		return c, fieldErr("LeaseRatio", c.LeaseRatio, "must be in (0, 1]")
	}
	if c.LeaseRatio == 0 {
		c.LeaseRatio = 0.9
	}
	if c.LeaseRatio > 1 {
		return c, fieldErr("LeaseRatio", c.LeaseRatio, "must be in (0, 1]: the lease (%v) must not exceed ElectionTimeout (%v)",
			time.Duration(float64(c.ElectionTimeout)*c.LeaseRatio), c.ElectionTimeout)
	}
	if time.Duration(float64(c.ElectionTimeout)*c.LeaseRatio) <= 0 {
		return c, fieldErr("LeaseRatio", c.LeaseRatio, "makes the lease 0 for ElectionTimeout %v", c.ElectionTimeout)
	}
	if c.SnapshotInterval < 0 {
		return c, fieldErr("SnapshotInterval", c.SnapshotInterval, "must not be negative")
	}
	if c.SnapshotInterval > 0 && c.OnSnapshot == nil {
		return c, fieldErr("OnSnapshot", "nil", "must be set when SnapshotInterval (%v) is positive", c.SnapshotInterval)
	}
	if c.SnapshotInterval == 0 && c.OnSnapshot != nil {
		return c, fieldErr("SnapshotInterval", c.SnapshotInterval, "must be positive when OnSnapshot is set")
	}
	if c.SnapshotJitter == nil {
		c.SnapshotJitter = repeated.FirstOnly()
	}
	if c.Priority < 0 {
		return c, fieldErr("Priority", c.Priority, "must not be negative (0 disables priority election)")
	}
	if c.Priorities != nil {
		pr := make(map[ID]int, len(c.Priorities))
		for id, p := range c.Priorities {
			if !seen[id] {
				return c, fieldErr("Priorities", c.Priorities, "has an entry for %d, which is not a voter", id)
			}
			if p < 0 {
				return c, fieldErr(fmt.Sprintf("Priorities[%d]", id), p, "must not be negative")
			}
			if id == c.ID && p != c.Priority {
				return c, fieldErr(fmt.Sprintf("Priorities[%d]", id), p, "must equal Priority (%d)", c.Priority)
			}
			pr[id] = p
		}
		c.Priorities = pr
	}
	if c.PriorityDecayGap < 0 {
		return c, fieldErr("PriorityDecayGap", c.PriorityDecayGap, "must not be negative")
	}
	if c.PriorityDecayGap == 0 {
		c.PriorityDecayGap = 10
	}
	if err := c.Emulate.validate(); err != nil {
		return c, err
	}
	if c.Detection > ContactDeadline {
		return c, fieldErr("Detection", c.Detection, "is not a known mode")
	}
	if c.Stickiness > StickyUntilTimeout {
		return c, fieldErr("Stickiness", c.Stickiness, "is not a known mode")
	}
	if c.HeartbeatJitter == nil {
		c.HeartbeatJitter = repeated.None()
	}
	names := map[string]bool{"node": true}
	for i, l := range c.MetricsLabels {
		switch {
		case l.Name == "":
			return c, fieldErr(fmt.Sprintf("MetricsLabels[%d]", i), l, "has an empty name")
		case names[l.Name]:
			return c, fieldErr(fmt.Sprintf("MetricsLabels[%d]", i), l, "repeats the label %q (node is the node's ID)", l.Name)
		}
		names[l.Name] = true
	}
	c.MetricsLabels = slices.Clone(c.MetricsLabels)
	if err := c.checkFloors(); err != nil {
		return c, err
	}
	if c.Logger == nil {
		c.Logger = defaultLogger()
	}
	return c, nil
}

// refusesVotesInLease reports whether a node refuses vote requests (other
// than transfers) while it is loyal to a leader: with LeaderStickiness,
// and with CheckQuorum, as etcd's checkQuorum does (raft.Step's inLease
// check), since the leader lease (Node.QuorumContact) that CheckQuorum
// maintains is sound only if voters keep this promise.
func (c *Config) refusesVotesInLease() bool { return c.LeaderStickiness || c.CheckQuorum }

// defaultLogger returns the Logger of a Config that sets none: warnings
// and errors to standard error (the module's one default,
// internal/logging), named raftick; each node names itself below it.
func defaultLogger() hclog.Logger { return logging.Default("raftick") }

// lease returns the leader lease.
func (c *Config) lease() time.Duration {
	return time.Duration(float64(c.ElectionTimeout) * c.LeaseRatio)
}

// targetPriority returns the highest priority among the voters.
func (c *Config) targetPriority() int {
	t := c.Priority
	for _, p := range c.Priorities {
		t = max(t, p)
	}
	return t
}

// ErrInvalidConfig is wrapped by every error Config.Validate (and so
// NewNode) returns about a Config field; the error is a *FieldError
// naming the field.
var ErrInvalidConfig = errors.New("election: invalid config")

// A FieldError reports one invalid Config field: its name (e.g.
// "ElectionTimeout"), its value and why it is refused. It is the same type
// in every raftick package (sim.FieldError, wheel.FieldError), so one
// errors.As reads any of them.
type FieldError = cfgerr.FieldError

// fieldErr returns a *FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}
