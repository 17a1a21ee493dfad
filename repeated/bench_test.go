package repeated_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// BenchmarkRepeatedReset is the heartbeat path: a running election timer
// (150ms, Proportional(1)) pushed back by Reset. impl=repeated runs on a
// real-time wheel; impl=std is stdTimer on time.Timer with the same jitter.
func BenchmarkRepeatedReset(b *testing.B) {
	b.Run("impl=repeated", func(b *testing.B) {
		w, err := wheel.New(wheel.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		tm, err := repeated.New(w, "election", 150*ms, func() {},
			repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(1)))
		if err != nil {
			b.Fatal(err)
		}
		tm.Start()
		b.ReportAllocs()
		for b.Loop() {
			tm.Reset()
		}
		tm.Destroy()
	})
	b.Run("impl=std", func(b *testing.B) {
		s := newStdTimer(150*ms, repeated.Proportional(1), seeded(1), func() {})
		s.Start()
		b.ReportAllocs()
		for b.Loop() {
			s.Reset()
		}
		s.Stop()
	})
}

// BenchmarkRepeatedCycle is the fire-and-re-arm cycle on a virtual wheel:
// each op fires the timer and re-arms it with a fresh jittered timeout.
// impl=wheel is the floor: a bare wheel.Timer re-armed from its callback.
func BenchmarkRepeatedCycle(b *testing.B) {
	b.Run("impl=repeated", func(b *testing.B) {
		v, err := wheel.NewVirtual(wheel.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer v.Stop()
		tm, err := repeated.New(v.Wheel, "stepdown", 75*ms, func() {},
			repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(1)))
		if err != nil {
			b.Fatal(err)
		}
		tm.Start()
		b.ReportAllocs()
		for b.Loop() {
			v.AdvanceToNext()
		}
		tm.Destroy()
	})
	b.Run("impl=wheel", func(b *testing.B) {
		v, err := wheel.NewVirtual(wheel.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer v.Stop()
		rng := seeded(1)
		var wt wheel.Timer
		j := repeated.Proportional(1)
		if err := wt.Init(v.Wheel, func() { wt.Reset(j.Next(75*ms, repeated.State{}, rng)) }); err != nil {
			b.Fatal(err)
		}
		wt.Reset(75 * ms)
		b.ReportAllocs()
		for b.Loop() {
			v.AdvanceToNext()
		}
		wt.Stop()
	})
}

// raftGroupTimers is what one Raft group needs from the benchmark.
type raftGroupTimers interface {
	heartbeat() // reset the election timer
	stop()
}

type repeatedGroup struct{ election, stepDown, snapshot *repeated.Timer }

func (g *repeatedGroup) heartbeat() { g.election.Reset() }
func (g *repeatedGroup) stop() {
	g.election.Destroy()
	g.stepDown.Destroy()
	g.snapshot.Destroy()
}

type stdGroup struct{ election, stepDown, snapshot *stdTimer }

func (g *stdGroup) heartbeat() { g.election.Reset() }
func (g *stdGroup) stop() {
	g.election.Stop()
	g.stepDown.Stop()
	g.snapshot.Stop()
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRaftMix runs the timers of G Raft groups at once, as a
// multi-raft process does: per group an election timer (150ms,
// Proportional(1): [150ms, 300ms)) reset by a heartbeat every 50ms, a
// step-down timer firing every 75ms and a snapshot timer (1h, FirstOnly).
// impl=repeated puts all of them on one real-time wheel (callbacks on its
// driver goroutine); impl=std builds the same mix on time.Timer.
//
// The benchmark goroutine delivers the heartbeats, paced to real time: each
// op resets the election timers of G/200 groups and then waits for its
// share of the 50ms period (so an op is ~250µs of wall time and ns/op
// measures the pacing, not the cost). The metrics that matter:
//
//	ns/reset   time spent in one heartbeat Reset (mean)
//	cpu/wall   process CPU time (getrusage) per wall second: the whole
//	           cost of the mix, including fires, GC and the runtime
//	fires/s    step-down fires per second (target 13.3k/s per 1k groups)
//	hb-pace    heartbeats delivered / heartbeats due (1 = kept up)
//	cpu-ns/event  process CPU per unit of work (heartbeat reset or
//	           step-down fire): the fair comparison when an implementation
//	           cannot keep up (hb-pace < 1, fewer fires) and so spends less
//	           CPU per wall second than the work requires
//	wheel-max-late-ms  (impl=repeated) the wheel's Stats.MaxLateness
func BenchmarkRaftMix(b *testing.B) {
	for _, groups := range []int{1_000, 100_000} {
		for _, impl := range []string{"repeated", "std"} {
			b.Run(fmt.Sprintf("groups=%dk/impl=%s", groups/1000, impl), func(b *testing.B) {
				benchRaftMix(b, groups, impl)
			})
		}
	}
}

func benchRaftMix(b *testing.B, n int, impl string) {
	const (
		electionTimeout = 150 * ms
		heartbeat       = 50 * ms
		stepDown        = 75 * ms
		snapshot        = time.Hour
	)
	var fires atomic.Int64
	onStepDown := func() { fires.Add(1) }
	nop := func() {}
	rng := func(i, k int) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), uint64(k))) }

	groups := make([]raftGroupTimers, n)
	var w *wheel.Wheel
	switch impl {
	case "repeated":
		var err error
		if w, err = wheel.New(wheel.DefaultConfig()); err != nil {
			b.Fatal(err)
		}
		mk := func(name string, i int, d time.Duration, f func(), j repeated.Jitter, k int) *repeated.Timer {
			tm, err := repeated.New(w, name, d, f, repeated.WithJitter(j), repeated.WithRand(rng(i, k)))
			if err != nil {
				b.Fatal(err)
			}
			tm.Start()
			return tm
		}
		for i := range groups {
			groups[i] = &repeatedGroup{
				election: mk("election", i, electionTimeout, nop, repeated.Proportional(1), 0),
				stepDown: mk("stepdown", i, stepDown, onStepDown, repeated.None(), 1),
				snapshot: mk("snapshot", i, snapshot, nop, repeated.FirstOnly(), 2),
			}
		}
	case "std":
		mk := func(i int, d time.Duration, f func(), j repeated.Jitter, k int) *stdTimer {
			s := newStdTimer(d, j, rng(i, k), f)
			s.Start()
			return s
		}
		for i := range groups {
			groups[i] = &stdGroup{
				election: mk(i, electionTimeout, nop, repeated.Proportional(1), 0),
				stepDown: mk(i, stepDown, onStepDown, repeated.None(), 1),
				snapshot: mk(i, snapshot, nop, repeated.FirstOnly(), 2),
			}
		}
	}
	defer func() {
		for _, g := range groups {
			g.stop()
		}
		if w != nil {
			w.Stop()
		}
	}()
	for _, g := range groups { // one full heartbeat round, then a clean heap
		g.heartbeat()
	}
	runtime.GC()

	batch := max(1, n/200)
	period := time.Duration(int64(heartbeat) * int64(batch) / int64(n)) // wall time per op
	var resetTime time.Duration
	resets, next := 0, 0
	fires.Store(0)
	cpu0, wall0 := processCPU(), time.Now()
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			groups[next].heartbeat()
			if next++; next == n {
				next = 0
			}
		}
		t1 := time.Now()
		resetTime += t1.Sub(t0)
		resets += batch
		// Pace: op i ends no earlier than wall0 + (i+1)*period.
		if ahead := wall0.Add(time.Duration(resets/batch) * period).Sub(t1); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	wall := time.Since(wall0)
	cpu := processCPU() - cpu0
	b.ReportMetric(float64(resetTime.Nanoseconds())/float64(resets), "ns/reset")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu/wall")
	b.ReportMetric(float64(fires.Load())/wall.Seconds(), "fires/s")
	due := wall.Seconds() * float64(n) / heartbeat.Seconds()
	b.ReportMetric(float64(resets)/due, "hb-pace")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(int64(resets)+fires.Load()), "cpu-ns/event")
	if w != nil {
		st := w.Stats()
		b.ReportMetric(float64(st.MaxLateness)/float64(ms), "wheel-max-late-ms")
	}
}

