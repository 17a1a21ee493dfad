package experiment

import (
	"fmt"

	"github.com/raftick/raftick/internal/quorum"
)

// Until is where Failover and Bootstrap stop the clock.
type Until int

const (
	// UntilDefault is the experiment's own stopping point: Failover stops
	// when every survivor accepted the new leader (the paper's
	// definition), Bootstrap when a majority knows the first leader.
	UntilDefault Until = iota
	// UntilElected stops when a server has won an election (in a term
	// above the crashed leader's, for Failover).
	UntilElected
	// UntilMajority stops when the new leader and enough servers that
	// accepted its first heartbeat make a majority of the cluster.
	UntilMajority
	// UntilAll stops when every running server accepted the new leader.
	UntilAll
)

// UntilNames lists the command-line forms of Until, in order.
var UntilNames = []string{"default", "elected", "majority", "all"}

func (u Until) String() string {
	if u >= 0 && int(u) < len(UntilNames) {
		return UntilNames[u]
	}
	return fmt.Sprintf("Until(%d)", int(u))
}

// MarshalText returns the command-line form, for JSON output.
func (u Until) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// ParseUntil parses "elected", "majority", "all" or "default". Errors
// are *sim.FieldError values (Field "Until") wrapping ErrInvalidConfig.
func ParseUntil(s string) (Until, error) {
	for i, n := range UntilNames {
		if s == n {
			return Until(i), nil
		}
	}
	return 0, fieldErr("Until", s, "must be elected, majority or all")
}

// reached reports whether the stopping point u (the experiment's own
// resolved already) is reached: leader is a leader (None if there is
// none), with followers of the others running servers accepting it, in
// a cluster of nodes servers.
func (u Until) reached(leader bool, followers, others, nodes int) bool {
	if !leader {
		return false
	}
	switch u {
	case UntilElected:
		return true
	case UntilMajority:
		return quorum.Majority(nodes).Reached(1 + followers)
	default:
		return followers == others
	}
}

// or returns u, or def when u is UntilDefault.
func (u Until) or(def Until) Until {
	if u == UntilDefault {
		return def
	}
	return u
}

// MaxBackoffShift bounds the doublings of Setup.CandidateBackoff.
const MaxBackoffShift = 10

// describeVariants returns the Describe phrases of the candidate
// variants and the failover's crash and stopping point.
func (s Setup) describeVariants() []string {
	var out []string
	if s.CandidateMin > 0 {
		out = append(out, "candidate timeout "+RangeLabel(s.CandidateMin, s.CandidateMax))
	}
	if s.CandidateBackoff {
		out = append(out, "candidate backoff")
	}
	if s.Crash > 1 {
		out = append(out, fmt.Sprintf("%d servers crash", s.Crash))
	}
	if s.CrashAfterHeartbeat {
		out = append(out, "crash right after a heartbeat")
	}
	if s.TimersAtCrash {
		out = append(out, "survivors' timers start at the crash")
	}
	if s.GrantOnlyAsFollower {
		out = append(out, "a deposed candidate refuses the request that deposed it")
	}
	if s.BackoffOnRejections && s.CandidateBackoff {
		out = append(out, "backoff after rounds half the others rejected, reset at any step-down")
	}
	if s.ClockRate > 0 {
		out = append(out, fmt.Sprintf("server timer rates 1±%g", s.ClockRate))
	}
	if s.HeartbeatOffset {
		out = append(out, "clock from a uniform point of the first heartbeat interval")
	}
	if s.Until != UntilDefault {
		out = append(out, "until "+s.Until.String())
	}
	return out
}
