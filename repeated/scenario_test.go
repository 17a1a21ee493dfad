package repeated_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// TestScenarios runs the stories under testdata/ on a virtual wheel. Each
// file drives one timer with these commands:
//
//	new timeout=<d> [jitter=none|uniform-extra:<d>|proportional:<f>|first-only|backoff:<n>:<cap>] [seed=<n>]
//	on-trigger [once]        ops (one per line) the trigger runs; empty: none
//	start | stop | reset | restart | run-once-now | destroy
//	reset-timeout d=<d>
//	advance to=<t> | by=<d>
//	state
//
// Every command prints what happened during it (triggers, the ops they
// ran, the on-destroy hook) and then the timer's state.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type scenario struct {
	v        *wheel.Virtual
	tm       *repeated.Timer
	out      []string
	inside   []string
	once     bool
	triggers int
}

func (s *scenario) logf(format string, args ...any) {
	s.out = append(s.out, fmt.Sprintf(format, args...))
}

func parseJitter(t *testing.T, spec string) repeated.Jitter {
	name, arg, _ := strings.Cut(spec, ":")
	dur := func(x string) time.Duration {
		d, err := time.ParseDuration(x)
		if err != nil {
			t.Fatalf("bad duration %q in jitter %q", x, spec)
		}
		return d
	}
	switch name {
	case "none":
		return repeated.None()
	case "uniform-extra":
		return repeated.UniformExtra(dur(arg))
	case "proportional":
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			t.Fatalf("bad factor in jitter %q", spec)
		}
		return repeated.Proportional(f)
	case "first-only":
		return repeated.FirstOnly()
	case "backoff":
		n, c, _ := strings.Cut(arg, ":")
		shift, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("bad shift in jitter %q", spec)
		}
		return repeated.Backoff(shift, dur(c))
	}
	t.Fatalf("unknown jitter %q", spec)
	return nil
}

// apply runs one op on the timer (at top level or inside the trigger).
func (s *scenario) apply(t *testing.T, op string) {
	name, arg, _ := strings.Cut(strings.TrimSpace(op), " ")
	switch name {
	case "start":
		s.tm.Start()
	case "stop":
		s.tm.Stop()
	case "reset":
		s.tm.Reset()
	case "restart":
		s.tm.Restart()
	case "run-once-now":
		s.tm.RunOnceNow()
	case "destroy":
		s.tm.Destroy()
	case "reset-timeout":
		d, err := time.ParseDuration(arg)
		if err != nil {
			t.Fatalf("bad duration in %q", op)
		}
		s.tm.ResetTimeout(d)
	default:
		t.Fatalf("unknown op %q", op)
	}
}

func (s *scenario) state() string {
	st := "stopped"
	switch {
	case s.tm.IsDestroyed():
		st = "destroyed"
	case s.tm.IsRunning():
		st = "running"
	}
	next := "none"
	if d, ok := s.tm.Deadline(); ok {
		next = d.String()
	}
	stats := s.tm.Stats()
	return fmt.Sprintf("now=%v %s next=%s timeout=%v schedules=%d triggers=%d wheel-pending=%d",
		s.v.Now(), st, next, s.tm.Timeout(), stats.Schedules, stats.Triggers, s.v.Stats().Pending)
}

func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd == "new" {
		var ts string
		d.ScanArgs(t, "timeout", &ts)
		timeout, err := time.ParseDuration(ts)
		if err != nil {
			t.Fatal(err)
		}
		jitter := "none"
		d.MaybeScanArgs(t, "jitter", &jitter)
		seed := uint64(1)
		d.MaybeScanArgs(t, "seed", &seed)
		v, err := wheel.NewVirtual(wheel.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Stop() })
		*s = scenario{v: v}
		s.tm, err = repeated.New(v.Wheel, "scenario", timeout, func() {
			s.triggers++
			s.logf("%v: trigger #%d", v.Now(), s.triggers)
			if s.once && s.triggers > 1 {
				return
			}
			for _, op := range s.inside {
				s.logf("  inside: %s", op)
				s.apply(t, op)
			}
		}, repeated.WithJitter(parseJitter(t, jitter)), repeated.WithRand(seeded(seed)),
			repeated.WithOnDestroy(func() { s.logf("%v: on-destroy hook", v.Now()) }))
		if err != nil {
			t.Fatal(err)
		}
		return s.state()
	}
	if s.tm == nil {
		t.Fatalf("%s: no timer; start the file with new", d.Pos)
	}
	s.out = s.out[:0]
	switch d.Cmd {
	case "on-trigger":
		s.once = d.HasArg("once")
		s.inside = nil
		for _, l := range strings.Split(d.Input, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				s.inside = append(s.inside, l)
			}
		}
		return "ok"
	case "advance":
		var x string
		if d.MaybeScanArgs(t, "to", &x) {
			to, err := time.ParseDuration(x)
			if err != nil {
				t.Fatal(err)
			}
			s.v.AdvanceTo(to)
		} else {
			d.ScanArgs(t, "by", &x)
			by, err := time.ParseDuration(x)
			if err != nil {
				t.Fatal(err)
			}
			s.v.AdvanceBy(by)
		}
	case "reset-timeout":
		var x string
		d.ScanArgs(t, "d", &x)
		s.apply(t, "reset-timeout "+x)
	case "state":
	default:
		s.apply(t, d.Cmd)
	}
	return strings.Join(append(s.out, s.state()), "\n")
}
