package election_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// Three nodes on a virtual wheel, 150-300ms election timeouts and 1ms
// network delay, elect a leader. Virtual time makes the run exact.
func Example() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	net := election.NewMemNetwork(v.Wheel, time.Millisecond)
	rng := rand.New(rand.NewPCG(1, 2))
	voters := []election.ID{1, 2, 3}
	var nodes []*election.Node
	for _, id := range voters {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, voters
		cfg.ElectionTimeout = 150 * time.Millisecond // jitter: [150ms, 300ms)
		cfg.HeartbeatInterval = 50 * time.Millisecond
		cfg.Rand = rng
		cfg.Observer = func(e election.Event) {
			if e.Type == election.EventLeaderElected {
				fmt.Printf("node %d won term %d at %v\n", e.Node, e.Term, e.At.Round(time.Millisecond))
			}
		}
		n, err := election.NewNode(cfg, v.Wheel, net, election.NewMemoryStorage(), election.StaticLog{})
		if err != nil {
			panic(err)
		}
		net.Attach(n)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		if err := n.Start(); err != nil {
			panic(err)
		}
	}
	v.AdvanceTo(time.Second)
	for _, n := range nodes {
		st := n.Status()
		fmt.Printf("node %d: %v, term %d, leader %d\n", st.ID, st.Role, st.Term, st.Leader)
	}
	// Output:
	// node 1 won term 1 at 165ms
	// node 1: Leader, term 1, leader 1
	// node 2: Follower, term 1, leader 1
	// node 3: Follower, term 1, leader 1
}
