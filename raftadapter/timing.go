package raftadapter

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Limits hashicorp/raft v1.8.0 enforces in raft.ValidateConfig (config.go).
const (
	// MinTimeout is hashicorp/raft's minimum for HeartbeatTimeout,
	// ElectionTimeout and LeaderLeaseTimeout.
	MinTimeout = 5 * time.Millisecond
	// MinCommitTimeout is hashicorp/raft's minimum CommitTimeout.
	MinCommitTimeout = time.Millisecond
)

// Defaults used where a Timing field is zero.
const (
	// DefaultLeaseRatio is LeaderLeaseTimeout/HeartbeatTimeout in
	// raft.DefaultConfig (500ms/1000ms).
	DefaultLeaseRatio = 0.5
	// DefaultCommitTimeout is raft.DefaultConfig's CommitTimeout.
	DefaultCommitTimeout = 50 * time.Millisecond
)

// ErrInvalidTiming is matched (errors.Is) by every *TimingError.
var ErrInvalidTiming = errors.New("raftadapter: invalid timing")

// ErrNilRaft is returned when a nil *raft.Raft is passed.
var ErrNilRaft = errors.New("raftadapter: nil *raft.Raft")

// Timing is raftick's timing policy for a hashicorp/raft node, in raftick's
// terms (package election), and the rules for mapping it onto raft.Config.
// The names differ between the two worlds; this is the dictionary:
//
//	raftick (Timing)        hashicorp/raft (raft.Config)
//	ElectionTimeout     ->  HeartbeatTimeout   (follower: no leader contact -> campaign)
//	VoteTimeout         ->  ElectionTimeout    (candidate: round timed out -> retry)
//	ElectionTimeout*LeaseRatio -> LeaderLeaseTimeout (leader: no quorum contact -> step down)
//	HeartbeatInterval   ->  (none: fixed at random [HeartbeatTimeout/10, HeartbeatTimeout/5))
//	PreVote             ->  !PreVoteDisabled
//	CommitTimeout       ->  CommitTimeout
//
// hashicorp/raft randomizes both timeouts to [T, 2T) (util.go randomTimeout),
// the equivalent of raftick's default jitter repeated.Proportional(1); no
// other jitter can be expressed. Start from DefaultTiming.
type Timing struct {
	// ElectionTimeout is how long a follower goes without hearing from a
	// leader before it campaigns: raft.Config.HeartbeatTimeout. hashicorp
	// checks it on a free-running timer re-armed every [T, 2T) against the
	// last contact (raftick's election.CheckLastContact mode). At least
	// MinTimeout (5ms).
	ElectionTimeout time.Duration

	// VoteTimeout is how long a (pre-)candidate waits for a round to
	// complete before it starts another: raft.Config.ElectionTimeout,
	// randomized to [T, 2T). 0 means ElectionTimeout. Otherwise at least
	// ElectionTimeout (hashicorp requires ElectionTimeout >= HeartbeatTimeout).
	VoteTimeout time.Duration

	// HeartbeatInterval is not a hashicorp/raft setting: a leader sends
	// heartbeats every random [HeartbeatTimeout/10, HeartbeatTimeout/5)
	// (replication.go heartbeat). It exists so a raftick configuration can be
	// checked for compatibility: 0 means "whatever hashicorp does"; any
	// other value must lie in [ElectionTimeout/10, ElectionTimeout/5].
	HeartbeatInterval time.Duration

	// LeaseRatio sets raft.Config.LeaderLeaseTimeout to
	// ElectionTimeout*LeaseRatio (raftick's election.Config.LeaseRatio). In
	// (0, 1]; 0 means DefaultLeaseRatio (0.5, hashicorp's default ratio).
	// The resulting lease must be at least MinTimeout.
	LeaseRatio float64

	// CommitTimeout is hashicorp's idle time before a leader sends an
	// AppendEntries to advance the commit index (no raftick equivalent).
	// 0 means DefaultCommitTimeout (50ms); otherwise at least 1ms.
	CommitTimeout time.Duration

	// PreVote enables hashicorp's pre-vote round (raft.Config.PreVoteDisabled
	// = !PreVote). hashicorp also disables pre-vote, with a warning, when the
	// transport does not implement raft.WithPreVote.
	PreVote bool
}

