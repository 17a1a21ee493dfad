package multiraft_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// Three hosts run 1000 groups on one virtual wheel. The groups start
// hibernating with balanced leaders; one group is active, the rest cost
// no timer work. Host 3 crashes: host 1, the first voter alive of the
// groups it led, wakes them (at most Config.FailoverInFlight at a time)
// and each campaigns at once.
func Example() {
	v, _ := wheel.NewVirtual(wheel.DefaultConfig())
	defer v.Stop()
	net := multiraft.NewMemNetwork(v.Wheel, time.Millisecond)
	voters := []election.ID{1, 2, 3}
	hosts := map[election.ID]*multiraft.Host{}
	for _, id := range voters {
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		cfg.Rand = rand.New(rand.NewPCG(uint64(id), 1))
		h, _ := multiraft.NewHost(cfg, v.Wheel, net.Transport())
		net.Attach(h)
		hosts[id] = h
		for g := range 1000 {
			_ = h.AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: voters,
				Storage: election.NewMemoryStorage(), Leader: voters[g%3]})
		}
	}
	_ = hosts[1].Touch(0) // group 0 is busy
	v.AdvanceBy(500 * time.Millisecond)
	fmt.Println("timers pending:", v.Stats().Pending)

	hosts[3].Stop()
	net.Detach(3)
	v.AdvanceBy(5 * time.Second)
	led := map[election.ID]int{}
	for g := range 1000 {
		st, _ := hosts[1].Status(multiraft.GroupID(g))
		led[st.Status.Leader]++
	}
	s := hosts[1].Stats()
	fmt.Println("woken by liveness on host 1:", s.LivenessWakes)
	fmt.Println("leaders:", led)
	fmt.Println("asleep on host 1:", s.Hibernating)
	// Output:
	// timers pending: 20
	// woken by liveness on host 1: 333
	// leaders: map[1:667 2:333]
	// asleep on host 1: 1000
}
