package peers_test

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raftick/raftick/bench/peers"
)

// Benchmarks run impl=raftick, impl=std and impl=gozero side by side in one
// run. The machine they were measured on is shared: quote ratios.
//
//	cd bench/peers && go test -run '^$' -bench . -benchmem

const benchSeed = 0x5eed

// splitmix is a fixed-seed splitmix64 sequence: the same few nanoseconds for
// every implementation.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// span maps a random word to [lo, lo+width).
func span(x uint64, lo, width time.Duration) time.Duration {
	return lo + time.Duration((x>>32)*uint64(width)>>32)
}

var liveSizes = []int{1_000, 100_000}

func sizeName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func newTimers(b *testing.B, impl peers.Impl, n int, f func(int)) peers.Timers {
	b.Helper()
	ts, err := impl.New(n, f)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ts.Close)
	return ts
}

func noop(int) {}

// spreadHours arms timers 0..n-1 over [1h, 2h), so none fires during a run.
func spreadHours(ts peers.Timers, n int) {
	for i := range n {
		ts.Arm(i, time.Hour+time.Duration(i)*(time.Hour/time.Duration(n)))
	}
	ts.Sync()
}

// settle collects the previous sub-benchmark's garbage so that it is not
// charged to the next one.
func settle() { runtime.GC() }

// BenchmarkScheduleStop: with N timers live an hour or two out, each op
// schedules one more timer 1s out and stops it. Every implementation reuses
// its timer (raftick: Reset+Stop on an embedded Timer; std: Reset+Stop on
// one *time.Timer; gozero: SetTimer+RemoveTimer on one key).
func BenchmarkScheduleStop(b *testing.B) {
	for _, n := range liveSizes {
		b.Run("live="+sizeName(n), func(b *testing.B) {
			for _, impl := range peers.Impls {
				b.Run("impl="+impl.Name, func(b *testing.B) {
					settle()
					ts := newTimers(b, impl, n+1, noop)
					spreadHours(ts, n)
					b.ReportAllocs()
					for b.Loop() {
						ts.Arm(n, time.Second)
						ts.Disarm(n)
					}
				})
			}
		})
	}
}

// BenchmarkHeartbeat is the Raft follower's hot path: each op re-arms one
// of N live timers to now+[150ms,300ms). Timers are visited in a fixed-seed
// random order, round after round, as every follower hears every heartbeat;
// a timer whose round took longer than 150ms may have fired and is armed
// again. fires/op reports how often that happened.
func BenchmarkHeartbeat(b *testing.B) {
	const lo, width = 150 * time.Millisecond, 150 * time.Millisecond
	for _, n := range liveSizes {
		order := make([]int, n)
		r := splitmix{benchSeed}
		for i := range order {
			order[i] = i
		}
		for i := n - 1; i > 0; i-- {
			j := int((r.next() >> 32) * uint64(i+1) >> 32)
			order[i], order[j] = order[j], order[i]
		}
		b.Run("live="+sizeName(n), func(b *testing.B) {
			for _, impl := range peers.Impls {
				b.Run("impl="+impl.Name, func(b *testing.B) {
					settle()
					var fired atomic.Int64
					ts := newTimers(b, impl, n, func(int) { fired.Add(1) })
					r := splitmix{benchSeed}
					for i := range n {
						ts.Arm(i, span(r.next(), lo, width))
					}
					ts.Sync()
					before := fired.Load()
					k := 0
					b.ReportAllocs()
					for b.Loop() {
						ts.Arm(order[k], span(r.next(), lo, width))
						if k++; k == n {
							k = 0
						}
					}
					b.ReportMetric(float64(fired.Load()-before)/float64(b.N), "fires/op")
				})
			}
		})
	}
}

// latencyHist counts lateness (fire time minus the deadline computed just
// before scheduling) in 10µs buckets from -10ms to +90ms; values outside
// are clamped into the end buckets, and the exact extremes are kept.
type latencyHist struct {
	buckets  [10_000]int64
	n        int64
	early    int64
	min, max time.Duration
}

const (
	histBucket = 10 * time.Microsecond
	histLow    = -10 * time.Millisecond
)

func (h *latencyHist) add(d time.Duration) {
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	if d < 0 {
		h.early++
	}
	i := int((d - histLow) / histBucket)
	i = max(0, min(i, len(h.buckets)-1))
	h.buckets[i]++
}

// quantile returns the upper edge of the bucket holding quantile q.
func (h *latencyHist) quantile(q float64) time.Duration {
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.buckets {
		if seen += c; seen >= want {
			return histLow + time.Duration(i+1)*histBucket
		}
	}
	return h.max
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// BenchmarkFire: each op schedules N=10k timers 1–5ms out (fixed-seed
// delays) and waits until all have fired. Metrics: timers/s (timers per
// wall second of the loop), lateness p50/p99/max in µs, the earliest fire
// (min-late-us; negative means before the deadline) and the share of timers
// that fired early (early-%). A timer's deadline is taken from time.Now()
// just before it is scheduled, so a negative lateness is a real early fire.
func BenchmarkFire(b *testing.B) {
	const n = 10_000
	const lo, width = time.Millisecond, 4 * time.Millisecond
	delays := make([]time.Duration, n)
	r := splitmix{benchSeed}
	for i := range delays {
		delays[i] = span(r.next(), lo, width)
	}
	for _, impl := range peers.Impls {
		b.Run(fmt.Sprintf("n=%s/impl=%s", sizeName(n), impl.Name), func(b *testing.B) {
			settle()
			var (
				wg       sync.WaitGroup
				deadline = make([]time.Time, n)
				late     = make([]time.Duration, n)
				hist     = new(latencyHist)
			)
			ts := newTimers(b, impl, n, func(i int) {
				late[i] = time.Since(deadline[i])
				wg.Done()
			})
			b.ReportAllocs()
			for b.Loop() {
				wg.Add(n)
				for i, d := range delays {
					deadline[i] = time.Now().Add(d)
					ts.Arm(i, d)
				}
				wg.Wait()
				for _, l := range late {
					hist.add(l)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "timers/s")
			b.ReportMetric(us(hist.quantile(0.50)), "p50-late-us")
			b.ReportMetric(us(hist.quantile(0.99)), "p99-late-us")
			b.ReportMetric(us(hist.max), "max-late-us")
			b.ReportMetric(us(hist.min), "min-late-us")
			b.ReportMetric(100*float64(hist.early)/float64(hist.n), "early-%")
		})
	}
}

// heapBytes returns the live heap after full collections.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkLiveTimerMemory reports the heap each live timer costs
// (B/timer): N=100k timers pending an hour or two out, including the
// adapter's per-timer slices (raftick: the embedded Timer and its callback
// closure; std: the *time.Timer, its slot and closure; gozero: the boxed
// key and the wheel's own entries). The timed loop re-arms the last timer
// to the same delay; the metric is what counts.
func BenchmarkLiveTimerMemory(b *testing.B) {
	const n = 100_000
	for _, impl := range peers.Impls {
		b.Run(fmt.Sprintf("live=%s/impl=%s", sizeName(n), impl.Name), func(b *testing.B) {
			settle()
			before := heapBytes()
			ts := newTimers(b, impl, n, noop)
			spreadHours(ts, n)
			after := heapBytes()
			b.ReportAllocs()
			for b.Loop() {
				ts.Arm(n-1, 2*time.Hour)
			}
			b.ReportMetric(float64(after-before)/n, "B/timer")
		})
	}
}
