package experiment

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// SetupParams lists the parameter names Setup.Set accepts.
var SetupParams = []string{"nodes", "timeout", "heartbeat", "latency", "disk", "loss", "dup", "lateness", "granularity",
	"prevote", "checkquorum", "stickiness", "stickymode", "shortlogs", "diskblocks", "groupcommit", "leaderwrite",
	"leaderwrites", "timerswait", "rearmafterterm", "candidateswait", "candidatetimeout", "candidatebackoff",
	"keeptimer", "hbjitter", "hbperpeer", "settle", "crash", "crashoffset", "until", "timersatcrash", "grantonlyasfollower", "backoffonrejections",
	"heartbeatoffset", "clockrate", "sendgap", "cancelbackoff", "latenessspread", "latenessperserver"}

// Set sets one parameter of s from its command-line form: nodes=5
// (with as many short logs as fit, see WithNodes),
// timeout=150ms-300ms, heartbeat=75ms (0: half the minimum timeout),
// latency=normal:5ms,2ms, disk=fixed:2ms (none: no disk), loss=0.01,
// dup=0.01, lateness=uniform:0,1ms (none; "noise" is its old name),
// granularity=1ms, shortlogs=2, settle=100ms (0: crash after a heartbeat
// broadcast), stickymode=contact or until-timeout, leaderwrites=2,
// candidatetimeout=75-150ms (0: the election timeout range), crash=2,
// crashoffset=uniform or 0, until=elected, majority, all or default,
// clockrate=0.001 (0: none), sendgap=fixed:300us (none: requests
// leave at once), cancelbackoff=2s (0: none), latenessspread=0.5 (0:
// none), and
// the booleans prevote, checkquorum, stickiness, diskblocks, groupcommit,
// leaderwrite, timerswait, rearmafterterm, candidateswait,
// candidatebackoff, keeptimer, hbjitter, hbperpeer, timersatcrash,
// grantonlyasfollower, backoffonrejections, heartbeatoffset and
// latenessperserver (true or false).
// Errors are *sim.FieldError values whose Field is name, wrapping
// ErrInvalidConfig.
func (s *Setup) Set(name, value string) error {
	bad := func(format string, args ...any) error { return fieldErr(name, value, format, args...) }
	optLatency := func() (sim.Latency, error) {
		l, err := OptionalLatency(value)
		if err != nil {
			return nil, reason(name, value, err)
		}
		return l, nil
	}
	switch name {
	case "nodes", "shortlogs", "leaderwrites", "crash":
		n, err := strconv.Atoi(value)
		if err != nil {
			return bad("not an integer")
		}
		switch name {
		case "leaderwrites":
			if n < 0 || n > 100 {
				return bad("must be in [0, 100]")
			}
			s.LeaderWrites = n
		case "crash":
			if n < 1 {
				return bad("must be at least 1 (the leader)")
			}
			s.Crash = n
		case "nodes":
			if n < 1 || n > sim.MaxNodes {
				return bad("must be in [1, %d]", sim.MaxNodes)
			}
			*s = s.WithNodes(n) // as many short logs as fit
		default:
			if n < 0 {
				return bad("must not be negative")
			}
			s.ShortLogs = n
		}
	case "timeout":
		lo, hi, err := ParseRange(value)
		if err != nil {
			return reason(name, value, err)
		}
		s.TimeoutMin, s.TimeoutMax = lo, hi
	case "cancelbackoff":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return bad("want a duration of at least 0, e.g. 2s")
		}
		s.CancelBackoff = d
		return nil
	case "heartbeat", "granularity", "settle":
		d, err := time.ParseDuration(value)
		if err != nil {
			return bad("not a duration (e.g. 75ms)")
		}
		if d < 0 {
			return bad("must not be negative")
		}
		*map[string]*time.Duration{"heartbeat": &s.Heartbeat, "granularity": &s.Granularity, "settle": &s.Settle}[name] = d
	case "stickymode":
		switch value {
		case "contact":
			s.Stickiness = election.StickyByContact
		case "until-timeout":
			s.Stickiness = election.StickyUntilTimeout
		default:
			return bad("must be contact or until-timeout")
		}
	case "latency":
		l, err := optLatency()
		if err != nil {
			return err
		}
		s.Latency = l
	case "disk":
		l, err := optLatency()
		if err != nil {
			return err
		}
		s.Disk = l
	case "sendgap":
		l, err := optLatency()
		if err != nil {
			return err
		}
		s.SendGap = l
	case "lateness", "noise":
		l, err := optLatency()
		if err != nil {
			return err
		}
		s.TimerLateness = l
	case "candidatetimeout":
		if value == "0" || value == "none" {
			s.CandidateMin, s.CandidateMax = 0, 0
			break
		}
		lo, hi, err := ParseRange(value)
		if err != nil {
			return reason(name, value, err)
		}
		s.CandidateMin, s.CandidateMax = lo, hi
	case "crashoffset":
		switch value {
		case "uniform":
			s.CrashAfterHeartbeat = false
		case "0":
			s.CrashAfterHeartbeat = true
		default:
			return bad("must be uniform or 0")
		}
	case "until":
		u, err := ParseUntil(value)
		if err != nil {
			return reason(name, value, err)
		}
		s.Until = u
	case "latenessspread":
		r, err := strconv.ParseFloat(value, 64)
		if err != nil || r != r || r < 0 || r > 1 {
			return bad("must be a spread in [0, 1] (e.g. 0.5)")
		}
		s.LatenessSpread = r
	case "clockrate":
		r, err := strconv.ParseFloat(value, 64)
		if err != nil || r != r || r < 0 || r > 0.5 {
			return bad("must be a rate deviation in [0, 0.5] (e.g. 0.001)")
		}
		s.ClockRate = r
	case "loss", "dup":
		p, err := strconv.ParseFloat(value, 64)
		if err != nil || p < 0 || p > 1 || p != p {
			return bad("must be a probability in [0, 1]")
		}
		if name == "loss" {
			if p >= 1 {
				return bad("must be below 1 (every message lost)")
			}
			s.Loss = p
		} else {
			s.Duplicate = p
		}
	case "prevote", "checkquorum", "stickiness", "diskblocks", "groupcommit", "leaderwrite", "candidateswait",
		"keeptimer", "hbjitter", "hbperpeer", "timerswait", "rearmafterterm", "candidatebackoff", "timersatcrash",
		"grantonlyasfollower", "backoffonrejections", "heartbeatoffset", "latenessperserver":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return bad("must be true or false")
		}
		*map[string]*bool{
			"prevote": &s.PreVote, "checkquorum": &s.CheckQuorum, "stickiness": &s.LeaderStickiness,
			"diskblocks": &s.DiskBlocks, "groupcommit": &s.GroupCommit, "leaderwrite": &s.LeaderWrite,
			"candidateswait": &s.CandidatesWait, "keeptimer": &s.KeepTimer, "hbjitter": &s.HeartbeatJitter,
			"hbperpeer": &s.HeartbeatPerPeer, "timerswait": &s.TimersWait, "rearmafterterm": &s.RearmAfterTermWrite,
			"candidatebackoff": &s.CandidateBackoff, "timersatcrash": &s.TimersAtCrash,
			"grantonlyasfollower": &s.GrantOnlyAsFollower, "backoffonrejections": &s.BackoffOnRejections,
			"heartbeatoffset": &s.HeartbeatOffset, "latenessperserver": &s.LatenessPerServer,
		}[name] = b
	default:
		return fieldErr("", name, "unknown parameter (want one of %s)", strings.Join(SetupParams, ", "))
	}
	return nil
}

