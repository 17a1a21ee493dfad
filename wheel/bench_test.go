package wheel_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raftick/raftick/wheel"
)

// Benchmarks compare the wheel with the standard library's runtime timers
// (impl=std) in the same run. Quote ratios, not absolute numbers: the
// machine is shared and noisy.
//
//	go test ./wheel -run '^$' -bench 'Reset|ScheduleStop' -benchmem
//	go test ./wheel -run '^$' -bench 'LiveTimerMemory|IdleWakeups'

const (
	benchSeed = 0x5eed
	// The heartbeat pattern: each op pushes one timer to now+[150ms,300ms).
	heartbeatMin  = 150 * time.Millisecond
	heartbeatSpan = 150 * time.Millisecond
)

var liveSizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"1m", 1_000_000}}

func noop() {}

// benchRand is a splitmix64 generator: a fixed-seed sequence that costs the
// same couple of nanoseconds in both implementations.
type benchRand struct{ s uint64 }

func (r *benchRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// heartbeat maps a random word to a timer index in [0,n) and a delay in
// [heartbeatMin, heartbeatMin+heartbeatSpan).
func heartbeat(x uint64, n int) (int, time.Duration) {
	i := int((x >> 32) * uint64(n) >> 32)
	d := heartbeatMin + time.Duration((x&0xffffffff)*uint64(heartbeatSpan)>>32)
	return i, d
}

// heartbeatOrder is the fixed-seed random order in which BenchmarkReset
// visits its n timers, over and over: every timer is pushed once per round,
// as every follower hears every heartbeat, so timers stay live unless a
// round takes longer than heartbeatMin.
func heartbeatOrder(n int) []uint32 {
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	r := benchRand{benchSeed}
	for i := n - 1; i > 0; i-- {
		j, _ := heartbeat(r.next(), i+1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}

func newBenchWheel(b *testing.B) *wheel.Wheel {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// settle collects the garbage of earlier sub-benchmarks so that it is not
// charged to the next one.
func settle() { runtime.GC() }

// BenchmarkReset: a fixed-seed random sequence over N live timers; each op
// pushes one timer to now+[150ms,300ms). The sequence visits the timers in a
// fixed random order, round after round (heartbeatOrder). The live timers
// are created before the timed loop and stopped after it. A timer whose
// round took longer than 150ms may have fired, and the op re-arms it;
// fires/op reports how often that happened.
func BenchmarkReset(b *testing.B) {
	for _, size := range liveSizes {
		order := heartbeatOrder(size.n)
		b.Run("live="+size.name, func(b *testing.B) {
			b.Run("impl=wheel", func(b *testing.B) {
				settle()
				w := newBenchWheel(b)
				defer w.Stop()
				r := benchRand{benchSeed}
				ts := make([]wheel.Timer, size.n)
				for i := range ts {
					if err := ts[i].Init(w, noop); err != nil {
						b.Fatal(err)
					}
					_, d := heartbeat(r.next(), size.n)
					ts[i].Reset(d)
				}
				fired := w.Stats().Fired
				k := 0
				b.ReportAllocs()
				for b.Loop() {
					_, d := heartbeat(r.next(), 1)
					ts[order[k]].Reset(d)
					if k++; k == len(order) {
						k = 0
					}
				}
				b.ReportMetric(float64(w.Stats().Fired-fired)/float64(b.N), "fires/op")
			})
			b.Run("impl=std", func(b *testing.B) {
				settle()
				var fired atomic.Int64
				count := func() { fired.Add(1) }
				r := benchRand{benchSeed}
				ts := make([]*time.Timer, size.n)
				for i := range ts {
					_, d := heartbeat(r.next(), size.n)
					ts[i] = time.AfterFunc(d, count)
				}
				defer func() {
					for _, t := range ts {
						t.Stop()
					}
				}()
				before := fired.Load()
				k := 0
				b.ReportAllocs()
				for b.Loop() {
					_, d := heartbeat(r.next(), 1)
					ts[order[k]].Reset(d)
					if k++; k == len(order) {
						k = 0
					}
				}
				b.ReportMetric(float64(fired.Load()-before)/float64(b.N), "fires/op")
			})
		})
	}
}

// BenchmarkScheduleStop schedules a timer 1s out and stops it, with 1M other
// timers live (spread over [1h, 2h), so none fires during the run). The
// wheel reuses one embedded Timer (Reset then Stop); impl=std calls
// time.AfterFunc(...).Stop(), impl=std-reused is like for like: Reset then
// Stop on one reused *time.Timer.
func BenchmarkScheduleStop(b *testing.B) {
	const n = 1_000_000
	spread := func(i int) time.Duration { return time.Hour + time.Duration(i)*(time.Hour/n) }
	b.Run("live=1m", func(b *testing.B) {
		b.Run("impl=wheel", func(b *testing.B) {
			settle()
			w := newBenchWheel(b)
			defer w.Stop()
			live := make([]wheel.Timer, n)
			for i := range live {
				if err := live[i].Init(w, noop); err != nil {
					b.Fatal(err)
				}
				live[i].Reset(spread(i))
			}
			var tm wheel.Timer
			if err := tm.Init(w, noop); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				tm.Reset(time.Second)
				tm.Stop()
			}
		})
		// liveStd starts the std side's live timers and returns their stop.
		liveStd := func() func() {
			settle()
			live := make([]*time.Timer, n)
			for i := range live {
				live[i] = time.AfterFunc(spread(i), noop)
			}
			return func() {
				for _, t := range live {
					t.Stop()
				}
			}
		}
		b.Run("impl=std", func(b *testing.B) {
			defer liveStd()()
			b.ReportAllocs()
			for b.Loop() {
				time.AfterFunc(time.Second, noop).Stop()
			}
		})
		b.Run("impl=std-reused", func(b *testing.B) {
			defer liveStd()()
			tm := time.AfterFunc(time.Hour, noop)
			tm.Stop()
			b.ReportAllocs()
			for b.Loop() {
				tm.Reset(time.Second)
				tm.Stop()
			}
		})
	})
}

// Timers of BenchmarkResetParallel: one chunk per goroutine.
const (
	chunks    = 64 // more than the goroutines parallelHeartbeats starts here
	chunkSize = 1024
)

// BenchmarkResetParallel is the heartbeat pattern from every P at once, each
// goroutine on its own 1024 live timers of one shared wheel (std: its own
// time.AfterFunc timers).
func BenchmarkResetParallel(b *testing.B) {
	b.Run("impl=wheel", func(b *testing.B) {
		settle()
		w := newBenchWheel(b)
		defer w.Stop()
		ts := make([]wheel.Timer, chunks*chunkSize)
		r := benchRand{benchSeed}
		for i := range ts {
			if err := ts[i].Init(w, noop); err != nil {
				b.Fatal(err)
			}
			_, d := heartbeat(r.next(), 1)
			ts[i].Reset(d)
		}
		parallelHeartbeats(b, func(i int, d time.Duration) { ts[i].Reset(d) })
	})
	b.Run("impl=std", func(b *testing.B) {
		settle()
		ts := make([]*time.Timer, chunks*chunkSize)
		r := benchRand{benchSeed}
		for i := range ts {
			_, d := heartbeat(r.next(), 1)
			ts[i] = time.AfterFunc(d, noop)
		}
		defer func() {
			for _, t := range ts {
				t.Stop()
			}
		}()
		parallelHeartbeats(b, func(i int, d time.Duration) { ts[i].Reset(d) })
	})
}

// parallelHeartbeats runs the heartbeat pattern from every core: b.N
// Resets split evenly over GOMAXPROCS goroutines, each of which owns one
// chunk of the timers and pushes one of them at a time to
// now+[150ms,300ms) through reset (timer index, delay). ns/op is wall time
// per Reset, as with b.RunParallel.
//
// It does not use b.RunParallel: PB.Next writes its goroutine's
// testing.PB, a 32-byte heap object, on every iteration, and two
// goroutines' PBs share a cache line about half the time, so that at
// about 10ns a Reset the line's ping-pong between the cores hid the
// scaling under test: -cpu 2 measured 9 or 5 ns/op from run to run,
// std 29 or 20, with the same code.
func parallelHeartbeats(b *testing.B, reset func(i int, d time.Duration)) {
	procs := runtime.GOMAXPROCS(0)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range procs {
		n := b.N / procs
		if g < b.N%procs {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := g % chunks
			r := benchRand{benchSeed + uint64(c)}
			for range n {
				i, d := heartbeat(r.next(), chunkSize)
				reset(c*chunkSize+i, d)
			}
		}()
	}
	wg.Wait()
}

// heapBytes returns the live heap after a full collection.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkLiveTimerMemory reports the heap bytes each live timer costs
// (B/timer): 1M scheduled Timers embedded in a caller's structs, against 1M
// time.AfterFunc timers referenced from the caller's structs. The timed loop
// is a trivial query; the metric is what counts.
func BenchmarkLiveTimerMemory(b *testing.B) {
	const n = 1_000_000
	type caller struct {
		t wheel.Timer
	}
	type stdCaller struct {
		t *time.Timer
	}
	b.Run("impl=wheel", func(b *testing.B) {
		w := newBenchWheel(b)
		defer w.Stop()
		before := heapBytes()
		cs := make([]caller, n)
		for i := range cs {
			if err := cs[i].t.Init(w, noop); err != nil {
				b.Fatal(err)
			}
			cs[i].t.Reset(time.Hour + time.Duration(i))
		}
		after := heapBytes()
		b.ReportAllocs()
		k := 0
		for b.Loop() {
			_ = cs[k%n].t.Pending()
			k++
		}
		b.ReportMetric(float64(after-before)/n, "B/timer")
		runtime.KeepAlive(cs)
	})
	b.Run("impl=std", func(b *testing.B) {
		before := heapBytes()
		cs := make([]stdCaller, n)
		for i := range cs {
			cs[i].t = time.AfterFunc(time.Hour+time.Duration(i), noop)
		}
		after := heapBytes()
		defer func() {
			for i := range cs {
				cs[i].t.Stop()
			}
		}()
		b.ReportAllocs()
		k := 0
		for b.Loop() {
			_ = cs[k%n].t
			k++
		}
		b.ReportMetric(float64(after-before)/n, "B/timer")
		runtime.KeepAlive(cs)
	})
}

// BenchmarkIdleWakeups counts real-time driver wake-ups per second
// (Stats.Wakeups over the wall time of the loop, about benchtime) with 1M
// timers pending an hour out. load=idle: nothing else happens. Under
// load=heartbeats, 100 followers each push their election timer to
// now+[150ms,300ms) every 100ms (a Reset per millisecond in total); nothing
// is due. The loop body only sleeps: the driver is what is measured.
func BenchmarkIdleWakeups(b *testing.B) {
	const n = 1_000_000
	b.Run("live=1m", func(b *testing.B) {
		settle()
		w := newBenchWheel(b)
		defer w.Stop()
		live := make([]wheel.Timer, n)
		for i := range live {
			if err := live[i].Init(w, noop); err != nil {
				b.Fatal(err)
			}
			live[i].Reset(time.Hour + time.Duration(i)*(time.Hour/n))
		}
		measure := func(b *testing.B) {
			w0, t0 := w.Stats().Wakeups, time.Now()
			b.ReportAllocs()
			for b.Loop() {
				time.Sleep(time.Millisecond)
			}
			b.ReportMetric(float64(w.Stats().Wakeups-w0)/time.Since(t0).Seconds(), "wakeups/s")
		}
		b.Run("load=idle", measure)
		b.Run("load=heartbeats", func(b *testing.B) {
			followers := make([]wheel.Timer, 100)
			for i := range followers {
				if err := followers[i].Init(w, noop); err != nil {
					b.Fatal(err)
				}
				followers[i].Reset(heartbeatMin)
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				tick := time.NewTicker(time.Millisecond)
				defer tick.Stop()
				r := benchRand{benchSeed}
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					case <-tick.C:
						_, d := heartbeat(r.next(), 1)
						followers[k%len(followers)].Reset(d)
					}
				}
			}()
			measure(b)
			close(stop)
			<-done
			for i := range followers {
				followers[i].Stop()
			}
		})
	})
}

// BenchmarkResetHeartbeat is the heartbeat pattern at 1M live timers where
// timers do expire: each op pushes a random timer (drawn with replacement,
// so some wait longer than 150ms) to now+[150ms, 300ms). fires/op reports
// how many expired per op; expired timers are re-armed by later ops, so the
// wheel fires and re-arms throughout.
func BenchmarkResetHeartbeat(b *testing.B) {
	benchResetPattern(b, heartbeatMin, heartbeatSpan)
}

// BenchmarkResetSteady is Reset at 1M live timers with 2–4s delays, in the
// fixed random order of BenchmarkReset: nothing expires during the run.
func BenchmarkResetSteady(b *testing.B) {
	benchResetPattern(b, 2*time.Second, 2*time.Second)
}

// benchResetPattern resets 1M live timers to now+[lo, lo+span): in a fixed
// permutation order when nothing should expire (lo >= 1s), else drawn at
// random.
func benchResetPattern(b *testing.B, lo, span time.Duration) {
	const n = 1_000_000
	random := lo < time.Second
	delay := func(x uint64) time.Duration { return lo + time.Duration((x&0xffffffff)*uint64(span)>>32) }
	order := heartbeatOrder(n)
	// loop is the timed loop; reset re-arms timer i d from now.
	loop := func(b *testing.B, r *benchRand, reset func(i int, d time.Duration)) {
		k := 0
		b.ReportAllocs()
		for b.Loop() {
			x := r.next()
			i := int(order[k])
			if random {
				i, _ = heartbeat(x, n)
			} else if k++; k == n {
				k = 0
			}
			reset(i, delay(x))
		}
	}
	b.Run("live=1m", func(b *testing.B) {
		b.Run("impl=wheel", func(b *testing.B) {
			settle()
			w := newBenchWheel(b)
			defer w.Stop()
			r := benchRand{benchSeed}
			ts := make([]wheel.Timer, n)
			for i := range ts {
				if err := ts[i].Init(w, noop); err != nil {
					b.Fatal(err)
				}
				ts[i].Reset(delay(r.next()))
			}
			fired := w.Stats().Fired
			loop(b, &r, func(i int, d time.Duration) { ts[i].Reset(d) })
			b.ReportMetric(float64(w.Stats().Fired-fired)/float64(b.N), "fires/op")
		})
		b.Run("impl=std", func(b *testing.B) {
			settle()
			var fired atomic.Int64
			count := func() { fired.Add(1) }
			r := benchRand{benchSeed}
			ts := make([]*time.Timer, n)
			for i := range ts {
				ts[i] = time.AfterFunc(delay(r.next()), count)
			}
			defer func() {
				for _, t := range ts {
					t.Stop()
				}
			}()
			before := fired.Load()
			loop(b, &r, func(i int, d time.Duration) { ts[i].Reset(d) })
			b.ReportMetric(float64(fired.Load()-before)/float64(b.N), "fires/op")
		})
	})
}

// BenchmarkFireThroughput schedules 1M one-shot timers due evenly over the
// next 100ms and waits until every one has fired; an op is one such round.
// fires/s is the timers over the wall time from the first schedule to the
// last fire (at least 100ms, so at most 10M/s).
func BenchmarkFireThroughput(b *testing.B) {
	const n = 1_000_000
	b.Run("timers=1m", func(b *testing.B) {
		b.Run("impl=wheel", func(b *testing.B) {
			settle()
			w := newBenchWheel(b)
			defer w.Stop()
			ts := make([]wheel.Timer, n)
			fireRounds(b, n, func(fire func()) func(int, time.Duration) {
				for i := range ts {
					if err := ts[i].Init(w, fire); err != nil {
						b.Fatal(err)
					}
				}
				return func(i int, d time.Duration) { ts[i].Reset(d) }
			})
		})
		b.Run("impl=std", func(b *testing.B) {
			settle()
			ts := make([]*time.Timer, n)
			fireRounds(b, n, func(fire func()) func(int, time.Duration) {
				for i := range ts {
					ts[i] = time.AfterFunc(time.Hour, fire)
					ts[i].Stop()
				}
				return func(i int, d time.Duration) { ts[i].Reset(d) }
			})
		})
	})
}

// fireRounds runs BenchmarkFireThroughput's rounds: setup binds n timers to
// fire and returns how to arm timer i d from now; each op arms all of them
// due evenly over 100ms and waits for the last fire.
func fireRounds(b *testing.B, n int, setup func(fire func()) func(i int, d time.Duration)) {
	const spread = 100 * time.Millisecond
	var left atomic.Int64
	done := make(chan struct{}, 1)
	arm := setup(func() {
		if left.Add(-1) == 0 {
			done <- struct{}{}
		}
	})
	var total time.Duration
	b.ReportAllocs()
	for b.Loop() {
		left.Store(int64(n))
		start := time.Now()
		for i := range n {
			arm(i, time.Duration(i)*(spread/time.Duration(n)))
		}
		<-done
		total += time.Since(start)
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "fires/s")
}
