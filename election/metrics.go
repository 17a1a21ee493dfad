package election

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/internal/msink"
	"github.com/raftick/raftick/internal/quorum"
)

// Metric keys; the package documentation lists them beside hashicorp/raft's.
var (
	keyStateFollower     = []string{"raftick", "election", "state", "follower"}
	keyStatePreCandidate = []string{"raftick", "election", "state", "precandidate"}
	keyStateCandidate    = []string{"raftick", "election", "state", "candidate"}
	keyStateLeader       = []string{"raftick", "election", "state", "leader"}
	keyHeartbeatTimeout  = []string{"raftick", "election", "transition", "heartbeat_timeout"}
	keyLeaseTimeout      = []string{"raftick", "election", "transition", "leader_lease_timeout"}
	keyPreVoteStarted    = []string{"raftick", "election", "prevote", "started"}
	keyPreVoteWon        = []string{"raftick", "election", "prevote", "won"}
	keyPreVoteLost       = []string{"raftick", "election", "prevote", "lost"}
	keyElectionStarted   = []string{"raftick", "election", "started"}
	keyElectionWon       = []string{"raftick", "election", "won"}
	keyElectionLost      = []string{"raftick", "election", "lost"}
	keyVoteGranted       = []string{"raftick", "election", "vote", "granted"}
	keyVoteRefused       = []string{"raftick", "election", "vote", "refused"}
	keyPreVoteGranted    = []string{"raftick", "election", "prevote", "granted"}
	keyPreVoteRefused    = []string{"raftick", "election", "prevote", "refused"}
	keyStepDown          = []string{"raftick", "election", "stepdown"}
	keyLeaderLastContact = []string{"raftick", "election", "leader", "last_contact"}
)

// nodeMetrics reports a node's events to a go-metrics sink. Its methods
// run with the node's lock held, in the order of the events; a nil
// *nodeMetrics (metrics off) does nothing.
type nodeMetrics struct {
	sink msink.Sink
	// base is the labels of every metric: the node's ID, then
	// Config.MetricsLabels.
	base []metrics.Label
	// labels caches the labels (base included) of each reason seen,
	// guarded by mu: nodes made from a Shared Config share one
	// nodeMetrics.
	mu     sync.Mutex
	labels map[string][]metrics.Label
}

// newNodeMetrics returns the metrics of a node configured with c, or nil
// if c turns them off.
func newNodeMetrics(c Config) *nodeMetrics {
	s := msink.Resolve(c.Metrics)
	if s == nil {
		return nil
	}
	base := append([]metrics.Label{{Name: "node", Value: strconv.FormatUint(uint64(c.ID), 10)}}, c.MetricsLabels...)
	return &nodeMetrics{sink: s, base: base, labels: make(map[string][]metrics.Label)}
}

// incr counts one at key, labelled with labels (nil: m.base).
func (m *nodeMetrics) incr(key []string, labels []metrics.Label) {
	if labels == nil {
		labels = m.base
	}
	m.sink.IncrCounterWithLabels(key, 1, labels)
}

// reasonLabel returns the label naming the cause of e: its reason without
// details ("check quorum: 1 of 3 ..." is check_quorum), and, if from is
// set, the role the node left.
func (m *nodeMetrics) reasonLabel(reason string, from Role, withFrom bool) []metrics.Label {
	k := reason
	if withFrom {
		k = from.String() + "\x00" + reason
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.labels[k]; ok {
		return l
	}
	r, _, _ := strings.Cut(reason, ":")
	if strings.HasPrefix(r, ReasonAlreadyVoted) {
		r = ReasonAlreadyVoted
	}
	l := append(slices.Clip(m.base), metrics.Label{Name: "reason", Value: strings.ReplaceAll(strings.TrimSpace(r), " ", "_")})
	if withFrom {
		l = append(l, metrics.Label{Name: "from", Value: strings.ToLower(from.String())})
	}
	if len(m.labels) < 256 { // reasons are a small fixed set; never grow without bound
		m.labels[k] = l
	}
	return l
}

// event reports e, which the node just emitted; role is the node's role
// as of its last event (the node's own, as a nodeMetrics may be shared),
// so that a step-down (reported with the new role) knows which role was
// left.
func (m *nodeMetrics) event(e *Event, role *Role) {
	if m == nil {
		return
	}
	prev := *role
	switch e.Type {
	case EventRoleChange:
		*role = e.Role
		switch e.Role {
		case Follower:
			m.incr(keyStateFollower, nil)
		case PreCandidate:
			m.incr(keyStatePreCandidate, nil)
			if prev == Candidate {
				// The vote timer sent the candidate back to pre-vote.
				m.incr(keyElectionLost, nil)
			}
		case Candidate:
			m.incr(keyStateCandidate, nil)
		case Leader:
			m.incr(keyStateLeader, nil)
		}
	case EventElectionStart:
		if e.Reason == ReasonTimeout {
			m.incr(keyHeartbeatTimeout, nil)
		}
		if e.PreVote {
			m.incr(keyPreVoteStarted, nil)
			return
		}
		m.incr(keyElectionStarted, nil)
		switch {
		case e.Reason == ReasonPreVoteWon:
			m.incr(keyPreVoteWon, nil)
		case prev == Candidate:
			// A new round after the vote timer fired: the last one is lost.
			m.incr(keyElectionLost, nil)
		}
	case EventLeaderElected:
		m.incr(keyElectionWon, nil)
	case EventStepDown:
		switch prev {
		case Candidate:
			m.incr(keyElectionLost, nil)
		case PreCandidate:
			m.incr(keyPreVoteLost, nil)
		case Leader:
			if strings.HasPrefix(e.Reason, ReasonCheckQuorum) {
				m.incr(keyLeaseTimeout, nil)
			}
		}
		m.incr(keyStepDown, m.reasonLabel(e.Reason, prev, true))
	case EventVoteGranted:
		switch {
		case e.Peer == e.Node: // a candidate's vote for itself
		case e.PreVote:
			m.incr(keyPreVoteGranted, nil)
		default:
			m.incr(keyVoteGranted, nil)
		}
	case EventVoteDenied:
		if e.PreVote {
			m.incr(keyPreVoteRefused, m.reasonLabel(e.Reason, 0, false))
		} else {
			m.incr(keyVoteRefused, m.reasonLabel(e.Reason, 0, false))
		}
	}
}

// leaderContact samples, at a leader's step-down check, the age of the
// oldest answer among the peers heard from within the lease, in
// milliseconds: hashicorp/raft's raft.leader.lastContact.
func (m *nodeMetrics) leaderContact(now, lease time.Duration, acks []quorum.Ack) {
	if m == nil {
		return
	}
	var oldest time.Duration
	for _, a := range acks {
		if d := now - a.At; a.At != quorum.None && d <= lease && d > oldest {
			oldest = d
		}
	}
	m.sink.AddSampleWithLabels(keyLeaderLastContact, float32(oldest)/float32(time.Millisecond), m.base)
}
