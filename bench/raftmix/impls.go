package raftmix

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// raftick: three repeated.Timers per group on one real-time wheel, laid
// out as a host that cares about memory keeps them: embedded (Init), no
// allocation per timer, one slice per kind (timers[k][i] is group i's k-th
// timer), so that a batch of heartbeats, which visits consecutive groups'
// election timers, reads consecutive memory. raftick-keep (keep) is the
// same with the election timer made repeated.WithResetKeepsDelay.
type raftick struct {
	w      *wheel.Wheel
	timers [3][]repeated.Timer // election, step-down, snapshot
}

func newRaftick(r *run, keep bool) (*raftick, error) {
	w, err := wheel.New(r.cfg.wheelConfig())
	if err != nil {
		return nil, err
	}
	// The election timer's last option: WithResetKeepsDelay for
	// raftick-keep, else none (Init skips a nil Option). The options are
	// passed as arguments, not appended to a slice per timer: 300k such
	// slices, allocated between the groups' closures, spread those over
	// more pages and cost raftick about 6 % of its CPU at 100k groups.
	var keepOpt repeated.Option
	if keep {
		keepOpt = repeated.WithResetKeepsDelay()
	}
	im := &raftick{w: w}
	for k := range im.timers {
		im.timers[k] = make([]repeated.Timer, len(r.groups))
	}
	for i := range r.groups {
		g := &r.groups[i]
		specs := [3]struct {
			name string
			d    time.Duration
			f    func()
			j    repeated.Jitter
			last repeated.Option // after the jitter and the seed
		}{
			{"election", ElectionTimeout, func() { g.elections.Add(1) }, repeated.Proportional(1), keepOpt},
			{"stepdown", StepDown, func() { r.stepDown(g) }, repeated.None(), nil},
			{"snapshot", Snapshot, func() {}, repeated.FirstOnly(), nil},
		}
		for k, s := range specs {
			seed := r.seed(i, k)
			err := im.timers[k][i].Init(w, s.name, s.d, s.f, repeated.WithJitter(s.j), repeated.WithSeed(seed[0], seed[1]), s.last)
			if err != nil {
				w.Stop()
				return nil, fmt.Errorf("raftmix: group %d: %w", i, err)
			}
		}
	}
	return im, nil
}

func (im *raftick) start(i int) {
	for k := range im.timers {
		im.timers[k][i].Start()
	}
}

func (im *raftick) heartbeat(i int) { im.timers[0][i].Reset() }

func (im *raftick) stop() {
	for k := range im.timers {
		for i := range im.timers[k] {
			im.timers[k][i].Destroy()
		}
	}
	im.w.Stop()
	<-im.w.Done()
}

func (im *raftick) wakeups() int64 { return im.w.Stats().Wakeups }

// std: the same timers on StdTimer.
type std struct{ timers [][3]*StdTimer }

func newStd(r *run) *std {
	im := &std{timers: make([][3]*StdTimer, len(r.groups))}
	for i := range r.groups {
		g := &r.groups[i]
		im.timers[i] = [3]*StdTimer{
			NewStdTimer(ElectionTimeout, repeated.Proportional(1), r.rng(i, 0), func() { g.elections.Add(1) }),
			NewStdTimer(StepDown, repeated.None(), r.rng(i, 1), func() { r.stepDown(g) }),
			NewStdTimer(Snapshot, repeated.FirstOnly(), r.rng(i, 2), func() {}),
		}
	}
	return im
}

func (im *std) start(i int) {
	for _, tm := range im.timers[i] {
		tm.Start()
	}
}

func (im *std) heartbeat(i int) { im.timers[i][0].Reset() }

func (im *std) stop() {
	for i := range im.timers {
		for _, tm := range im.timers[i] {
			tm.Stop()
		}
	}
}

func (im *std) wakeups() int64 { return -1 }

// ticker: one goroutine advances every group's counters once a tick, as
// etcd's and dragonboat's tick loops do. Heartbeats clear the election
// counter (group.elapsed); the step-down and snapshot counters belong to
// the loop.
type ticker struct {
	r        *run
	tick     time.Duration
	et       int32         // election timeout in ticks
	sd, snap int32         // step-down and snapshot periods in ticks
	state    []tickerGroup // owned by the loop
	rng      *rand.Rand    // owned by the loop
	ticks    chan struct{} // closed by stop
	done     chan struct{} // closed when the loop exits
	count    atomic.Int64  // ticks seen
}

type tickerGroup struct {
	timeout  int32 // randomized election timeout, ticks
	sd, snap int32
}

func ceilTicks(d, tick time.Duration) int32 { return int32((d + tick - 1) / tick) }

func newTicker(r *run, tick time.Duration) *ticker {
	im := &ticker{
		r:     r,
		tick:  tick,
		et:    ceilTicks(ElectionTimeout, tick),
		sd:    ceilTicks(StepDown, tick),
		snap:  ceilTicks(Snapshot, tick),
		state: make([]tickerGroup, len(r.groups)),
		rng:   r.rng(-1, 0),
		ticks: make(chan struct{}),
		done:  make(chan struct{}),
	}
	r.period = time.Duration(im.sd) * tick
	for i := range im.state {
		s := &im.state[i]
		s.timeout = im.et + im.rng.Int32N(im.et)
		s.snap = im.snap/2 + im.rng.Int32N(im.snap-im.snap/2) // first-only jitter
		s.sd = int32(int64(i) * int64(im.sd) / int64(len(im.state)))
	}
	return im
}

// start starts the loop with the first group; the groups' step-down
// counters start out of phase (see newTicker).
func (im *ticker) start(i int) {
	if i == 0 {
		go im.loop()
	}
}

func (im *ticker) loop() {
	defer close(im.done)
	t := time.NewTicker(im.tick)
	defer t.Stop()
	for {
		select {
		case <-im.ticks:
			return
		case <-t.C:
		}
		for i := range im.state {
			s, g := &im.state[i], &im.r.groups[i]
			if g.elapsed.Add(1) >= s.timeout {
				g.elapsed.Store(0)
				s.timeout = im.et + im.rng.Int32N(im.et)
				g.elections.Add(1)
			}
			if s.sd++; s.sd >= im.sd {
				s.sd = 0
				im.r.stepDown(g)
			}
			if s.snap--; s.snap <= 0 {
				s.snap = im.snap
			}
		}
		im.count.Add(1)
	}
}

func (im *ticker) heartbeat(i int) { im.r.groups[i].elapsed.Store(0) }

func (im *ticker) stop() {
	close(im.ticks)
	<-im.done
}

func (im *ticker) wakeups() int64 { return im.count.Load() }

// none: heartbeats only.
type none struct{ r *run }

func (none) start(int)          {}
func (im none) heartbeat(i int) { im.r.groups[i].elapsed.Add(1) }
func (none) stop()              {}
func (none) wakeups() int64     { return -1 }