// DefaultTiming returns hashicorp/raft's default timing in raftick terms:
// ElectionTimeout 1s, VoteTimeout equal to it, lease ratio 0.5, commit
// timeout 50ms, pre-vote on.
func DefaultTiming() Timing {
	return Timing{
		ElectionTimeout: time.Second,
		LeaseRatio:      DefaultLeaseRatio,
		CommitTimeout:   DefaultCommitTimeout,
		PreVote:         true,
	}
}

// TimingError reports a setting that cannot be mapped onto a valid
// raft.Config. It names the raftick field, the hashicorp/raft field it maps
// to and the rule of hashicorp's that it breaks. errors.Is(err,
// ErrInvalidTiming) holds for every TimingError.
type TimingError struct {
	// Field is the offending field, e.g. "Timing.ElectionTimeout" or
	// "Retune.VoteTimeout"; empty if hashicorp rejected a combination this
	// package did not attribute to a field.
	Field string
	// RaftField is the raft.Config field concerned, e.g. "HeartbeatTimeout".
	RaftField string
	// Msg is the complete human-readable explanation.
	Msg string
	// Err is hashicorp/raft's own error when the rejection came from
	// raft.ValidateConfig or (*raft.Raft).ReloadConfig, else nil.
	Err error
}

// Error returns "raftadapter: " followed by Msg and, if present, hashicorp's
// own message.
func (e *TimingError) Error() string {
	s := "raftadapter: " + e.Msg
	if e.Err != nil {
		s += " (hashicorp/raft: " + e.Err.Error() + ")"
	}
	return s
}

