package election_test

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// benchSizes are the group counts of the heartbeat benchmarks.
var benchSizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"100k", 100_000}}

// benchET is the election timeout of the heartbeat benchmarks: long
// enough that no follower times out while the loop visits the others on
// a loaded machine, so that every step is a heartbeat into a follower.
const benchET = time.Second

// roundRobin runs step(i) for i = 0, 1, ..., n-1, 0, ... until b is done.
func roundRobin(b *testing.B, n int, step func(i int)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		step(i)
		if i++; i == n {
			i = 0
		}
	}
}

// benchWheel returns a real-time wheel stopped when b ends.
func benchWheel(b *testing.B) *wheel.Wheel {
	w, err := wheel.New(wheel.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Stop() })
	return w
}

// benchNodes makes n started nodes with ID id of the group {1, 2, 3} on
// w, with DefaultConfig at benchET, metrics off and a transport that drops
// everything; edit changes each config.
func benchNodes(b *testing.B, w *wheel.Wheel, n int, id election.ID, edit func(*election.Config)) []*election.Node {
	nodes := make([]*election.Node, n)
	drop := election.TransportFunc(func(election.Message) {})
	for i := range nodes {
		cfg := election.DefaultConfig()
		cfg.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
		cfg.ID, cfg.Voters = id, []election.ID{1, 2, 3}
		cfg.ElectionTimeout = benchET
		cfg.Metrics = &metrics.BlackholeSink{}
		cfg.Rand = rand.New(rand.NewPCG(uint64(i), 1))
		if edit != nil {
			edit(&cfg)
		}
		nd, err := election.NewNode(cfg, w, drop, election.NewMemoryStorage(), election.StaticLog{})
		if err != nil {
			b.Fatal(err)
		}
		if err := nd.Start(); err != nil {
			b.Fatal(err)
		}
		nodes[i] = nd
	}
	b.Cleanup(func() {
		for _, nd := range nodes {
			nd.Stop()
		}
	})
	return nodes
}

// etcdNodes makes n etcd raft RawNodes with ID id of the group {1, 2, 3},
// with CheckQuorum and PreVote, an election timeout of 10 ticks and a
// heartbeat every tick.
func etcdNodes(b *testing.B, n int, id uint64) []*raft.RawNode {
	logger := &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	nodes := make([]*raft.RawNode, n)
	for i := range nodes {
		st := raft.NewMemoryStorage()
		snap := pb.EnsureSnapshot(nil)
		snap.Metadata.Index = new(uint64(1))
		snap.Metadata.Term = new(uint64(1))
		snap.Metadata.ConfState.Voters = []uint64{1, 2, 3}
		if err := st.ApplySnapshot(snap); err != nil {
			b.Fatal(err)
		}
		rn, err := raft.NewRawNode(&raft.Config{
			ID: id, ElectionTick: 10, HeartbeatTick: 1, Storage: st,
			MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
			CheckQuorum: true, PreVote: true, Logger: logger,
		})
		if err != nil {
			b.Fatal(err)
		}
		nodes[i] = rn
	}
	return nodes
}

// etcdStep steps m into rn and handles the Ready it causes, as a program
// driving a RawNode does (its messages are dropped).
func etcdStep(rn *raft.RawNode, m *pb.Message) {
	_ = rn.Step(m)
	for rn.HasReady() {
		rn.Advance(rn.Ready())
	}
}

// lockFree configures a node as a multi-raft host does: heartbeats and
// answers taken lock-free (Config.ExternalContact), leaders driven by the
// caller's tick.
func lockFree(c *election.Config) {
	c.Detection, c.ExternalContact = election.ContactDeadline, true
	c.ExternalHeartbeat, c.ExternalCheckQuorum = true, true
}

// BenchmarkFollowerHeartbeat is the cost of one heartbeat into a follower,
// the hot path of a process hosting many groups: with 1k and 100k
// followers on one real-time wheel, visited round robin.
//   - impl=election: Node.Step of a MsgHeartbeat (the follower re-arms its
//     election timer and queues its answer);
//   - impl=lockfree: Node.TryHeartbeat of the same heartbeat, with
//     Config.ExternalContact (a multi-raft host's path; the caller sends
//     the answer);
//   - impl=repeated: the bare repeated.Timer.Reset of an election timer
//     (timers from repeated.New), what the timer alone costs;
//   - impl=etcd: go.etcd.io/raft/v3 RawNode.Step of the same heartbeat
//     plus its Ready and Advance, what users would run instead.
func BenchmarkFollowerHeartbeat(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%s/impl=election", size.name), func(b *testing.B) {
			nodes := benchNodes(b, benchWheel(b), size.n, 2, nil)
			hb := election.Message{Type: election.MsgHeartbeat, From: 1, To: 2, Term: 1, Sent: 1}
			for _, nd := range nodes {
				nd.Step(hb) // follower of 1 in term 1
			}
			roundRobin(b, size.n, func(i int) { nodes[i].Step(hb) })
		})
		b.Run(fmt.Sprintf("nodes=%s/impl=lockfree", size.name), func(b *testing.B) {
			w := benchWheel(b)
			nodes := benchNodes(b, w, size.n, 2, lockFree)
			hb := election.Message{Type: election.MsgHeartbeat, From: 1, To: 2, Term: 1, Sent: 1}
			for _, nd := range nodes {
				nd.Step(hb) // follower of 1 in term 1 (an event)
				nd.Step(hb) // answered at once: the gate opens
			}
			now := w.Now()
			roundRobin(b, size.n, func(i int) {
				if !nodes[i].TryHeartbeat(1, 1, now) {
					b.Fatal("declined")
				}
			})
		})
		b.Run(fmt.Sprintf("nodes=%s/impl=repeated", size.name), func(b *testing.B) {
			w := benchWheel(b)
			timers := make([]*repeated.Timer, size.n)
			for i := range timers {
				t, err := repeated.New(w, "election", benchET, func() {},
					repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(uint64(i), 1))
				if err != nil {
					b.Fatal(err)
				}
				if err := t.Start(); err != nil {
					b.Fatal(err)
				}
				timers[i] = t
			}
			b.Cleanup(func() {
				for _, t := range timers {
					t.Destroy()
				}
			})
			roundRobin(b, size.n, func(i int) { _ = timers[i].Reset() })
		})
		b.Run(fmt.Sprintf("nodes=%s/impl=etcd", size.name), func(b *testing.B) {
			nodes := etcdNodes(b, size.n, 2)
			hb := &pb.Message{Type: pb.MsgHeartbeat.Enum(), From: new(uint64(1)), To: new(uint64(2)), Term: new(uint64(1)), Commit: new(uint64(1))}
			for _, rn := range nodes {
				etcdStep(rn, hb)
			}
			roundRobin(b, size.n, func(i int) { etcdStep(nodes[i], hb) })
		})
	}
}

