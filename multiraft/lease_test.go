package multiraft_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/multiraft"
)

// TestStickinessAsleep: a follower that answers its leader's heartbeats
// while hibernating keeps LeaderStickiness's promise. The leader wakes
// and gains its lease from answers made asleep; another replica then
// campaigns in a higher term. The vote request wakes the sleeping
// follower, which must refuse it inside the lease it renewed, as an awake
// follower would: no node may lead term 2 while the leader holds its
// lease in term 1.
func TestStickinessAsleep(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 1,
		config: func(cfg *multiraft.Config) {
			cfg.Election.PreVote = false
			cfg.Election.CheckQuorum = true
			cfg.Election.LeaderStickiness = true
		}})
	const g = multiraft.GroupID(1)
	require.NoError(t, c.hosts[1].Touch(g)) // the leader wakes; the followers sleep on
	c.v.AdvanceBy(20 * time.Millisecond)
	st, err := c.hosts[1].Status(g)
	require.NoError(t, err)
	require.True(t, st.Lease, "the leader's lease from answers made asleep")
	st2, err := c.hosts[2].Status(g)
	require.NoError(t, err)
	require.True(t, st2.Hibernating, "follower 2 answered asleep")
	require.NotZero(t, c.hosts[2].Stats().AnsweredAsleep)

	// Replica 3 loses the leader and campaigns on its own timer (it may
	// not campaign by hand while its own promise to the lease holds),
	// once liveness finds host 1 silent and replica 2, the group's first
	// voter alive, has had two election timeouts to win (overload.go).
	require.NoError(t, c.hosts[3].Touch(g))
	c.net.Cut(1, 3)
	c.net.Cut(3, 1)
	for range 1200 {
		if st3, err := c.hosts[3].Status(g); err == nil && st3.Status.Term > 1 {
			break
		}
		require.NoError(t, c.hosts[1].Touch(g)) // the leader stays awake, with its lease
		c.v.AdvanceBy(time.Millisecond)
		c.checkLeases()
	}
	st3, err := c.hosts[3].Status(g)
	require.NoError(t, err)
	require.Greater(t, st3.Status.Term, uint64(1), "replica 3 campaigns")
	c.leases = true
	c.advance(50 * time.Millisecond)
	st2, err = c.hosts[2].Status(g)
	require.NoError(t, err)
	require.Equal(t, election.ID(1), st2.Status.Leader, "follower 2 stays loyal to the leader")
	require.NoError(t, c.check.Err())
}

var leaseSchedules = flag.Int("lease-schedules", 0, "schedules of TestRandomLeases (0: 64, or 16 with -short or -race); raise for a soak run")

// TestRandomLeases runs many short random schedules of hosts with
// hibernating groups through crashes and restarts, link cuts, activity,
// campaigns and transfers, over a network that loses, duplicates,
// misroutes and delays batches, and checks election safety and the lease
// invariant (no replica holds a lease in term t while another leads a
// term above t) every millisecond of virtual time. Schedule i runs seed
// s+i; its PreVote, CheckQuorum and LeaderStickiness come from its seed,
// so consecutive schedules cover all eight combinations. A failure prints
// the command that reruns the failing schedule alone.
// -lease-schedules N runs a soak.
func TestRandomLeases(t *testing.T) {
	seed := testseed.Seed(t)
	n := runs(64, 16, *leaseSchedules)
	workers := min(runtime.GOMAXPROCS(0), n)
	var checked atomic.Int64
	t.Run("workers", func(t *testing.T) {
		for w := range workers {
			t.Run(fmt.Sprint(w), func(t *testing.T) {
				t.Parallel()
				for i := w; i < n && !t.Failed(); i += workers {
					s := seed + uint64(i)
					t.Run(fmt.Sprint(s), func(t *testing.T) {
						runLeaseSchedule(t, s)
						checked.Add(1)
					})
				}
			})
		}
	})
	t.Logf("%d schedules", checked.Load())
}

