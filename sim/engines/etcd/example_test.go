package etcd_test

import (
	"context"
	"fmt"
	"time"

	"github.com/raftick/raftick/sim"
	etcdengine "github.com/raftick/raftick/sim/engines/etcd"
	"github.com/raftick/raftick/sim/experiment"
)

// The failover experiment of the Raft paper's Figure 16 on five etcd
// nodes with etcd's server defaults: each trial is a function of its seed
// and index.
func ExampleFailover() {
	s := experiment.EtcdModel()
	s.Latency = sim.Uniform(0, 2*time.Millisecond)
	f := etcdengine.Failover{Setup: s}
	for i := range 3 {
		o, err := f.Trial(context.Background(), i, sim.TrialRand(42, i), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("trial %d: %v, %d term(s), %d messages, ok=%v\n", i, o.Time.Round(time.Millisecond), o.Terms, o.Messages, o.OK)
	}
	// Output:
	// trial 0: 1.158s, 1 term(s), 24 messages, ok=true
	// trial 1: 1.158s, 1 term(s), 27 messages, ok=true
	// trial 2: 1.283s, 1 term(s), 28 messages, ok=true
}
