package raftick_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/pebblestore"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// The bodies of these examples are the Go blocks of README.md, in order;
// TestREADMEBlocksAreExamples keeps the two the same.

// Timers on the process-wide real-time wheel: an embedded wheel.Timer
// pushed back by heartbeats, and a repeated.Timer drawing an election
// timeout in [150ms, 300ms) on every schedule.
func Example_timers() {
	w := wheel.Shared() // one driver goroutine for every timer of the process

	// Embed a wheel.Timer and reuse it: Init once; Reset and Stop never allocate.
	type follower struct{ election wheel.Timer }
	var f follower
	fired := make(chan struct{})
	if err := f.election.Init(w, func() { close(fired) }); err != nil {
		panic(err)
	}
	f.election.Reset(20 * time.Millisecond) // on every heartbeat: no lock when pushed later
	<-fired
	fmt.Println("election timeout")

	// A repeating, randomized election timer.
	timeouts := make(chan struct{}, 1)
	et, err := repeated.New(w, "election-n1", 150*time.Millisecond, func() {
		select { // a callback runs on the wheel's goroutine: never block it
		case timeouts <- struct{}{}:
		default:
		}
	}, repeated.WithJitter(repeated.Proportional(1))) // [150ms, 300ms)
	if err != nil {
		panic(err)
	}
	defer et.Destroy()
	if err := et.Start(); err != nil {
		panic(err)
	}
	if err := et.Reset(); err != nil { // a heartbeat arrived: draw a fresh timeout from now
		panic(err)
	}
	<-timeouts
	fmt.Println("campaign")
	// Output:
	// election timeout
	// campaign
}

// Three election nodes in real time on one wheel, connected by an
// in-memory network with a 1ms delay, elect a leader.
func Example_election() {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	net := election.NewMemNetwork(w, time.Millisecond) // or your Transport
	voters := []election.ID{1, 2, 3}
	var nodes []*election.Node
	for _, id := range voters {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, voters
		cfg.ElectionTimeout = 150 * time.Millisecond // randomized to [150ms, 300ms)
		cfg.Metrics = &metrics.BlackholeSink{}
		n, err := election.NewNode(cfg, w, net, election.NewMemoryStorage(), election.StaticLog{})
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
		defer n.Stop()
	}
	leader, err := nodes[0].WaitLeader(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("a leader among the voters:", leader >= 1 && leader <= 3)
	// Output:
	// a leader among the voters: true
}

// Three durable hosts carry 300 groups on one virtual wheel: each keeps
// its groups' terms and votes in a pebblestore, written in group commits
// before the messages that depend on them leave; idle groups hibernate
// and cost no timer work.
func Example_multiraft() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer v.Stop()
	dir, _ := os.MkdirTemp("", "raftick")
	defer os.RemoveAll(dir)
	net := multiraft.NewMemNetwork(v.Wheel, time.Millisecond)
	voters := []election.ID{1, 2, 3}
	var hosts []*multiraft.Host
	for _, id := range voters {
		st, err := pebblestore.Open(fmt.Sprintf("%s/%d", dir, id))
		if err != nil {
			panic(err)
		}
		defer st.Close() // after the host's Stop (deferred later, run first)
		cfg := multiraft.DefaultConfig()
		cfg.ID, cfg.Store = id, st
		h, err := multiraft.NewHost(cfg, v.Wheel, net.Transport())
		if err != nil {
			panic(err)
		}
		defer h.Stop() // stop what you start: the host's groups and goroutines
		net.Attach(h)
		hosts = append(hosts, h)
		for g := range multiraft.GroupID(300) {
			if err := h.AddGroup(multiraft.GroupConfig{ID: g, Voters: voters, Leader: voters[g%3]}); err != nil {
				panic(err)
			}
		}
	}
	v.AdvanceBy(5 * time.Second) // virtual time: instant and exact
	st, err := hosts[0].Status(7)
	if err != nil {
		panic(err)
	}
	fmt.Println("group 7's leader:", st.Status.Leader)
	fmt.Println("hibernating on host 1:", hosts[0].Stats().Hibernating)
	// Output:
	// group 7's leader: 2
	// hibernating on host 1: 300
}
