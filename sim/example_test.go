package sim_test

import (
	"context"
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
	c, err := sim.NewCluster(sim.ClusterConfig{
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

// The failover experiment of the Raft paper's Figure 16 with the
// calibrated LAN model, 200 trials on all cores.
func ExampleRun() {
	s := sim.LAN()
	s.TimeoutMin, s.TimeoutMax = 150*time.Millisecond, 200*time.Millisecond
	f := sim.Failover{Setup: s}
	res, err := sim.Run(context.Background(), []sim.Job{sim.JobOf(f, 200)}, sim.RunOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	sum := sim.Summarize(f.Params(), res[0])
	fmt.Println(sum.Label, sum.Trials, sum.Min > 75*time.Millisecond, sum.P50 < 200*time.Millisecond)
	// Output:
	// 150-200ms 200 true true
}

// Searching for the timeouts with the best median failover that start at
// most 10 unnecessary elections per server and hour, when one-way latency
// is log-normal with a 5ms median.
func ExampleTune() {
	s := sim.LAN()
	s.Latency = sim.LogNormal(5*time.Millisecond, 0.8)
	r, err := sim.Tune(context.Background(), sim.TuneConfig{
		Base:                    s,
		Mins:                    []time.Duration{30 * time.Millisecond, 150 * time.Millisecond},
		Spreads:                 []float64{1},
		Objective:               "p50",
		MaxElectionsPerNodeHour: 10,
		FailoverTrials:          100,
		StableTrials:            2,
		StableFor:               5 * time.Minute,
	}, sim.RunOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, c := range r.Candidates {
		fmt.Println(sim.RangeLabel(c.TimeoutMin, c.TimeoutMax), "feasible:", c.Feasible)
	}
	best := r.Candidates[r.Best]
	fmt.Println("best:", sim.RangeLabel(best.TimeoutMin, best.TimeoutMax))
	// Output:
	// 30-60ms feasible: false
	// 150-300ms feasible: true
	// best: 150-300ms
}
