package etcd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/etcdadapter"
)

type sent struct {
	at       time.Duration
	typ      pb.MessageType
	from, to uint64
}

// With a disk delay, etcd's server order holds: a leader's messages leave
// at once, in parallel with its write; everyone else's leave when their
// write completes (a candidate's vote requests after it persisted its
// term and vote; a voter's answer after it persisted its vote).
func TestDiskDelaysNonLeaderMessages(t *testing.T) {
	const disk = 5 * time.Millisecond
	cfg := fastConfig()
	cfg.PreVote, cfg.CheckQuorum = false, false
	var log []sent
	var writes []etcdadapter.Write
	var c *Cluster
	c = newTestCluster(t, ClusterConfig{
		Nodes: 3, Node: cfg, Rand: rand.New(rand.NewPCG(1, 2)),
		Disk: func(w etcdadapter.Write, _ *rand.Rand) time.Duration { writes = append(writes, w); return disk },
		OnSend: func(m *pb.Message) {
			log = append(log, sent{c.Now(), m.GetType(), m.GetFrom(), m.GetTo()})
		},
	})
	require.NoError(t, c.Start())
	require.NoError(t, c.Node(1).Campaign())
	c.Run(20*time.Millisecond, func() bool { return false })
	first := func(typ pb.MessageType, from uint64) time.Duration {
		for _, s := range log {
			if s.typ == typ && s.from == from {
				return s.at
			}
		}
		t.Fatalf("no %v from %d in %v", typ, from, log)
		return 0
	}
	require.Equal(t, disk, first(pb.MsgVote, 1), "vote requests leave after the candidate's write")
	require.Equal(t, 2*disk, first(pb.MsgVoteResp, 2), "answers leave after the voter's write")
	require.Equal(t, 2*disk, first(pb.MsgApp, 1), "the new leader's append leaves with its write")
	require.Equal(t, 3*disk, first(pb.MsgAppResp, 2))
	require.Equal(t, etcdadapter.Write{Node: 1, TermChanged: true, VoteChanged: true}, writes[0])
	require.Greater(t, c.Node(1).Stats().DelayedWrites, int64(0))
}

// A crash loses the write in flight and the messages waiting for it.
func TestCrashLosesWriteInFlight(t *testing.T) {
	cfg := fastConfig()
	cfg.PreVote = false
	var votes int
	c := newTestCluster(t, ClusterConfig{
		Nodes: 3, Node: cfg, Rand: rand.New(rand.NewPCG(3, 4)),
		Disk: func(etcdadapter.Write, *rand.Rand) time.Duration { return 5 * time.Millisecond },
		OnSend: func(m *pb.Message) {
			if m.GetType() == pb.MsgVote {
				votes++
			}
		},
	})
	require.NoError(t, c.Start())
	n := c.Node(1)
	require.NoError(t, n.Campaign())
	require.Equal(t, uint64(1), n.Status().Term)
	c.Run(time.Millisecond, func() bool { return false })
	c.Crash(1)
	require.Equal(t, int64(1), n.Stats().LostWrites)
	term, vote, _ := n.HardState()
	require.Equal(t, [2]uint64{0, 0}, [2]uint64{term, vote}, "the unfinished write reached the storage")
	c.Run(10*time.Millisecond, func() bool { return false })
	require.Zero(t, votes, "vote requests left although their write never completed")
}
