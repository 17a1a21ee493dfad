package etcdadapter_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/wheel"
)

// Three etcd raft nodes on a virtual wheel: a transport that delivers
// every message 1ms later through the wheel, an observer that prints the
// elections, and a seeded source that makes the run reproducible.
func ExampleNode() {
	w, _ := wheel.NewVirtual(wheel.DefaultConfig())
	defer w.Stop()
	rng := rand.New(rand.NewPCG(1, 2))

	nodes := map[uint64]*etcdadapter.Node{}
	send := etcdadapter.TransportFunc(func(m *pb.Message) {
		_, _ = w.AfterFunc(time.Millisecond, func() { _ = nodes[m.GetTo()].Step(m) })
	})
	observe := func(e election.Event) {
		switch e.Type {
		case election.EventElectionStart, election.EventLeaderElected, election.EventLeaderKnown:
			fmt.Printf("%v n%d %s\n", e.At, e.Node, e.Text())
		}
	}
	for id := uint64(1); id <= 3; id++ {
		cfg := etcdadapter.DefaultConfig() // etcd's: 100ms ticks, ElectionTick 10, HeartbeatTick 1, PreVote, CheckQuorum
		cfg.ID, cfg.Peers, cfg.Rand, cfg.Observer = id, []uint64{1, 2, 3}, rng, observe
		n, err := etcdadapter.NewNode(cfg, w.Wheel, send)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer n.Close()
		nodes[id] = n
	}
	for id := uint64(1); id <= 3; id++ {
		_ = nodes[id].Start(time.Duration(id) * 10 * time.Millisecond) // tick phases 10, 20, 30ms
	}
	w.AdvanceTo(3 * time.Second)
	for id := uint64(1); id <= 3; id++ {
		st := nodes[id].Status()
		fmt.Printf("n%d: %v in term %d, leader n%d\n", id, st.Role, st.Term, st.Leader)
	}
	// Output:
	// 1.52s n2 ElectionStart t1 PreCandidate prevote (election timeout)
	// 1.522s n2 ElectionStart t1 Candidate (pre-vote won)
	// 1.524s n2 LeaderElected t1 Leader leader=2
	// 1.525s n1 LeaderKnown t1 Follower leader=2 peer=2
	// 1.525s n3 LeaderKnown t1 Follower leader=2 peer=2
	// n1: Follower in term 1, leader n2
	// n2: Leader in term 1, leader n2
	// n3: Follower in term 1, leader n2
}
