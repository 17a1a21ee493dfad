package raftadapter_test

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/raftadapter"
	"github.com/raftick/raftick/wheel"
)

// Three election nodes talk over hashicorp/raft transports (in memory
// here; raft.NewTCPTransport in a server) through Bridges: pre-votes, votes,
// heartbeats and transfers travel as hashicorp's RPCs.
func ExampleBridge() {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	ids := []election.ID{1, 2, 3}
	trans := map[election.ID]*raft.InmemTransport{}
	for _, id := range ids {
		_, trans[id] = raft.NewInmemTransport(raft.ServerAddress(raftadapter.ServerIDOf(id)))
	}
	var nodes []*election.Node
	var bridges []*raftadapter.Bridge
	for _, id := range ids {
		bc := raftadapter.DefaultBridgeConfig()
		bc.ID, bc.Peers = id, map[election.ID]raft.ServerAddress{}
		for _, p := range ids {
			if p != id {
				bc.Peers[p] = trans[p].LocalAddr()
				trans[id].Connect(trans[p].LocalAddr(), trans[p])
			}
		}
		b, err := raftadapter.NewBridge(bc, trans[id])
		if err != nil {
			panic(err)
		}
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, ids
		cfg.ElectionTimeout = 100 * time.Millisecond
		n, err := election.NewNode(cfg, w, b, election.NewMemoryStorage(), election.StaticLog{})
		if err != nil {
			panic(err)
		}
		if err := b.Start(n); err != nil {
			panic(err)
		}
		nodes, bridges = append(nodes, n), append(bridges, b)
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

	for i, n := range nodes {
		n.Stop()
		_ = bridges[i].Close()
	}
	for _, t := range trans {
		_ = t.Close()
	}
	// Output:
	// nodes that know a leader: 3
}
