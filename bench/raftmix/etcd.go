package raftmix

import (
	"fmt"
	"io"
	"log"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// EtcdTick is the tick of ImplEtcd and ImplEtcdLoop.
const EtcdTick = 10 * time.Millisecond

// etcdReplicas are the three replicas of every group of ImplEtcd and
// ImplEtcdLoop: go.etcd.io/raft/v3 RawNodes with ElectionTick and
// HeartbeatTick giving the workload's timings (150ms, randomized by etcd
// to [150ms, 300ms), and 50ms), PreVote and CheckQuorum on, each on a
// raft.MemoryStorage.
type etcdReplicas struct {
	electionTicks int
	groups        [][nodeReplicas]*raft.RawNode
	stores        [][nodeReplicas]*raft.MemoryStorage
}

// newEtcdReplicas builds the replicas of groups groups, allocated group
// by group (a group's three replicas side by side, as the one loop of
// ImplEtcdLoop visits them) or, if byNode, node by node (a node's
// replicas side by side, as a server holds its own and its scheduler
// visits them).
func newEtcdReplicas(groups int, byNode bool) (etcdReplicas, error) {
	et := int(ElectionTimeout / EtcdTick)
	rs := etcdReplicas{
		electionTicks: et,
		groups:        make([][nodeReplicas]*raft.RawNode, groups),
		stores:        make([][nodeReplicas]*raft.MemoryStorage, groups),
	}
	logger := &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	for j := range groups * nodeReplicas {
		i, k := j/nodeReplicas, j%nodeReplicas
		if byNode {
			i, k = j%groups, j/groups
		}
		st := raft.NewMemoryStorage()
		snap := pb.EnsureSnapshot(nil)
		snap.Metadata.Index = new(uint64(1))
		snap.Metadata.Term = new(uint64(1))
		snap.Metadata.ConfState.Voters = []uint64{1, 2, 3}
		if err := st.ApplySnapshot(snap); err != nil {
			return etcdReplicas{}, fmt.Errorf("raftmix: group %d: %w", i, err)
		}
		rn, err := raft.NewRawNode(&raft.Config{
			ID:              uint64(k + 1),
			ElectionTick:    et,
			HeartbeatTick:   int(HeartbeatPeriod / EtcdTick),
			Storage:         st,
			MaxSizePerMsg:   1 << 20,
			MaxInflightMsgs: 256,
			CheckQuorum:     true,
			PreVote:         true,
			Logger:          logger,
		})
		if err != nil {
			return etcdReplicas{}, fmt.Errorf("raftmix: group %d, replica %d: %w", i, k+1, err)
		}
		rs.groups[i][k], rs.stores[i][k] = rn, st
	}
	return rs, nil
}

// persist writes rd's entries and hard state to st, as a server does
// before it sends rd's messages, and counts in g an election that rd's
// soft state starts.
func persist(st *raft.MemoryStorage, rd *raft.Ready, g *group) {
	if len(rd.Entries) > 0 {
		_ = st.Append(rd.Entries)
	}
	if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
		_ = st.SetHardState(rd.HardState)
	}
	if ss := rd.SoftState; ss != nil &&
		(ss.RaftState == raft.StatePreCandidate || ss.RaftState == raft.StateCandidate) {
		g.elections.Add(1)
	}
}

// etcdMsg is one message of group g in a batch.
type etcdMsg struct {
	g int32
	m *pb.Message
}
