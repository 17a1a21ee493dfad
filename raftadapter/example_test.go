package raftadapter_test

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/raftadapter"
)

// Map raftick's timing policy onto a validated raft.Config, and see how a
// setting hashicorp/raft would reject is reported.
func ExampleTiming_RaftConfig() {
	t := raftadapter.DefaultTiming()
	t.ElectionTimeout = 150 * time.Millisecond // raftick's follower timeout
	t.VoteTimeout = 300 * time.Millisecond     // candidate round timeout
	t.LeaseRatio = 0.9

	c, err := t.RaftConfig("node-1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("HeartbeatTimeout:", c.HeartbeatTimeout)
	fmt.Println("ElectionTimeout:", c.ElectionTimeout)
	fmt.Println("LeaderLeaseTimeout:", c.LeaderLeaseTimeout)
	fmt.Println("PreVoteDisabled:", c.PreVoteDisabled)

	t.VoteTimeout = 100 * time.Millisecond
	_, err = t.RaftConfig("node-1", nil)
	fmt.Println(err)
	// Output:
	// HeartbeatTimeout: 150ms
	// ElectionTimeout: 300ms
	// LeaderLeaseTimeout: 135ms
	// PreVoteDisabled: false
	// raftadapter: Timing.VoteTimeout (100ms) maps to raft.Config.ElectionTimeout, which hashicorp/raft requires to be >= HeartbeatTimeout (Timing.ElectionTimeout, 150ms)
}