// BenchmarkLeaderHeartbeatResp is the cost of one heartbeat answer into a
// leader with CheckQuorum, with 1k and 100k leaders visited round robin,
// the answers coming from both followers in turn.
//   - impl=election: Node.Step of a MsgHeartbeatResp, leaders on one
//     real-time wheel heartbeating through BroadcastHeartbeat
//     (Config.ExternalHeartbeat, as a multi-raft host drives them), so
//     that no heartbeat timer runs in the background;
//   - impl=lockfree: Node.TryHeartbeatResp of the same answer, with
//     Config.ExternalContact (a multi-raft host's path);
//   - impl=etcd: RawNode.Step of a MsgHeartbeatResp plus its Ready and
//     Advance.
func BenchmarkLeaderHeartbeatResp(b *testing.B) {
	leaders := func(b *testing.B, w *wheel.Wheel, n int, edit func(*election.Config)) []*election.Node {
		nodes := benchNodes(b, w, n, 1, edit)
		for _, nd := range nodes {
			if err := nd.Campaign(); err != nil {
				b.Fatal(err)
			}
			nd.Step(election.Message{Type: election.MsgPreVoteResp, From: 2, To: 1, Term: 1, Granted: true})
			nd.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true})
			if !nd.Leading() {
				b.Fatal("not leading")
			}
		}
		return nodes
	}
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%s/impl=election", size.name), func(b *testing.B) {
			nodes := leaders(b, benchWheel(b), size.n, func(c *election.Config) { c.ExternalHeartbeat = true })
			resps := [2]election.Message{
				{Type: election.MsgHeartbeatResp, From: 2, To: 1, Term: 1, Granted: true, Sent: 1},
				{Type: election.MsgHeartbeatResp, From: 3, To: 1, Term: 1, Granted: true, Sent: 1},
			}
			k := 0
			roundRobin(b, size.n, func(i int) {
				nodes[i].Step(resps[k&1])
				k++
			})
		})
		b.Run(fmt.Sprintf("nodes=%s/impl=lockfree", size.name), func(b *testing.B) {
			w := benchWheel(b)
			nodes := leaders(b, w, size.n, lockFree)
			now := w.Now()
			for _, nd := range nodes {
				if _, err := nd.LeaderTick(now, nil); err != nil { // opens the gate
					b.Fatal(err)
				}
			}
			k := 0
			roundRobin(b, size.n, func(i int) {
				if !nodes[i].TryHeartbeatResp(election.ID(2+k&1), 1, 1, now) {
					b.Fatal("declined")
				}
				k++
			})
		})
		b.Run(fmt.Sprintf("nodes=%s/impl=etcd", size.name), func(b *testing.B) {
			nodes := etcdNodes(b, size.n, 1)
			for _, rn := range nodes {
				_ = rn.Campaign()
				for rn.HasReady() {
					rn.Advance(rn.Ready())
				}
				etcdStep(rn, &pb.Message{Type: pb.MsgPreVoteResp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(rn.Status().GetTerm() + 1)})
				etcdStep(rn, &pb.Message{Type: pb.MsgVoteResp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(rn.Status().GetTerm())})
				if st := rn.Status(); st.RaftState != raft.StateLeader || st.GetTerm() != 1 {
					b.Fatalf("%v in term %d, want leader in term 1", st.RaftState, st.GetTerm())
				}
			}
			resps := [2]*pb.Message{
				{Type: pb.MsgHeartbeatResp.Enum(), From: new(uint64(2)), To: new(uint64(1)), Term: new(uint64(1))},
				{Type: pb.MsgHeartbeatResp.Enum(), From: new(uint64(3)), To: new(uint64(1)), Term: new(uint64(1))},
			}
			k := 0
			roundRobin(b, size.n, func(i int) {
				etcdStep(nodes[i], resps[k&1])
				k++
			})
		})
	}
}
