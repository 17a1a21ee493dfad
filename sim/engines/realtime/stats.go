package realtime

import (
	"math/rand/v2"

	"github.com/raftick/raftick/sim"
	"slices"
	"sync"
	"time"
)

// sampleCap bounds each of Stats' samples (a reservoir beyond it).
const sampleCap = 1 << 16

// Stats collects the lateness the real-time engine measured of itself,
// across the trials that share it; it is safe for concurrent use. The
// zero Stats is ready to use.
type Stats struct {
	mu       sync.Mutex
	timer    sample
	delivery sample
	rng      *rand.Rand
}

// A sample is a reservoir of at most sampleCap durations.
type sample struct {
	n  int64
	xs []time.Duration
}

func (s *sample) add(d time.Duration, rng *rand.Rand) {
	s.n++
	if len(s.xs) < sampleCap {
		s.xs = append(s.xs, d)
		return
	}
	if k := rng.Int64N(s.n); k < sampleCap {
		s.xs[k] = d
	}
}

func (s *Stats) add(timer bool, d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	if timer {
		s.timer.add(d, s.rng)
	} else {
		s.delivery.add(d, s.rng)
	}
}

// Lateness is a snapshot of one kind of lateness: how many were measured
// and a sample of them, sorted.
type Lateness struct {
	Count  int64
	Sample []time.Duration
}

// Quantile returns the q-quantile of the sample (0 if empty).
func (l Lateness) Quantile(q float64) time.Duration {
	if len(l.Sample) == 0 {
		return 0
	}
	i := min(int(q*float64(len(l.Sample))), len(l.Sample)-1)
	return l.Sample[max(i, 0)]
}

// Mean returns the sample's mean (0 if empty).
func (l Lateness) Mean() time.Duration {
	if len(l.Sample) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range l.Sample {
		sum += d
	}
	return sum / time.Duration(len(l.Sample))
}

// Timer returns how late the trials' wheels ran callbacks past their
// deadlines, as a probe timer on each wheel measures it: the wheel's
// tick and slack, the driver's wake-up, the Go scheduler and the wait for
// the trial's lock, which every node timer pays too.
func (s *Stats) Timer() Lateness { return s.snapshot(&s.timer) }

// Delivery returns how late the carriers delivered messages past the end
// of their drawn delays, measured once the delivery holds the trial's
// lock (the engine's own error, not the model's: the carrier's wake-up,
// the Go scheduler and the wait for the lock).
func (s *Stats) Delivery() Lateness { return s.snapshot(&s.delivery) }

func (s *Stats) snapshot(x *sample) Lateness {
	s.mu.Lock()
	defer s.mu.Unlock()
	xs := slices.Clone(x.xs)
	slices.Sort(xs)
	return Lateness{Count: x.n, Sample: xs}
}

// Plus returns a latency whose draws are a draw of a plus a draw of b:
// a model's latency with the engine's measured delivery lateness added
// (raftsim compare's virtual+lateness run).
func Plus(a, b sim.Latency) sim.Latency { return plus{a, b} }

type plus struct{ a, b sim.Latency }

func (p plus) Sample(rng *rand.Rand) time.Duration { return p.a.Sample(rng) + p.b.Sample(rng) }
func (p plus) String() string                      { return p.a.String() + " + " + p.b.String() }