// OptionalLatency parses a latency spec (sim.ParseLatency) where "none",
// "0" and "" mean no latency (nil).
func OptionalLatency(spec string) (sim.Latency, error) {
	if spec == "" || spec == "none" || spec == "0" {
		return nil, nil
	}
	return sim.ParseLatency(spec)
}

// reason returns err (a *sim.FieldError about value) as a field error of
// setting name.
func reason(name, value string, err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		return fieldErr(name, value, "%s", fe.Reason)
	}
	return fieldErr(name, value, "%v", err)
}

// SplitVoteParams lists the parameter names SplitVote.Set accepts.
var SplitVoteParams = []string{"nodes", "alive", "l", "range", "model", "latency"}

// Set sets one parameter of sv: nodes=5, alive=4, l=0.1, range=100ms,
// model=race|cluster, latency=uniform:10ms,20ms (none: fixed l). Errors
// are *sim.FieldError values whose Field is name, wrapping
// ErrInvalidConfig.
func (sv *SplitVote) Set(name, value string) error {
	bad := func(format string, args ...any) error { return fieldErr(name, value, format, args...) }
	switch name {
	case "nodes", "alive":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > sim.MaxNodes {
			return bad("must be an integer in [1, %d]", sim.MaxNodes)
		}
		if name == "nodes" {
			sv.Nodes = n
		} else {
			sv.Alive = n
		}
	case "l":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || f < 0 || f > 1 || f != f {
			return bad("must be a fraction in [0, 1]")
		}
		sv.Fraction = f
	case "range":
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 {
			return bad("must be a positive duration")
		}
		sv.Range = d
	case "model":
		if value != "race" && value != "cluster" {
			return bad("must be race or cluster")
		}
		sv.Model = value
	case "latency":
		l, err := OptionalLatency(value)
		if err != nil {
			return reason(name, value, err)
		}
		sv.Latency = l
	default:
		return fieldErr("", name, "unknown parameter (want one of %s)", strings.Join(SplitVoteParams, ", "))
	}
	return nil
}

