package experiment_test

import (
	"context"
	"fmt"
	"time"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// The failover experiment of the Raft paper's Figure 16 with the
// calibrated LAN model, 200 trials on all cores.
func ExampleRun() {
	s := experiment.PaperModel()
	s.TimeoutMin, s.TimeoutMax = 150*time.Millisecond, 200*time.Millisecond
	rs, err := experiment.Run(context.Background(), []experiment.Experiment{experiment.Failover{Setup: s}}, []int{200}, sim.RunOptions{Seed: 1})
	if err != nil {
		panic(err)
	}
	sum := rs[0]
	fmt.Println(sum.Label, sum.Trials, sum.Min > 75*time.Millisecond, sum.P50 < 200*time.Millisecond)
	// Output:
	// 150-200ms 200 true true
}

// Searching for the timeouts with the best median failover that start at
// most 10 unnecessary elections per server and hour, when one-way latency
// is log-normal with a 5ms median.
func ExampleTune() {
	s := experiment.PaperModel()
	s.Latency = sim.LogNormal(5*time.Millisecond, 0.8)
	r, err := experiment.Tune(context.Background(), experiment.TuneConfig{
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
		fmt.Println(experiment.RangeLabel(c.TimeoutMin, c.TimeoutMax), "feasible:", c.Feasible)
	}
	best := r.Candidates[r.Best]
	fmt.Println("best:", experiment.RangeLabel(best.TimeoutMin, best.TimeoutMax))
	// Output:
	// 30-60ms feasible: false
	// 150-300ms feasible: true
	// best: 150-300ms
}
