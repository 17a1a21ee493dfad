package election

import (
	"fmt"
)

// DetectionMode selects how a follower detects a dead leader.
type DetectionMode uint8

const (
	// ResetOnHeartbeat re-arms the election timer with a fresh random
	// timeout on every accepted heartbeat (and granted vote); the timer
	// firing starts an election. This is the Raft paper's and etcd's
	// behaviour.
	ResetOnHeartbeat DetectionMode = iota
	// CheckLastContact leaves the election timer free-running (each period
	// randomized by ElectionJitter); when it fires, the node starts an
	// election only if it has not heard from a leader (nor granted a vote)
	// within ElectionTimeout. This is SOFAJRaft's and hashicorp/raft's
	// behaviour; detection takes between ET and about 3 ET with [ET, 2ET)
	// jitter.
	CheckLastContact
	// ContactDeadline makes a heartbeat record the contact only (no timer
	// is re-armed); the election timer, when it fires, finds a follower
	// that heard its leader (or granted a vote) since its schedule was
	// counted and re-arms itself to come due a fresh ElectionJitter draw
	// after that contact, for the rest of it (at once if that passed). The
	// deadline is ResetOnHeartbeat's (a fresh random timeout after the
	// last contact), but the timer is touched about once per election
	// timeout instead of once per heartbeat. On a shared wheel every
	// follower's timer then fires once per election timeout on the
	// wheel's driver goroutine, which can cost more than the lock-free
	// re-arm of ResetOnHeartbeat; Config.ExternalContact stops the timer
	// of a follower that hears its leader and lets the caller watch the
	// contact instead (package multiraft does, from its tick).
	ContactDeadline
)

// String returns the mode's name.
func (d DetectionMode) String() string {
	switch d {
	case ResetOnHeartbeat:
		return "ResetOnHeartbeat"
	case CheckLastContact:
		return "CheckLastContact"
	case ContactDeadline:
		return "ContactDeadline"
	}
	return fmt.Sprintf("DetectionMode(%d)", uint8(d))
}

// StickinessMode decides how long a node stays loyal to a leader it knows:
// while it does, it refuses pre-votes (Config.PreVote) and, with
// Config.CheckQuorum or Config.LeaderStickiness, votes (leadership
// transfers excepted). Either mode keeps a node loyal for ElectionTimeout
// after it heard a leader, which the leader lease relies on.
type StickinessMode uint8

const (
	// StickyByContact: loyal while the node is leader or heard from its
	// leader within ElectionTimeout (Ongaro's thesis, section 9.6; etcd,
	// SOFAJRaft).
	StickyByContact StickinessMode = iota
	// StickyUntilTimeout: loyal while the node is leader or knows a
	// leader, whenever it last heard from it, towards every candidate but
	// that leader. A follower forgets its leader only when its own election
	// timer fires and finds no recent contact (it then campaigns), or when
	// it campaigns or moves to a higher term (hashicorp/raft, whose nodes
	// refuse every (pre-)vote while they know a leader).
	StickyUntilTimeout
)

// String returns the mode's name.
func (s StickinessMode) String() string {
	switch s {
	case StickyByContact:
		return "StickyByContact"
	case StickyUntilTimeout:
		return "StickyUntilTimeout"
	}
	return fmt.Sprintf("StickinessMode(%d)", uint8(s))
}
