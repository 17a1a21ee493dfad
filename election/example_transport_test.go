package election_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// chanTransport is a hand-written Transport: each node has an inbox
// drained by a goroutine of its own. Send never blocks: a full inbox drops
// the message, which Raft tolerates.
type chanTransport struct {
	inbox map[election.ID]chan election.Message
	done  chan struct{}
}

func (t *chanTransport) Send(m election.Message) {
	select {
	case t.inbox[m.To] <- m:
	case <-t.done:
	default: // inbox full: drop
	}
}

// A three-node group in real time on a wheel of its own (wheel.Shared()
// in a server), over a transport written by hand: Send queues, and a
// goroutine per node hands each message to Node.Step.
func Example_customTransport() {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	ids := []election.ID{1, 2, 3}
	tr := &chanTransport{inbox: map[election.ID]chan election.Message{}, done: make(chan struct{})}
	for _, id := range ids {
		tr.inbox[id] = make(chan election.Message, 64)
	}
	var nodes []*election.Node
	var wg sync.WaitGroup
	for _, id := range ids {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, ids
		cfg.ElectionTimeout = 50 * time.Millisecond // heartbeats every 5ms
		n, err := election.NewNode(cfg, w, tr, election.NewMemoryStorage(), election.StaticLog{})
		if err != nil {
			panic(err)
		}
		nodes = append(nodes, n)
		wg.Go(func() {
			for {
				select {
				case m := <-tr.inbox[id]:
					n.Step(m)
				case <-tr.done:
					return
				}
			}
		})
	}
	for _, n := range nodes {
		if err := n.Start(); err != nil {
			panic(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	known := 0
	for _, n := range nodes {
		if _, err := n.WaitLeader(ctx); err == nil {
			known++
		}
	}
	fmt.Println("nodes that know a leader:", known)

	for _, n := range nodes {
		n.Stop()
	}
	close(tr.done)
	wg.Wait()
	// Output:
	// nodes that know a leader: 3
}
