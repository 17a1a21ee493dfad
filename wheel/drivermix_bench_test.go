package wheel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/raftick/raftick/wheel"
)

// BenchmarkDriverMix runs the RaftMix workload of bench/scalemix (per
// group an election timer pushed later by a heartbeat every 50ms, a
// step-down timer firing every 75ms) on one goroutine that takes the
// driver's place, the wheel's clock moved forward a tick (1ms) per op
// instead of waited for: no sleeps and no wake-ups, so that ns/event (per heartbeat
// Reset or fire) measures the CPU of the fire, re-arm, lazy-extension and
// heartbeat paths alone, precisely enough to compare changes to them
// (scalemix's process CPU varies by ±10% from run to run on a shared
// machine).
//
// The timers are wheel.Timers, each followed by 160 bytes as a
// repeated.Timer would be, re-armed from their callbacks. (The same mix
// on repeated.Timers is bench/scalemix's: a test of the wheel imports
// nothing above it.)
func BenchmarkDriverMix(b *testing.B) {
	for _, groups := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("timers=wheel/groups=%d", groups), func(b *testing.B) {
			benchDriverMix(b, groups)
		})
	}
}

type paddedTimer struct {
	t   wheel.Timer
	pad [160]byte
}

func benchDriverMix(b *testing.B, groups int) {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	step, stop := wheel.DriveByHand(w)
	defer stop()
	const et, sd = 150 * time.Millisecond, 75 * time.Millisecond
	rng := rand.New(rand.NewPCG(1, 2))
	fires := 0
	election := make([]paddedTimer, groups)
	stepDown := make([]paddedTimer, groups)
	for i := range groups {
		e, s := &election[i].t, &stepDown[i].t
		if err := e.Init(w, func() {}); err != nil {
			b.Fatal(err)
		}
		e.SetMinReset(et)
		if err := s.Init(w, func() { fires++; s.Reset(sd) }); err != nil {
			b.Fatal(err)
		}
	}
	heartbeat := func(i int) { election[i].t.Reset(et + time.Duration(rng.Int64N(int64(et)))) }
	start := func(i int) { heartbeat(i); stepDown[i].t.Reset(sd) }
	// Start the groups spread over a step-down period, as scalemix does,
	// and run into the steady state.
	per := groups / 75
	for i := range groups {
		start(i)
		if i%per == per-1 {
			step()
		}
	}
	hb := 0
	beat := func() {
		for range groups / 50 {
			heartbeat(hb)
			if hb++; hb == groups {
				hb = 0
			}
		}
	}
	for range 1000 {
		beat()
		step()
	}
	fires = 0
	for b.Loop() {
		beat()
		step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fires+b.N*(groups/50)), "ns/event")
	b.ReportMetric(float64(fires)/float64(b.N), "fires/op")
}

// BenchmarkDriverPeriodic is the driver's per-fire constant alone: n
// timers that re-arm themselves 75ms ahead from their callbacks (the
// step-down cycle of DriverMix without its heartbeats and election
// timers), spread over the period, driven by hand a tick per op. ns/fire
// is the claim, the callback's call and Reset, and the re-bucketing of
// one fire.
func BenchmarkDriverPeriodic(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("timers=%d", n), func(b *testing.B) {
			w, err := wheel.New(wheel.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			step, stop := wheel.DriveByHand(w)
			defer stop()
			const period = 75 * time.Millisecond
			ts := make([]paddedTimer, n)
			fires := 0
			for i := range ts {
				t := &ts[i].t
				if err := t.Init(w, func() { fires++; t.Reset(period) }); err != nil {
					b.Fatal(err)
				}
			}
			per := n / 75
			for i := range ts {
				ts[i].t.Reset(period)
				if i%per == per-1 {
					step()
				}
			}
			for range 500 {
				step()
			}
			fires = 0
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fires), "ns/fire")
		})
	}
}
