package etcdadapter

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

func TestRaftLayoutSupported(t *testing.T) {
	require.NoError(t, raftLayout().err, "the linked go.etcd.io/raft/v3 lacks the fields the deterministic timeout needs")
}

// singleNode runs a one-node group on a virtual wheel with 1ms ticks and
// returns it with the events it reports.
func singleNode(t *testing.T, preVote bool, rng *rand.Rand) (*wheel.Virtual, *Node, *[]election.Event) {
	t.Helper()
	w, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	t.Cleanup(func() { w.Stop() })
	c := DefaultConfig()
	var events []election.Event
	c.ID, c.Peers, c.TickInterval, c.PreVote, c.Rand = 1, []uint64{1}, time.Millisecond, preVote, rng
	c.Observer = func(e election.Event) { events = append(events, e) }
	n, err := NewNode(c, w.Wheel, TransportFunc(func(m *pb.Message) { t.Errorf("a single node sent %v", m) }))
	require.NoError(t, err)
	t.Cleanup(n.Close)
	return w, n, &events
}

// With Config.Rand, the tick at which a node campaigns is the one the
// adapter's source predicts, not etcd's crypto/rand draw: for each seed a
// copy of the source predicts every timeout etcd compares against. (By
// chance alone, etcd's own draw would match one seed in ElectionTick.)
func TestTimeoutComesFromRand(t *testing.T) {
	seed := testSeed(t)
	for i := range 30 {
		for _, preVote := range []bool{false, true} {
			w, n, events := singleNode(t, preVote, trialRand(seed, i))
			predict := trialRand(seed, i)
			et := n.Config().ElectionTick
			first := et + predict.IntN(et)
			require.NoError(t, n.Start(0))
			require.Equal(t, first, n.Status().ElectionTimeout)
			w.AdvanceTo(time.Duration(first-1) * time.Millisecond)
			require.Equal(t, election.Follower, n.Status().Role, "seed %d trial %d: campaigned before its timeout", seed, i)
			w.AdvanceTo(time.Duration(first) * time.Millisecond)
			st := n.Status()
			require.Equal(t, election.Leader, st.Role, "seed %d trial %d: no campaign at its timeout", seed, i)
			// Draws: the first, becoming candidate, becoming leader (a
			// pre-candidate draws nothing).
			predict.IntN(et)
			last := et + predict.IntN(et)
			require.Equal(t, last, st.ElectionTimeout)
			require.Equal(t, int64(3), n.Stats().TimeoutDraws)
			var starts []election.Event
			for _, e := range *events {
				if e.Type == election.EventElectionStart {
					starts = append(starts, e)
				}
			}
			require.NotEmpty(t, starts)
			require.Equal(t, time.Duration(first)*time.Millisecond, starts[0].At)
			require.Equal(t, preVote, starts[0].PreVote)
		}
	}
}

// Without Config.Rand the node keeps etcd's own draws (production) and
// only observes them.
func TestTimeoutWithoutRandIsEtcds(t *testing.T) {
	w, n, _ := singleNode(t, false, nil)
	require.NoError(t, n.Start(0))
	et := n.Config().ElectionTick
	st := n.Status()
	require.GreaterOrEqual(t, st.ElectionTimeout, et)
	require.Less(t, st.ElectionTimeout, 2*et)
	w.AdvanceTo(time.Duration(2*et) * time.Millisecond)
	require.Equal(t, election.Leader, n.Status().Role)
	require.Equal(t, int64(3), n.Stats().TimeoutDraws)
}
