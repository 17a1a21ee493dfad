package experiment

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/raftick/raftick/sim"
)

// A Param is one model parameter of a Setup in machine-readable form:
// Name in snake_case ("timeout_min_ms", "latency", "candidates_wait") and
// Value a float64 (durations in milliseconds, exact to the nanosecond),
// int, bool or string (latency models as their spec, "none" for nil;
// per-link latencies as "1->2=spec ..."; modes by name in kebab case,
// e.g. "sticky-by-contact").
type Param struct {
	Name  string
	Value any
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	latencyType  = reflect.TypeFor[sim.Latency]()
	stringerType = reflect.TypeFor[interface{ String() string }]()
	linksType    = reflect.TypeFor[map[sim.Link]sim.Latency]()
)

// Params lists every parameter of s, in field order (the fields of the
// embedded sim.Network in place), with the trial's time limit made
// explicit (the heartbeat is as set: an experiment's Result has it
// explicit, and 0 where no heartbeat of this package applies). It is
// built from the struct's fields, so a field added to Setup appears
// without more work. A field tagged `param:"omitzero"` (an opt-in
// mechanism) appears only when it is not its zero value, so that adding
// one leaves the records of runs that do not use it unchanged.
func (s Setup) Params() []Param {
	s.MaxTime = s.maxTime()
	var out []Param
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			fv := v.Field(i)
			if f.Tag.Get("param") == "omitzero" && fv.IsZero() {
				continue // an opt-in mechanism that is off
			}
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(fv)
				continue
			}
			name := snake(f.Name)
			switch {
			case f.Type == durationType:
				out = append(out, Param{name + "_ms", durationMS(time.Duration(fv.Int()))})
			case f.Type == latencyType:
				spec := "none"
				if !fv.IsNil() {
					spec = fv.Interface().(sim.Latency).String()
				}
				out = append(out, Param{name, spec})
			case f.Type == linksType:
				out = append(out, Param{name, linkList(fv.Interface().(map[sim.Link]sim.Latency))})
			case f.Type.Implements(stringerType):
				out = append(out, Param{name, kebab(fv.Interface().(interface{ String() string }).String())})
			case f.Type.Kind() == reflect.Bool:
				out = append(out, Param{name, fv.Bool()})
			case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64:
				out = append(out, Param{name, int(fv.Int())})
			case f.Type.Kind() >= reflect.Uint && f.Type.Kind() <= reflect.Uint64:
				out = append(out, Param{name, int(fv.Uint())})
			case f.Type.Kind() == reflect.Float32 || f.Type.Kind() == reflect.Float64:
				out = append(out, Param{name, fv.Float()})
			case f.Type.Kind() == reflect.String:
				out = append(out, Param{name, fv.String()})
			default:
				out = append(out, Param{name, reflect.ValueOf(fv.Interface()).String()})
			}
		}
	}
	walk(reflect.ValueOf(s))
	return out
}

// durationMS is d in milliseconds, exact to the nanosecond.
func durationMS(d time.Duration) float64 { return float64(d) / 1e6 }

// snake converts a Go field name to snake_case: "TimeoutMin" ->
// "timeout_min", "PreVote" -> "pre_vote", "MaxTime" -> "max_time".
func snake(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// linkList formats per-link latencies as "1->2=fixed:5ms 2->1=..." in
// link order ("" for none).
func linkList(links map[sim.Link]sim.Latency) string {
	keys := make([]sim.Link, 0, len(links))
	for l := range links {
		keys = append(keys, l)
	}
	slices.SortFunc(keys, func(a, b sim.Link) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	parts := make([]string, len(keys))
	for i, l := range keys {
		parts[i] = fmt.Sprintf("%d->%d=%v", l.From, l.To, links[l])
	}
	return strings.Join(parts, " ")
}

// kebab converts a mode's Go name to the words a user reads:
// "StickyByContact" -> "sticky-by-contact".
func kebab(name string) string { return strings.ReplaceAll(snake(name), "_", "-") }
