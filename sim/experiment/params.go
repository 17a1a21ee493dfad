package experiment

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim"
)

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
