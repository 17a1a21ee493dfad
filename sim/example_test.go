package sim_test

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// A three-server cluster with 1ms links and a 2ms disk: n1 campaigns,
// each voter persists the new term and its vote (two writes) before it
// answers, and the followers accept n1's first heartbeat (2 vote requests,
// 2 votes, 2 heartbeats and the 2 answers to them).
func ExampleCluster() {
	ec := election.DefaultConfig()
	ec.ElectionTimeout = 150 * time.Millisecond
	ec.HeartbeatInterval = 50 * time.Millisecond
	ec.PreVote, ec.CheckQuorum = false, false
	c, err := sim.NewCluster(sim.Config{
		Nodes:    3,
		Election: ec,
		Network:  sim.Network{Latency: sim.Fixed(time.Millisecond), Disk: sim.Fixed(2 * time.Millisecond)},
		Rand:     sim.TrialRand(1, 0),
		Observer: func(e election.Event) {
			if e.Type == election.EventLeaderElected || e.Type == election.EventLeaderKnown {
				fmt.Printf("%v n%d %v term %d\n", e.At, e.Node, e.Type, e.Term)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.Start()
	_ = c.Node(1).Campaign()
	c.Run(time.Second, func() bool { return c.Node(2).Status().Leader == 1 && c.Node(3).Status().Leader == 1 })
	fmt.Println("messages sent:", c.Stats().Sent)
	// Output:
	// 6ms n1 LeaderElected term 1
	// 7ms n2 LeaderKnown term 1
	// 7ms n3 LeaderKnown term 1
	// messages sent: 8
}
