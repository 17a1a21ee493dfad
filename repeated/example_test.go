package repeated_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// An election timer as a Raft follower uses it: a base timeout of 150ms
// randomized to [150ms, 300ms), pushed back by every heartbeat, firing
// once the leader goes quiet. On a virtual wheel the run is exact and
// reproducible from the seed.
func Example_electionTimer() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer v.Stop()

	const et = 150 * time.Millisecond
	var election *repeated.Timer
	election, err = repeated.New(v.Wheel, "election-n1", et, func() {
		fmt.Printf("%v: election timeout, campaign\n", v.Now().Round(time.Millisecond))
	},
		repeated.WithJitter(repeated.Proportional(1)),
		repeated.WithRand(rand.New(rand.NewPCG(1, 2))),
		repeated.WithOnDestroy(func() { fmt.Println("destroyed") }),
	)
	if err != nil {
		panic(err)
	}
	election.Start()

	// A leader's heartbeats arrive every 50ms for half a second; each one
	// pushes the election deadline back, so the timer never fires.
	for at := 50 * time.Millisecond; at <= 500*time.Millisecond; at += 50 * time.Millisecond {
		v.AdvanceTo(at)
		election.Reset()
	}
	d, _ := election.Deadline()
	fmt.Println("deadline after last heartbeat is within [ET, 2ET):",
		d-v.Now() >= et && d-v.Now() < 2*et)

	// The leader goes quiet: the timer fires, then keeps firing every
	// freshly randomized timeout until it is stopped.
	v.AdvanceTo(time.Second)
	election.Stop()
	v.AdvanceTo(2 * time.Second) // nothing fires while stopped
	election.Destroy()

	// Output:
	// deadline after last heartbeat is within [ET, 2ET): true
	// 749ms: election timeout, campaign
	// 966ms: election timeout, campaign
	// destroyed
}

// Many groups' election timers kept in one slice (Init, no allocation per
// timer), each with its own reproducible jitter (WithSeed): a heartbeat to
// group 1 every 100ms keeps its timer from firing; groups 0 and 2 time out
// in [150ms, 300ms).
func ExampleTimer_Init() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer v.Stop()

	type group struct {
		id       int
		election repeated.Timer
	}
	groups := make([]group, 3)
	for i := range groups {
		g := &groups[i]
		g.id = i
		err := g.election.Init(v.Wheel, fmt.Sprintf("election-g%d", i), 150*time.Millisecond,
			func() {
				fmt.Printf("%v: group %d: election timeout\n", v.Now().Round(time.Millisecond), g.id)
				g.election.Stop()
			},
			repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(uint64(i), 7))
		if err != nil {
			panic(err)
		}
		if err := g.election.Start(); err != nil {
			panic(err)
		}
	}
	for range 5 {
		v.AdvanceBy(100 * time.Millisecond)
		groups[1].election.Reset() // the heartbeat
	}
	// Output:
	// 154ms: group 2: election timeout
	// 224ms: group 0: election timeout
}