// runLeaseSchedule runs one schedule of TestRandomLeases.
func runLeaseSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 31))
	hosts := 3 + 2*rng.IntN(2)
	replicas := 3
	if hosts == 5 && rng.IntN(2) == 0 {
		replicas = 5
	}
	combo := seed % 8
	c := newCluster(t, clusterOpts{hosts: hosts, groups: 3, replicas: replicas, seed: seed, boot: rng.IntN(2) == 0, durable: true,
		config: func(cfg *multiraft.Config) {
			cfg.Coalesce = rng.IntN(4) != 0
			cfg.HibernateAfter = time.Duration(30+rng.IntN(300)) * time.Millisecond
			cfg.Election.PreVote = combo&1 != 0
			cfg.Election.CheckQuorum = combo&2 != 0
			cfg.Election.LeaderStickiness = combo&4 != 0
			if rng.IntN(4) == 0 {
				cfg.Election.Detection = election.CheckLastContact
			}
		}})
	c.leases = true
	c.tracing = testing.Verbose()
	defer func() {
		if t.Failed() && c.tracing {
			t.Log("trace:\n" + c.flush())
		}
	}()
	c.faults = &faults{rng: rand.New(rand.NewPCG(seed, 32))}
	switch rng.IntN(4) {
	case 1:
		c.faults.loss, c.faults.dup = 0.05, 0.05
	case 2:
		c.faults.loss, c.faults.dup, c.faults.misroute, c.faults.slow = 0.2, 0.1, 0.05, 0.05
	case 3:
		c.faults.dup, c.faults.misroute, c.faults.slow = 0.2, 0.1, 0.2
	}
	delayRng := rand.New(rand.NewPCG(seed, 33))
	c.net.SetDelay(func(multiraft.Batch) time.Duration {
		return time.Duration(200+delayRng.IntN(5000)) * time.Microsecond
	})
	repro := testseed.Command(t, seed, "-lease-schedules=1")
	for step := 0; step < 60; step++ {
		c.advance(time.Duration(rng.IntN(40)) * time.Millisecond)
		c.randomOp(rng, 16, true)
		require.NoError(t, c.err(), "step %d; reproduce: %s", step, repro)
	}
	c.net.Heal()
	c.advance(time.Second)
	require.NoError(t, c.err(), "reproduce: %s", repro)
}

// TestTransferKeepsLeaderAwake: a leader that sent a leadership transfer
// does not hibernate for the rest of its term. Its MsgTimeoutNow may reach
// the transferee at any time while the term lasts; a leader that slept
// and woke would no longer know it had transferred, hold a lease again,
// and the late MsgTimeoutNow would elect the transferee inside that lease
// (found by TestRandomLeases: a transfer's MsgTimeoutNow delayed 100ms
// past the leader's hibernation and wake).
func TestTransferKeepsLeaderAwake(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: 3, groups: 1, boot: true, seed: 1,
		config: func(cfg *multiraft.Config) {
			cfg.HibernateAfter = 50 * time.Millisecond
		}})
	const g = multiraft.GroupID(1)
	// Host 3 is cut off: the transfer's MsgTimeoutNow is lost, liveness
	// takes host 3 for dead, and the leader, caught up with host 2, would
	// otherwise go to sleep.
	c.net.Cut(1, 3)
	c.net.Cut(3, 1)
	require.NoError(t, c.hosts[1].Touch(g))
	c.advance(20 * time.Millisecond)
	require.NoError(t, c.hosts[1].TransferLeadership(g, 3))
	c.advance(time.Second)
	st, err := c.hosts[1].Status(g)
	require.NoError(t, err)
	require.Equal(t, election.Leader, st.Status.Role)
	require.Equal(t, uint64(1), st.Status.Term)
	require.False(t, st.Hibernating, "a leader that transferred in its term stays awake")
	require.NoError(t, c.check.Err())
}
