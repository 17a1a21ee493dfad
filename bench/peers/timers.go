package peers

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/wheel"
	"github.com/zeromicro/go-zero/core/collection"
)

// Timers is a fixed set of n timers addressed by index 0..n-1. Each calls
// the callback given to its Impl's New with its own index when it fires.
// Methods must not be called after Close.
type Timers interface {
	// Arm schedules timer i to fire d from now, or re-arms it if it is
	// pending. d must be positive.
	Arm(i int, d time.Duration)
	// Disarm stops timer i if it is pending.
	Disarm(i int)
	// Sync returns once every earlier Arm and Disarm has taken effect (a
	// no-op for synchronous implementations).
	Sync()
	// Close releases the implementation's goroutines; pending timers never
	// fire.
	Close()
}

// Impl names an implementation and builds a Timers of n timers calling f.
type Impl struct {
	Name string
	New  func(n int, f func(i int)) (Timers, error)
}

// GoZeroInterval and GoZeroSlots configure the go-zero wheel: a 1ms tick
// like raftick's default, and 4096 slots (one revolution is about 4s; longer
// delays wait whole revolutions).
const (
	GoZeroInterval = time.Millisecond
	GoZeroSlots    = 4096
)

// Impls lists the implementations, raftick first.
var Impls = []Impl{
	{Name: "raftick", New: newRaftick},
	{Name: "std", New: newStd},
	{Name: "gozero", New: newGoZero},
}

// raftick: one real-time wheel per set; Timers embedded in a slice, bound
// once with Init, re-armed with Reset.
type raftickTimers struct {
	w  *wheel.Wheel
	ts []wheel.Timer
}

func newRaftick(n int, f func(int)) (Timers, error) {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		return nil, err
	}
	r := &raftickTimers{w: w, ts: make([]wheel.Timer, n)}
	for i := range r.ts {
		if err := r.ts[i].Init(w, func() { f(i) }); err != nil {
			w.Stop()
			return nil, fmt.Errorf("peers: raftick timer %d: %w", i, err)
		}
	}
	return r, nil
}

func (r *raftickTimers) Arm(i int, d time.Duration) { r.ts[i].Reset(d) }
func (r *raftickTimers) Disarm(i int)               { r.ts[i].Stop() }
func (r *raftickTimers) Sync()                      {}
func (r *raftickTimers) Close()                     { r.w.Stop() }

// std: one *time.Timer per index, created by time.AfterFunc on first use
// and re-armed with Reset afterwards (what a user holding a timer does).
type stdTimers struct {
	ts []*time.Timer
	fs []func()
}

func newStd(n int, f func(int)) (Timers, error) {
	s := &stdTimers{ts: make([]*time.Timer, n), fs: make([]func(), n)}
	for i := range s.fs {
		s.fs[i] = func() { f(i) }
	}
	return s, nil
}

func (s *stdTimers) Arm(i int, d time.Duration) {
	if s.ts[i] == nil {
		s.ts[i] = time.AfterFunc(d, s.fs[i])
		return
	}
	s.ts[i].Reset(d)
}

func (s *stdTimers) Disarm(i int) {
	if s.ts[i] != nil {
		s.ts[i].Stop()
	}
}

func (s *stdTimers) Sync() {}

func (s *stdTimers) Close() {
	for _, t := range s.ts {
		if t != nil {
			t.Stop()
		}
	}
}

// gozero: go-zero's TimingWheel, a single-level wheel with rounds, driven
// by one goroutine that owns all state; SetTimer, MoveTimer and RemoveTimer
// are sends on unbuffered channels to it. Timers are keyed by an interface
// value; the keys (boxed indices) are built once so the loop does not pay
// for boxing. SetTimer is go-zero's upsert (it moves a pending key), so Arm
// uses it for both scheduling and re-arming.
type goZeroTimers struct {
	tw   *collection.TimingWheel
	keys []any
	sync any
}

type syncKey struct{}

func newGoZero(n int, f func(int)) (Timers, error) {
	tw, err := collection.NewTimingWheel(GoZeroInterval, GoZeroSlots, func(_, v any) {
		f(v.(int))
	})
	if err != nil {
		return nil, fmt.Errorf("peers: go-zero: %w", err)
	}
	g := &goZeroTimers{tw: tw, keys: make([]any, n), sync: syncKey{}}
	for i := range g.keys {
		g.keys[i] = i
	}
	return g, nil
}

func (g *goZeroTimers) Arm(i int, d time.Duration) {
	// Errors: d <= 0 (callers never pass it) or a closed wheel (misuse).
	_ = g.tw.SetTimer(g.keys[i], g.keys[i], d)
}

func (g *goZeroTimers) Disarm(i int) { _ = g.tw.RemoveTimer(g.keys[i]) }

// Sync removes a key that is never set: the wheel's goroutine receives it
// only after it has finished handling every earlier request.
func (g *goZeroTimers) Sync() { _ = g.tw.RemoveTimer(g.sync) }

func (g *goZeroTimers) Close() { g.tw.Stop() }
