package multiraft_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hostTimers is the number of timers a host keeps whatever its groups do:
// sweep, liveness ping, coalescing flush, heartbeat tick and one liveness
// timer per peer.
func hostTimers(hosts int) int64 { return int64(hosts * (4 + hosts - 1)) }

// TestHibernatedGroupsHoldNoTimers wakes every group, lets them hibernate
// and checks that only the hosts' own timers stay on the wheel.
func TestHibernatedGroupsHoldNoTimers(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 30, boot: true, seed: 3})
	c.v.AdvanceBy(time.Millisecond) // the persister writes the bootstrap states
	require.Equal(t, hostTimers(3), c.v.Stats().Pending, "bootstrapped asleep")
	for _, d := range c.groups {
		for _, v := range d.voters {
			require.NoError(t, c.hosts[v].Touch(d.id))
		}
	}
	c.v.AdvanceBy(50 * time.Millisecond)
	for _, id := range c.ids {
		require.Zero(t, c.hosts[id].Stats().Hibernating, "host %d: every group awake", id)
	}
	// A leader runs no timer (the host's tick drives its heartbeats and
	// CheckQuorum), nor does a follower that hears it (the sweep watches
	// its contact): at most a follower still waiting for its leader's
	// first heartbeat runs its election timer.
	require.LessOrEqual(t, c.v.Stats().Pending, hostTimers(3)+30*2, "awake groups' timers")
	c.v.AdvanceBy(2 * time.Second)
	require.Equal(t, hostTimers(3), c.v.Stats().Pending, "hibernated groups hold no timers")
	for _, id := range c.ids {
		s := c.hosts[id].Stats()
		require.EqualValues(t, 30, s.Hibernating)
	}
	for _, id := range c.ids {
		c.hosts[id].Stop()
	}
	require.Zero(t, c.v.Stats().Pending, "a stopped host holds no timers")
}

// TestHeapPerHibernatingGroup measures the heap a hibernating group costs
// a host (its entry, its voter set share and its MemoryStorage), once the
// persister wrote the bootstrap states; the budget is 1 KiB. Run
// with -v to see the number.
func TestHeapPerHibernatingGroup(t *testing.T) {
	groups := 20000
	if raceEnabled {
		groups = 2000
	}
	v := newTestWheel(t)
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(multiraft.Batch) {}))
	require.NoError(t, err)
	t.Cleanup(h.Stop)
	voters := []election.ID{1, 2, 3}
	before := heapInUse()
	for g := range groups {
		require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g + 1), Voters: voters,
			Storage: election.NewMemoryStorage(), Leader: voters[g%3]}))
	}
	v.AdvanceBy(time.Millisecond) // the persister writes the bootstrap states
	after := heapInUse()
	per := float64(after-before) / float64(groups)
	t.Logf("heap per hibernating group: %.0f bytes (%d groups)", per, groups)
	require.Less(t, per, 1024.0)
	require.EqualValues(t, groups, h.Stats().Hibernating)

	// For comparison: the same groups awake (one election.Node each).
	for g := range groups {
		require.NoError(t, h.Touch(multiraft.GroupID(g+1)))
	}
	awake := heapInUse()
	t.Logf("heap per awake group: %.0f bytes", float64(awake-before)/float64(groups))
	require.Zero(t, h.Stats().Hibernating)
	runtime.KeepAlive(h)
}

func newBareHost(t testing.TB) *multiraft.Host {
	v := newTestWheel(t)
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(multiraft.Batch) {}))
	require.NoError(t, err)
	t.Cleanup(h.Stop)
	return h
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
