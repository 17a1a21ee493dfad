package wheel_test

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

func TestEmptyVirtual(t *testing.T) {
	v := newVirtual(t, nil)
	require.Zero(t, v.Now())
	_, ok := v.NextDeadline()
	require.False(t, ok)
	require.Equal(t, 0, v.AdvanceToNext())
	require.Zero(t, v.Now(), "AdvanceToNext on an idle wheel does not move the clock")
	require.Equal(t, 0, v.RunUntilIdle())
	require.Zero(t, v.Now())
	require.Equal(t, 0, v.AdvanceBy(-time.Second))
	require.Zero(t, v.Now())
	require.Equal(t, 0, v.AdvanceTo(5*ms))
	require.Equal(t, 5*ms, v.Now())
	require.Equal(t, 0, v.AdvanceBy(time.Hour))
	require.Equal(t, time.Hour+5*ms, v.Now())
	requireStatsAddUp(t, v.Wheel)
}

func TestAdvanceToPast(t *testing.T) {
	v := newVirtual(t, nil)
	r := &recorder{v: v}
	require.Equal(t, 0, v.AdvanceTo(10*ms))
	_, err := v.AfterFunc(2*ms, r.fn("later"))
	require.NoError(t, err)
	require.Equal(t, 0, v.AdvanceTo(5*ms))
	require.Equal(t, 10*ms, v.Now(), "the clock does not move back")
	_, err = v.AfterFunc(0, r.fn("now"))
	require.NoError(t, err)
	require.Equal(t, 1, v.AdvanceTo(0), "an advance into the past fires what is due now")
	require.Equal(t, 10*ms, v.Now())
	require.Equal(t, 0, v.AdvanceTo(math.MinInt64))
	require.Equal(t, []string{"now@10ms"}, r.fires)
	require.Equal(t, 10*ms, v.Now())
}

// Callbacks that schedule timers due at their own instant see them fire in
// the same advance, after the timers already due then, in schedule order.
func TestSameInstantCallbacks(t *testing.T) {
	for _, advance := range []struct {
		name string
		f    func(v *wheel.Virtual) int
	}{
		{"AdvanceTo", func(v *wheel.Virtual) int { return v.AdvanceTo(5 * ms) }},
		{"AdvanceBy", func(v *wheel.Virtual) int { return v.AdvanceBy(5 * ms) }},
		{"AdvanceToNext", func(v *wheel.Virtual) int { return v.AdvanceToNext() }},
	} {
		t.Run(advance.name, func(t *testing.T) {
			v := newVirtual(t, nil)
			r := &recorder{v: v}
			_, err := v.AfterFunc(5*ms, func() {
				r.fn("a")()
				for _, x := range []struct {
					name string
					d    time.Duration
				}{{"x", 0}, {"y", -1}, {"late", 1}, {"z", 0}} {
					_, err := v.AfterFunc(x.d, func() {
						r.fn(x.name)()
						if x.name == "z" {
							_, err := v.AfterFunc(0, r.fn("z2"))
							require.NoError(t, err)
						}
					})
					require.NoError(t, err)
				}
			})
			require.NoError(t, err)
			_, err = v.AfterFunc(5*ms, r.fn("b"))
			require.NoError(t, err)
			_, err = v.AfterFunc(5*ms+1, r.fn("next ns"))
			require.NoError(t, err)

			require.Equal(t, 6, advance.f(v))
			require.Equal(t, []string{"a@5ms", "b@5ms", "x@5ms", "y@5ms", "z@5ms", "z2@5ms"}, r.fires)
			require.Equal(t, 5*ms, v.Now())
			require.Equal(t, 2, v.RunUntilIdle())
			require.Equal(t, []string{"next ns@5.000001ms", "late@5.000001ms"}, r.fires[6:])
		})
	}
}

// Now() inside a callback is the timer's exact deadline, not its tick.
func TestNowInCallbackIsExactDeadline(t *testing.T) {
	for _, tick := range []time.Duration{1, 7 * ms, time.Hour} {
		v := newVirtual(t, func(c *wheel.Config) { c.Tick = tick })
		var got []time.Duration
		for _, d := range []time.Duration{1500 * time.Microsecond, 3, 10*ms + 1} {
			_, err := v.AfterFunc(d, func() { got = append(got, v.Now()) })
			require.NoError(t, err)
		}
		require.Equal(t, 3, v.AdvanceTo(2*time.Hour))
		require.Equal(t, []time.Duration{3, 1500 * time.Microsecond, 10*ms + 1}, got, "tick %v", tick)
	}
}