// Axis is one swept parameter and its values.
type Axis struct {
	Name   string
	Values []string
}

// ParseAxis parses "name=v1,v2,v3". Errors are *sim.FieldError values
// (Value: s) wrapping ErrInvalidConfig. Values are separated by ';' when the
// list contains one (latency specs contain commas: "latency=fixed:1ms;
// uniform:1ms,5ms"), and by ',' otherwise (for latency and disk, a ','
// list is split only where it is followed by a new kind:).
func ParseAxis(s string) (Axis, error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(list) == "" {
		return Axis{}, fieldErr("", s, "want name=value1,value2")
	}
	var vals []string
	switch {
	case strings.Contains(list, ";"):
		vals = strings.Split(list, ";")
	case name == "latency" || name == "disk" || name == "lateness" || name == "noise":
		for _, part := range strings.Split(list, ",") {
			part = strings.TrimSpace(part)
			if len(vals) > 0 && !strings.Contains(part, ":") && part != "none" {
				vals[len(vals)-1] += "," + part // continuation of a spec's arguments
				continue
			}
			vals = append(vals, part)
		}
	default:
		vals = strings.Split(list, ",")
	}
	for i := range vals {
		vals[i] = strings.TrimSpace(vals[i])
		if vals[i] == "" {
			return Axis{}, fieldErr("", s, "empty value")
		}
	}
	return Axis{Name: name, Values: vals}, nil
}

// Grid returns every combination of the axes' values (the first axis
// varies slowest), each as a list of (name, value) settings.
func Grid(axes []Axis) [][][2]string {
	out := [][][2]string{nil}
	for _, a := range axes {
		var next [][][2]string
		for _, prefix := range out {
			for _, v := range a.Values {
				p := append(append([][2]string(nil), prefix...), [2]string{a.Name, v})
				next = append(next, p)
			}
		}
		out = next
	}
	return out
}

// GridLabel formats a grid point, e.g. "timeout=150-155ms latency=fixed:1ms".
func GridLabel(point [][2]string) string {
	parts := make([]string, len(point))
	for i, kv := range point {
		parts[i] = kv[0] + "=" + kv[1]
	}
	return strings.Join(parts, " ")
}
