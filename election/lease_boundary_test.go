package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// fixedExtra is an election jitter that waits its base plus a fixed delay.
type fixedExtra time.Duration

func (f fixedExtra) Next(base time.Duration, _ repeated.State, _ *rand.Rand) time.Duration {
	return base + time.Duration(f)
}

// TestLeaseRatioOneAtTheBoundary: with LeaseRatio 1 and a network that
// delivers at the instant of sending, a follower that heard the leader at
// s may vote for another at s+ElectionTimeout exactly, and the leader's
// lease (QuorumContact) must have ended by then. It used to count an
// answer to a heartbeat sent at s within the lease through s+ET
// inclusive: at that instant node 2 led term 2 while node 1 still held
// its lease in term 1.
func TestLeaseRatioOneAtTheBoundary(t *testing.T) {
	const et = 10 * time.Millisecond
	c := newCluster(t, clusterOpts{n: 3, delay: 0, seed: 1, config: func(cfg *election.Config) {
		cfg.ElectionTimeout, cfg.HeartbeatInterval = et, 2*time.Millisecond
		cfg.LeaseRatio = 1
		cfg.CheckQuorum, cfg.LeaderStickiness = true, true
		cfg.ElectionJitter = repeated.None()
		if cfg.ID == 3 {
			cfg.ElectionJitter = fixedExtra(5 * time.Millisecond) // node 2 campaigns first
		}
	}})
	c.leases = true
	c.startAll(t)
	require.NoError(t, c.nodes[1].Campaign())
	c.v.AdvanceTo(4 * time.Millisecond) // heartbeats at 0, 2 and 4ms, answered at once
	require.Equal(t, election.Leader, c.nodes[1].Status().Role)
	c.net.Isolate(1, c.ids...)
	c.stepAndCheckLeases(4*time.Millisecond+et+time.Millisecond, 50*time.Microsecond)
	require.Equal(t, election.Leader, c.nodes[2].Status().Role, "node 2 won at 4ms + ET")
	require.NoError(t, c.check.Err())
}