// Timers of a virtual wheel may be used from any goroutine while another
// advances time; every schedule still ends in exactly one fire or Stop.
func TestVirtualConcurrentUse(t *testing.T) {
	v := newVirtual(t, nil)
	const n, goroutines, ops = 16, 4, 2000
	timers := make([]wheel.Timer, n)
	var starts, fires, stops [n]atomic.Int64
	for i := range timers {
		require.NoError(t, timers[i].Init(v.Wheel, func() { fires[i].Add(1) }))
	}
	stop := make(chan struct{})
	advanced := make(chan int)
	go func() {
		k := 0
		for {
			select {
			case <-stop:
				advanced <- k
				return
			default:
				v.AdvanceBy(100 * time.Microsecond)
				k++
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			x := uint64(g)*0x9e3779b97f4a7c15 + 1
			for range ops {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				i := int(x % n)
				if x>>60 < 5 {
					if timers[i].Stop() {
						stops[i].Add(1)
					}
				} else if !timers[i].Reset(time.Duration(x>>40%2000) * time.Microsecond) {
					starts[i].Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	require.Positive(t, <-advanced)
	v.RunUntilIdle()
	var total int64
	for i := range timers {
		require.Equal(t, starts[i].Load(), fires[i].Load()+stops[i].Load(), "timer %d", i)
		total += starts[i].Load()
	}
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, total, s.Scheduled)
	require.Zero(t, s.Pending)
}

// A callback that advances its own virtual wheel would wait forever for the
// advance that runs it; it panics with ErrOverlappingAdvance instead, as
// does an advance from another goroutine while one is under way, and an
// advance from a callback that a synchronous Executor runs on another
// goroutine (which the re-entry check, a search of the calling goroutine's
// stack, used to miss: that advance hung).
func TestVirtualReentrantAdvancePanics(t *testing.T) {
	advances := map[string]func(v *wheel.Virtual){
		"AdvanceTo":     func(v *wheel.Virtual) { v.AdvanceTo(v.Now() + ms) },
		"AdvanceBy":     func(v *wheel.Virtual) { v.AdvanceBy(ms) },
		"AdvanceToNext": func(v *wheel.Virtual) { v.AdvanceToNext() },
		"RunUntilIdle":  func(v *wheel.Virtual) { v.RunUntilIdle() },
	}
	// offGoroutine is a synchronous Executor that runs each callback on a
	// goroutine of its own and waits for it.
	offGoroutine := func(task wheel.Task) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			task.Run()
		}()
		<-done
	}
	for name, advance := range advances {
		for _, exec := range []struct {
			name string
			e    wheel.Executor
		}{{"inline", nil}, {"executor on another goroutine", offGoroutine}} {
			t.Run(name+"/"+exec.name, func(t *testing.T) {
				cfg := wheel.DefaultConfig()
				cfg.Executor = exec.e
				cfg.Logger = hclog.NewNullLogger()
				v, err := wheel.NewVirtual(cfg)
				require.NoError(t, err)
				defer v.Stop()
				var got any
				_, err = v.AfterFunc(ms, func() {
					defer func() { got = recover() }()
					advance(v)
				})
				require.NoError(t, err)
				_, err = v.AfterFunc(5*ms, func() {})
				require.NoError(t, err)
				require.Equal(t, 1, v.AdvanceTo(2*ms))
				require.NotNil(t, got, "no panic")
				require.ErrorIs(t, got.(error), wheel.ErrOverlappingAdvance)
				require.Equal(t, 1, v.AdvanceTo(10*ms), "the wheel still works")
			})
		}
	}
	t.Run("other goroutine is refused", func(t *testing.T) {
		v := newVirtual(t, nil)
		entered, release := make(chan struct{}), make(chan struct{})
		_, err := v.AfterFunc(ms, func() { close(entered); <-release })
		require.NoError(t, err)
		_, err = v.AfterFunc(3*ms, func() {})
		require.NoError(t, err)
		first := make(chan int)
		go func() { first <- v.AdvanceTo(2 * ms) }()
		<-entered
		require.PanicsWithError(t, wheel.ErrOverlappingAdvance.Error(), func() { v.AdvanceTo(4 * ms) })
		close(release)
		require.Equal(t, 1, <-first)
		require.Equal(t, 1, v.AdvanceTo(4*ms), "advancing works again once the first returned")
	})
}
