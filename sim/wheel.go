package sim

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/wheel"
)

// A Wheel is the virtual timing wheel of one trial. The wheel, and the
// repeated timers of the nodes on it, recover a panicking callback and
// keep running (their contract); a Wheel also remembers the panics, so
// that a trial can fail instead of reporting what the broken run
// measured.
type Wheel struct {
	*wheel.Virtual
	panics *panics
}

// NewWheel returns a virtual wheel with the default configuration.
func NewWheel() (*Wheel, error) {
	p := &panics{}
	cfg := wheel.DefaultConfig()
	cfg.Logger = p.logger(nil)
	v, err := wheel.NewVirtual(cfg)
	if err != nil {
		return nil, err
	}
	return &Wheel{Virtual: v, panics: p}, nil
}

// NewRealtimeWheel returns a wheel on real time configured as cfg (its
// Logger, if set, still receives everything; the Wheel also records the
// panics its callbacks recover). A Cluster built on it (Config.Wheel) is
// driven by the wheel's own goroutine, not by Cluster.Run. The embedded
// Virtual then only carries the wheel: its Advance methods must not be
// called (IsVirtual reports false).
func NewRealtimeWheel(cfg wheel.Config) (*Wheel, error) {
	p := &panics{}
	cfg.Logger = p.logger(cfg.Logger)
	w, err := wheel.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Wheel{Virtual: &wheel.Virtual{Wheel: w}, panics: p}, nil
}

// Logger returns a logger for code running on the wheel (the nodes and
// their timers) that passes everything to inner (nil: discard) and
// records the panics their callbacks recovered, so that Err reports them.
func (w *Wheel) Logger(inner hclog.Logger) hclog.Logger { return w.panics.logger(inner) }

// Err returns a *PanicError if a callback on the wheel panicked, else
// nil.
func (w *Wheel) Err() error { return w.panics.err() }

// PanicError reports callbacks that panicked during a trial.
type PanicError struct {
	Value string // the first panic's value, as printed
	Count int    // callbacks that panicked
}

func (e *PanicError) Error() string {
	if e.Count == 1 {
		return "sim: a callback panicked: " + e.Value
	}
	return fmt.Sprintf("sim: %d callbacks panicked, the first: %s", e.Count, e.Value)
}

// panics collects the panics that loggers report (a recovered panic is
// logged at error level with a "panic" argument, by the wheel and by
// repeated timers alike).
type panics struct {
	mu    sync.Mutex
	first string
	count int
}

func (p *panics) logger(inner hclog.Logger) hclog.Logger {
	if inner == nil {
		inner = hclog.NewNullLogger()
	}
	return panicLog{Logger: inner, p: p}
}

func (p *panics) record(args []any) {
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "panic" {
			p.mu.Lock()
			if p.count == 0 {
				p.first = fmt.Sprint(args[i+1])
			}
			p.count++
			p.mu.Unlock()
			return
		}
	}
}

func (p *panics) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.count == 0 {
		return nil
	}
	return &PanicError{Value: p.first, Count: p.count}
}

// panicLog passes everything to its inner logger and records panics.
type panicLog struct {
	hclog.Logger
	p *panics
}

func (l panicLog) Error(msg string, args ...any) {
	l.p.record(args)
	l.Logger.Error(msg, args...)
}

func (l panicLog) Log(level hclog.Level, msg string, args ...any) {
	if level >= hclog.Error {
		l.p.record(args)
	}
	l.Logger.Log(level, msg, args...)
}

func (l panicLog) Named(name string) hclog.Logger {
	return panicLog{Logger: l.Logger.Named(name), p: l.p}
}

func (l panicLog) ResetNamed(name string) hclog.Logger {
	return panicLog{Logger: l.Logger.ResetNamed(name), p: l.p}
}

func (l panicLog) With(args ...any) hclog.Logger {
	return panicLog{Logger: l.Logger.With(args...), p: l.p}
}
