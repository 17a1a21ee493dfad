package wheel_test

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/wheel"
)

// A virtual wheel fires timers at their exact deadlines, in order, when the
// caller moves time.
func ExampleVirtual() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	for _, d := range []time.Duration{300 * time.Millisecond, 150 * time.Millisecond, 150500 * time.Microsecond} {
		v.AfterFunc(d, func() { fmt.Println("fired at", v.Now()) })
	}
	fmt.Println("fired", v.AdvanceTo(200*time.Millisecond), "by", v.Now())
	next, _ := v.NextDeadline()
	fmt.Println("next deadline", next)
	v.RunUntilIdle()
	// Output:
	// fired at 150ms
	// fired at 150.5ms
	// fired 2 by 200ms
	// next deadline 300ms
	// fired at 300ms
}

// An election-style timer embedded in a struct: every heartbeat pushes the
// deadline forward; only silence lets it fire.
func ExampleTimer_Reset() {
	v, _ := wheel.NewVirtual(wheel.DefaultConfig())
	type follower struct {
		election wheel.Timer
	}
	var f follower
	f.election.Init(v.Wheel, func() { fmt.Println("election timeout at", v.Now()) })
	f.election.Reset(150 * time.Millisecond)
	for range 3 { // heartbeats every 50ms
		v.AdvanceBy(50 * time.Millisecond)
		f.election.Reset(150 * time.Millisecond)
	}
	v.RunUntilIdle() // the leader went quiet
	// Output:
	// election timeout at 300ms
}

// Stop reports whether it prevented the callback; Wheel.Stop returns the
// timers that never fired.
func ExampleWheel_Stop() {
	v, _ := wheel.NewVirtual(wheel.DefaultConfig())
	a, _ := v.AfterFunc(time.Second, func() {})
	v.AfterFunc(time.Hour, func() {})
	fmt.Println(a.Stop(), a.Stop())
	left := v.Stop()
	fmt.Println(len(left), v.Stop() == nil)
	_, err := v.AfterFunc(time.Second, func() {})
	fmt.Println(err)
	// Output:
	// true false
	// 1 true
	// wheel: stopped
}

// A periodic timer bound with InitNext: its callback returns the delay of
// its next fire, and is told of its own panic instead of the wheel logging
// it.
func ExampleTimer_InitNext() {
	v, _ := wheel.NewVirtual(wheel.DefaultConfig())
	var check wheel.Timer
	rounds := 0
	check.InitNext(v.Wheel, func(t *wheel.Timer, err error) time.Duration {
		if err != nil {
			fmt.Println("stopped:", err)
			return 0
		}
		rounds++
		fmt.Println("quorum check", rounds, "at", v.Now())
		if rounds == 3 {
			panic("lost the quorum")
		}
		return 75 * time.Millisecond
	})
	check.Reset(75 * time.Millisecond)
	v.RunUntilIdle()
	// Output:
	// quorum check 1 at 75ms
	// quorum check 2 at 150ms
	// quorum check 3 at 225ms
	// stopped: wheel: timer callback panicked: lost the quorum
}