// BenchmarkRepeatedResetMany is the heartbeat path at scale: 100k running
// election timers (150ms, Proportional(1)), reset one after another in
// order, as a batch of heartbeats visits its groups. layout=embedded keeps
// the timers in one slice (Init), as a multi-raft host keeps them in its
// per-group structs; layout=new allocates each (New, WithRand); impl=std
// is stdTimer. With this many timers a Reset is mostly cache
// misses, so the memory a Reset touches is what this measures.
func BenchmarkRepeatedResetMany(b *testing.B) {
	const n = 100_000
	run := func(b *testing.B, reset func(i int)) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			reset(i)
			if i++; i == n {
				i = 0
			}
		}
	}
	b.Run("impl=repeated/layout=embedded", func(b *testing.B) {
		w, err := wheel.New(wheel.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		timers := make([]repeated.Timer, n)
		for i := range timers {
			if err := timers[i].Init(w, "election", 150*ms, func() {},
				repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(uint64(i), 1)); err != nil {
				b.Fatal(err)
			}
			timers[i].Start()
		}
		run(b, func(i int) { timers[i].Reset() })
		for i := range timers {
			timers[i].Destroy()
		}
	})
	b.Run("impl=repeated/layout=new", func(b *testing.B) {
		w, err := wheel.New(wheel.DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		timers := make([]*repeated.Timer, n)
		for i := range timers {
			tm, err := repeated.New(w, "election", 150*ms, func() {},
				repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(uint64(i))))
			if err != nil {
				b.Fatal(err)
			}
			tm.Start()
			timers[i] = tm
		}
		run(b, func(i int) { timers[i].Reset() })
		for _, tm := range timers {
			tm.Destroy()
		}
	})
	b.Run("impl=std", func(b *testing.B) {
		timers := make([]*stdTimer, n)
		for i := range timers {
			timers[i] = newStdTimer(150*ms, repeated.Proportional(1), seeded(uint64(i)), func() {})
			timers[i].Start()
		}
		run(b, func(i int) { timers[i].Reset() })
		for _, s := range timers {
			s.Stop()
		}
	})
}
