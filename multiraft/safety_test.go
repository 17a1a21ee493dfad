package multiraft_test

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/multiraft"
)

var safetyRounds = flag.Int("safety-rounds", 0, "rounds of TestRandomSafety (0: 6, or 2 with -short or -race); raise for a soak run")

// TestRandomSafety runs hosts with hibernating groups through random
// crashes and restarts, one-way link cuts, activity, campaigns and
// transfers, with random delays that reorder batches, and checks election
// safety per group (one leader per term, one vote per node per term, terms
// never go back). Rounds vary coalescing, the hibernation delay, 3 or 5
// replicas, pre-vote, check-quorum, leader stickiness and the detection
// mode. After the faults stop, every group must have one leader, awake or
// hibernating, whose term and leader every replica knows.
// -safety-rounds N runs a soak.
func TestRandomSafety(t *testing.T) {
	seed := testseed.Seed(t)
	rounds := runs(6, 2, *safetyRounds)
	var total multiraft.Stats
	for r := range rounds {
		s := runRandomSafety(t, seed+uint64(r))
		total.Hibernations += s.Hibernations
		total.Wakes += s.Wakes
		total.LivenessWakes += s.LivenessWakes
	}
	t.Logf("%d hibernations, %d wakes, %d by liveness", total.Hibernations, total.Wakes, total.LivenessWakes)
	require.NotZero(t, total.Hibernations, "the runs must exercise hibernation")
	require.NotZero(t, total.LivenessWakes, "the runs must exercise liveness wakes")
}

// TestSafetySeeds reruns rounds of TestRandomSafety whose seeds found a
// bug: each must pass on every run.
//   - 4186934774529277686: a host that led nothing with a peer held its
//     candidates' rounds on that peer's answers, which never came; a group
//     stayed leaderless after the faults stopped.
func TestSafetySeeds(t *testing.T) {
	for _, seed := range []uint64{4186934774529277686} {
		runRandomSafety(t, seed)
	}
}

// runRandomSafety runs one round of TestRandomSafety; its seed decides
// everything, coalescing on even seeds, so that a failing round reruns
// alone with its seed and -safety-rounds=1.
func runRandomSafety(t *testing.T, seed uint64) multiraft.Stats {
	coalesce := seed%2 == 0
	repro := testseed.Command(t, seed, "-safety-rounds=1")
	rng := rand.New(rand.NewPCG(seed, 99))
	replicas := 3 + 2*rng.IntN(2)
	c := newCluster(t, clusterOpts{hosts: 5, groups: 40, replicas: replicas, seed: seed, boot: rng.IntN(2) == 0, durable: true,
		config: func(cfg *multiraft.Config) {
			cfg.Coalesce = coalesce
			cfg.HibernateAfter = time.Duration(100+rng.IntN(300)) * time.Millisecond
			cfg.Election.LeaderStickiness = rng.IntN(2) == 0
			cfg.Election.PreVote = rng.IntN(4) != 0
			cfg.Election.CheckQuorum = rng.IntN(4) != 0
			if rng.IntN(4) == 0 {
				cfg.Election.Detection = election.CheckLastContact
			}
		}})
	c.net.SetDelay(func(multiraft.Batch) time.Duration {
		return time.Duration(500+rng.IntN(4000)) * time.Microsecond
	})
	c.leases = true
	for step := 0; step < 300; step++ {
		c.advance(time.Duration(rng.IntN(60)) * time.Millisecond)
		c.randomOp(rng, 20, true)
		require.NoError(t, c.err(), "step %d; reproduce: %s", step, repro)
	}
	c.net.Heal()
	for _, id := range c.ids {
		if c.hosts[id] == nil {
			c.start(id)
		}
	}
	c.advance(5 * time.Second)
	require.NoError(t, c.err(), "reproduce: %s", repro)
	for _, d := range c.groups {
		if testing.Verbose() {
			for _, v := range d.voters {
				st, _ := c.hosts[v].Status(d.id)
				t.Logf("g%d n%d %+v", d.id, v, st)
			}
		}
		l, term := c.leaderOf(d.id)
		require.NotEqual(t, election.None, l, "group %d has no leader; reproduce: %s", d.id, repro)
		for _, v := range d.voters {
			st, err := c.hosts[v].Status(d.id)
			require.NoError(t, err)
			require.Equal(t, term, st.Status.Term, "group %d replica %d; reproduce: %s", d.id, v, repro)
			require.Equal(t, l, st.Status.Leader, "group %d replica %d; reproduce: %s", d.id, v, repro)
		}
	}
	return c.totals()
}

// runs returns how many runs a randomized test makes: the flag's value if
// set, else def, or short with -short or -race.
func runs(def, short, flag int) int {
	switch {
	case flag > 0:
		return flag
	case testing.Short() || raceEnabled:
		return short
	}
	return def
}

// randomOp applies one random operation to a random host and group:
// crash or restart the host, cut a link from it or heal every link, touch
// the group, and if forced campaign or transfer its leadership. Of span
// equally likely draws, 11 are operations and the rest do nothing; draws
// that do not apply (restarting a running host) do nothing either.
func (c *cluster) randomOp(rng *rand.Rand, span int, forced bool) {
	id := c.ids[rng.IntN(len(c.ids))]
	g := multiraft.GroupID(1 + rng.IntN(len(c.groups)))
	h := c.hosts[id]
	switch op := rng.IntN(span); {
	case op == 0 && h != nil:
		c.crash(id)
	case op <= 2 && h == nil:
		c.start(id)
	case op == 3:
		c.net.Cut(id, c.ids[rng.IntN(len(c.ids))])
	case op == 4:
		c.net.Heal()
	case op <= 8 && h != nil:
		_ = h.Touch(g) // ErrUnknownGroup for groups without a replica here
	case op == 9 && h != nil && forced:
		_ = h.Campaign(g)
	case op == 10 && h != nil && forced:
		_ = h.TransferLeadership(g, c.ids[rng.IntN(len(c.ids))])
	}
}