// Unwrap returns hashicorp/raft's error, if any.
func (e *TimingError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidTiming.
func (e *TimingError) Is(target error) bool { return target == ErrInvalidTiming }

func timingErr(field, raftField, format string, args ...any) *TimingError {
	return &TimingError{Field: field, RaftField: raftField, Msg: fmt.Sprintf(format, args...)}
}

// voteTimeout returns the effective VoteTimeout.
func (t Timing) voteTimeout() time.Duration {
	if t.VoteTimeout == 0 {
		return t.ElectionTimeout
	}
	return t.VoteTimeout
}

func (t Timing) leaseRatio() float64 {
	if t.LeaseRatio == 0 {
		return DefaultLeaseRatio
	}
	return t.LeaseRatio
}

func (t Timing) commitTimeout() time.Duration {
	if t.CommitTimeout == 0 {
		return DefaultCommitTimeout
	}
	return t.CommitTimeout
}

// leaseTimeout returns ElectionTimeout*LeaseRatio, truncated to a whole
// nanosecond.
func (t Timing) leaseTimeout() time.Duration {
	return time.Duration(float64(t.ElectionTimeout) * t.leaseRatio())
}

// Validate reports the first field of t that cannot be mapped onto a valid
// raft.Config, as a *TimingError, or nil. It checks hashicorp/raft v1.8.0's
// rules (raft.ValidateConfig, config.go:346-389) in raftick's terms:
// HeartbeatTimeout, ElectionTimeout and LeaderLeaseTimeout at least 5ms,
// CommitTimeout at least 1ms, LeaderLeaseTimeout <= HeartbeatTimeout,
// ElectionTimeout >= HeartbeatTimeout.
func (t Timing) Validate() error {
	et := t.ElectionTimeout
	if et < MinTimeout {
		return timingErr("Timing.ElectionTimeout", "HeartbeatTimeout",
			"Timing.ElectionTimeout (%v) maps to raft.Config.HeartbeatTimeout, which hashicorp/raft requires to be at least %v",
			et, MinTimeout)
	}
	if t.VoteTimeout < 0 {
		return timingErr("Timing.VoteTimeout", "ElectionTimeout",
			"Timing.VoteTimeout (%v) must not be negative (0 means ElectionTimeout)", t.VoteTimeout)
	}
	if t.VoteTimeout != 0 && t.VoteTimeout < et {
		return timingErr("Timing.VoteTimeout", "ElectionTimeout",
			"Timing.VoteTimeout (%v) maps to raft.Config.ElectionTimeout, which hashicorp/raft requires to be >= HeartbeatTimeout (Timing.ElectionTimeout, %v)",
			t.VoteTimeout, et)
	}
	if t.HeartbeatInterval < 0 {
		return timingErr("Timing.HeartbeatInterval", "",
			"Timing.HeartbeatInterval (%v) must not be negative (0 means hashicorp's own interval)", t.HeartbeatInterval)
	}
	if hi := t.HeartbeatInterval; hi != 0 && (hi < et/10 || hi > et/5) {
		return timingErr("Timing.HeartbeatInterval", "",
			"Timing.HeartbeatInterval (%v) cannot be expressed: hashicorp/raft sends heartbeats every random [HeartbeatTimeout/10, HeartbeatTimeout/5) = [%v, %v) with HeartbeatTimeout = Timing.ElectionTimeout (%v); use 0 or a value in that range",
			hi, et/10, et/5, et)
	}
	if r := t.LeaseRatio; math.IsNaN(r) || r < 0 || r > 1 {
		return timingErr("Timing.LeaseRatio", "LeaderLeaseTimeout",
			"Timing.LeaseRatio (%v) must be in (0, 1] (0 means %v): raft.Config.LeaderLeaseTimeout = ElectionTimeout*LeaseRatio and hashicorp/raft requires LeaderLeaseTimeout <= HeartbeatTimeout",
			r, DefaultLeaseRatio)
	}
	if lease := t.leaseTimeout(); lease < MinTimeout {
		return timingErr("Timing.LeaseRatio", "LeaderLeaseTimeout",
			"Timing.LeaseRatio (%v) gives raft.Config.LeaderLeaseTimeout %v (ElectionTimeout %v * LeaseRatio), which hashicorp/raft requires to be at least %v",
			t.leaseRatio(), lease, et, MinTimeout)
	}
	if t.CommitTimeout < 0 || (t.CommitTimeout != 0 && t.CommitTimeout < MinCommitTimeout) {
		return timingErr("Timing.CommitTimeout", "CommitTimeout",
			"Timing.CommitTimeout (%v) maps to raft.Config.CommitTimeout, which hashicorp/raft requires to be at least %v (0 means %v)",
			t.CommitTimeout, MinCommitTimeout, DefaultCommitTimeout)
	}
	return nil
}

// Apply writes t's timing onto c (HeartbeatTimeout, ElectionTimeout,
// LeaderLeaseTimeout, CommitTimeout, PreVoteDisabled), leaving every other
// field alone, and then validates the whole of c with raft.ValidateConfig.
// On error c is not modified. A nil c is an error.
func (t Timing) Apply(c *raft.Config) error {
	if c == nil {
		return errors.New("raftadapter: Timing.Apply: nil *raft.Config")
	}
	if err := t.Validate(); err != nil {
		return err
	}
	next := *c
	next.HeartbeatTimeout = t.ElectionTimeout
	next.ElectionTimeout = t.voteTimeout()
	next.LeaderLeaseTimeout = t.leaseTimeout()
	next.CommitTimeout = t.commitTimeout()
	next.PreVoteDisabled = !t.PreVote
	if err := raft.ValidateConfig(&next); err != nil {
		return &TimingError{Msg: "raft.Config rejected by raft.ValidateConfig", Err: err}
	}
	*c = next
	return nil
}

// RaftConfig returns a raft.Config for node id: raft.DefaultConfig with t
// applied (see Apply) and logger as its Logger, validated with
// raft.ValidateConfig. A nil logger means the module's default: warnings
// and errors to standard error, named raftick.raftadapter (hashicorp's own
// default would write DEBUG lines); hclog.NewNullLogger() discards them.
// An empty id is an error, as in hashicorp.
func (t Timing) RaftConfig(id raft.ServerID, logger hclog.Logger) (*raft.Config, error) {
	if id == "" {
		return nil, errors.New("raftadapter: RaftConfig: empty raft.ServerID (hashicorp/raft: LocalID cannot be empty)")
	}
	if logger == nil {
		logger = defaultLogger()
	}
	c := raft.DefaultConfig()
	c.LocalID = id
	c.Logger = logger
	if err := t.Apply(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Retune is the part of Timing a live hashicorp/raft node accepts through
// (*raft.Raft).ReloadConfig. LeaderLeaseTimeout, CommitTimeout and pre-vote
// are fixed when the node is created and have no place here.
//
// A zero field keeps the node's current value, so Retune{} changes
// nothing.
type Retune struct {
	// ElectionTimeout becomes raft HeartbeatTimeout. 0 keeps the node's
	// current HeartbeatTimeout; otherwise at least MinTimeout, and at least
	// the node's LeaderLeaseTimeout (fixed at creation).
	ElectionTimeout time.Duration
	// VoteTimeout becomes raft ElectionTimeout. 0 keeps the node's current
	// ElectionTimeout, raised to the (new) ElectionTimeout if it is
	// shorter, since hashicorp/raft requires ElectionTimeout >=
	// HeartbeatTimeout; otherwise at least ElectionTimeout.
	VoteTimeout time.Duration
}

// Reload re-tunes the live node r: it reads r.ReloadableConfig(), replaces
// HeartbeatTimeout and ElectionTimeout with rt's non-zero fields (keeping TrailingLogs,
// SnapshotInterval and SnapshotThreshold as they are on r) and calls
// r.ReloadConfig, which validates the result against the node's whole
// configuration and changes nothing on error.
//
// A shorter ElectionTimeout takes effect at once: hashicorp fires a
// follower's timer immediately so it re-arms with the new value (api.go
// ReloadConfig, followerNotifyCh). A longer one applies from the timer's
// next re-arm. A candidate picks up a changed VoteTimeout only when
// ElectionTimeout also shrinks; otherwise from its next round.
//
// Errors are *TimingError naming the Retune field; the typical one is an
// ElectionTimeout below the node's LeaderLeaseTimeout, which hashicorp
// cannot change at runtime.
func Reload(r *raft.Raft, rt Retune) error {
	if r == nil {
		return ErrNilRaft
	}
	rc := r.ReloadableConfig()
	et := rt.ElectionTimeout
	if et == 0 {
		et = rc.HeartbeatTimeout
	}
	if et < MinTimeout {
		return timingErr("Retune.ElectionTimeout", "HeartbeatTimeout",
			"Retune.ElectionTimeout (%v) maps to raft.Config.HeartbeatTimeout, which hashicorp/raft requires to be at least %v",
			et, MinTimeout)
	}
	vt := rt.VoteTimeout
	if vt < 0 {
		return timingErr("Retune.VoteTimeout", "ElectionTimeout",
			"Retune.VoteTimeout (%v) must not be negative (0 keeps the current value)", vt)
	}
	if vt == 0 {
		vt = max(rc.ElectionTimeout, et)
	}
	if vt < et {
		return timingErr("Retune.VoteTimeout", "ElectionTimeout",
			"Retune.VoteTimeout (%v) maps to raft.Config.ElectionTimeout, which hashicorp/raft requires to be >= HeartbeatTimeout (Retune.ElectionTimeout, %v)",
			vt, et)
	}
	rc.HeartbeatTimeout = et
	rc.ElectionTimeout = vt
	if err := r.ReloadConfig(rc); err != nil {
		// hashicorp's ValidateConfig returns unstructured errors; the only
		// rule Retune's own checks cannot see is the lease, which lives in
		// the node's non-reloadable configuration.
		if strings.Contains(err.Error(), "LeaderLeaseTimeout") {
			return &TimingError{Field: "Retune.ElectionTimeout", RaftField: "HeartbeatTimeout",
				Msg: fmt.Sprintf("Retune.ElectionTimeout (%v) maps to raft.Config.HeartbeatTimeout, which hashicorp/raft requires to be >= the node's LeaderLeaseTimeout; the lease is fixed when the node is created and cannot be reloaded", et),
				Err: err}
		}
		return &TimingError{Msg: "ReloadConfig rejected the new timing", Err: err}
	}
	return nil
}
