package etcdadapter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

func fastSetup(nodes int) Setup {
	s := DefaultSetup()
	s.Nodes, s.Node = nodes, fastConfig()
	s.ShortLogs = max(0, min(2, nodes-2))
	return s
}

func TestSetupValidate(t *testing.T) {
	require.NoError(t, DefaultSetup().Validate())
	for _, tc := range []struct {
		name   string
		change func(*Setup)
		field  string
		reason string
	}{
		{"no nodes", func(s *Setup) { s.Nodes = 0 }, "Nodes", "[1, 1000]"},
		{"loss", func(s *Setup) { s.Loss = -0.1 }, "Loss", "[0, 1)"},
		{"duplicate", func(s *Setup) { s.Duplicate = -1 }, "Duplicate", "[0, 1]"},
		{"short logs", func(s *Setup) { s.ShortLogs = 4 }, "ShortLogs", "[0, Nodes-2]"},
		{"negative short logs", func(s *Setup) { s.ShortLogs = -1 }, "ShortLogs", "[0, Nodes-2]"},
		{"max time", func(s *Setup) { s.MaxTime = -1 }, "MaxTime", "must not be negative"},
		{"timing", func(s *Setup) { s.Node.TickInterval = 0 }, "Node.TickInterval", "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSetup()
			tc.change(&s)
			requireFieldError(t, s.Validate(), tc.field, tc.reason)
			_, err := s.Failover(rand.New(rand.NewPCG(1, 1)), nil)
			requireFieldError(t, err, tc.field, "") // 0 nodes: "at least 2", below
			_, err = s.Bootstrap(rand.New(rand.NewPCG(1, 1)), nil)
			requireFieldError(t, err, tc.field, tc.reason)
		})
	}
	s := DefaultSetup()
	s.Node.ElectionTick = 1
	require.Equal(t, "etcdadapter: invalid config: Node.ElectionTick 1: must be greater than HeartbeatTick (1)", s.Validate().Error())
	s = DefaultSetup()
	_, err := s.Failover(nil, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
	s.Nodes, s.ShortLogs = 1, 0
	_, err = s.Failover(rand.New(rand.NewPCG(1, 1)), nil)
	requireFieldError(t, err, "Nodes", "at least 2")
}

// traced runs one trial and returns its outcome and trace.
func traced(t *testing.T, trial func(*rand.Rand, func(time.Duration, uint64, string)) (Outcome, error), rng *rand.Rand) (Outcome, []string) {
	t.Helper()
	var lines []string
	o, err := trial(rng, func(at time.Duration, n uint64, what string) {
		lines = append(lines, fmt.Sprintf("%v n%d %s", at, n, what))
	})
	require.NoError(t, err)
	return o, lines
}

// The same seed gives the same trial, event for event, also while other
// trials run in parallel (each draws etcd's crypto timeouts too, which the
// adapter overrides); another seed gives another trial.
func TestTrialsAreDeterministic(t *testing.T) {
	seed := testSeed(t)
	s := fastSetup(5)
	s.Latency = func(_, _ uint64, r *rand.Rand) time.Duration {
		return time.Duration(r.Int64N(int64(2 * time.Millisecond)))
	}
	s.Disk = func(_ Write, r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(time.Millisecond))) }
	s.Loss, s.Duplicate = 0.01, 0.05
	for _, kind := range []string{"failover", "bootstrap"} {
		trial := s.Failover
		if kind == "bootstrap" {
			trial = s.Bootstrap
		}
		o1, tr1 := traced(t, trial, trialRand(seed, 0))
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				_, _ = trial(trialRand(seed, 100+i), nil)
			})
		}
		o2, tr2 := traced(t, trial, trialRand(seed, 0))
		wg.Wait()
		require.True(t, o1.OK, "seed %d: %s trial did not finish", seed, kind)
		require.Equal(t, o1, o2, "seed %d: %s", seed, kind)
		require.Equal(t, tr1, tr2, "seed %d: %s traces differ", seed, kind)
		o3, tr3 := traced(t, trial, trialRand(seed, 1))
		require.False(t, o1 == o3 && slices.Equal(tr1, tr3), "seed %d: %s: two seeds gave the same trial", seed, kind)
	}
}

// Failover across sizes and options: every trial finishes, the new
// leader has a full log and a higher term, the measured time cannot be
// shorter than a follower's timeout allows, and the safety invariants
// hold throughout.
func TestFailover(t *testing.T) {
	seed := testSeed(t)
	for _, nodes := range []int{3, 5} {
		for _, preVote := range []bool{false, true} {
			for _, checkQuorum := range []bool{false, true} {
				name := fmt.Sprintf("nodes=%d/prevote=%v/checkquorum=%v", nodes, preVote, checkQuorum)
				t.Run(name, func(t *testing.T) {
					s := fastSetup(nodes)
					s.Node.PreVote, s.Node.CheckQuorum = preVote, checkQuorum
					tick, hb := s.Node.TickInterval, s.Node.HeartbeatInterval()
					floor := time.Duration(s.Node.ElectionTick-1)*tick - hb
					for i := range 40 {
						inv := newInvariants(t, seed)
						s.Observer = inv.observe
						var short []uint64
						var winner uint64
						crashed := false
						o, err := s.Failover(trialRand(seed, i), func(_ time.Duration, n uint64, what string) {
							if strings.HasPrefix(what, "setup: ") {
								_, list, _ := strings.Cut(what, "short logs: [")
								for f := range strings.FieldsSeq(strings.TrimSuffix(list, "]")) {
									var id uint64
									_, _ = fmt.Sscan(f, &id)
									short = append(short, id)
								}
							}
							crashed = crashed || what == "crash"
							if crashed && strings.HasPrefix(what, "LeaderElected") {
								winner = n
							}
						})
						require.NoError(t, err)
						require.True(t, o.OK, "seed %d trial %d: did not finish: %+v", seed, i, o)
						require.Greater(t, o.Time, floor, "seed %d trial %d", seed, i)
						require.GreaterOrEqual(t, o.Terms, 1)
						require.Equal(t, o.Terms-1, o.Splits)
						require.Positive(t, o.Messages)
						require.Len(t, short, s.ShortLogs, "seed %d trial %d", seed, i)
						require.NotZero(t, winner)
						require.NotContains(t, short, winner, "seed %d trial %d: a node with a short log won", seed, i)
					}
				})
			}
		}
	}
}

func TestBootstrap(t *testing.T) {
	seed := testSeed(t)
	for _, nodes := range []int{1, 3, 5} {
		for _, preVote := range []bool{false, true} {
			s := fastSetup(nodes)
			s.Node.PreVote = preVote
			tick := s.Node.TickInterval
			for i := range 20 {
				inv := newInvariants(t, seed)
				s.Observer = inv.observe
				o, err := s.Bootstrap(trialRand(seed, i), nil)
				require.NoError(t, err)
				require.True(t, o.OK, "seed %d nodes %d trial %d", seed, nodes, i)
				require.Greater(t, o.Time, time.Duration(s.Node.ElectionTick-1)*tick)
				require.GreaterOrEqual(t, o.Terms, 1)
				require.GreaterOrEqual(t, inv.elected, 1)
			}
		}
	}
}

// A trial that cannot finish reports MaxTime and OK false, never a
// measured time: a two-node group has no quorum once the leader crashed,
// and a group that loses nearly every message never finishes its setup.
func TestFailoverTimesOut(t *testing.T) {
	seed := testSeed(t)
	for _, preVote := range []bool{false, true} {
		s := fastSetup(2)
		s.Node.PreVote = preVote
		s.MaxTime = 2 * time.Second
		o, err := s.Failover(trialRand(seed, 0), nil)
		require.NoError(t, err)
		require.False(t, o.OK)
		require.Equal(t, s.MaxTime, o.Time)
		require.Equal(t, o.Terms, o.Splits)
		if preVote {
			require.Zero(t, o.Terms, "pre-votes raised the term")
		} else {
			require.Positive(t, o.Terms)
		}
		require.Positive(t, o.Messages)
	}
	s := fastSetup(3)
	s.MaxTime, s.Loss = 2*time.Second, 0.99
	o, err := s.Failover(trialRand(seed, 1), nil)
	require.NoError(t, err)
	require.Equal(t, Outcome{Time: s.MaxTime}, o)
}

// With aligned tickers and no latency every node ticks at once: the
// trial still finishes and stays deterministic.
func TestAlignedTicks(t *testing.T) {
	seed := testSeed(t)
	s := fastSetup(5)
	s.AlignedTicks = true
	o1, tr1 := traced(t, s.Failover, trialRand(seed, 0))
	o2, tr2 := traced(t, s.Failover, trialRand(seed, 0))
	require.True(t, o1.OK)
	require.Equal(t, o1, o2)
	require.Equal(t, tr1, tr2)
}

// The events a Setup's observer receives are those of election.Node
// types, so a sim tracker can consume them.
func TestEventsCoverTheTrackerTypes(t *testing.T) {
	seen := map[election.EventType]bool{}
	s := fastSetup(5)
	s.Observer = func(e election.Event) { seen[e.Type] = true }
	for i := range 20 {
		_, err := s.Failover(trialRand(testSeed(t), i), nil)
		require.NoError(t, err)
	}
	for _, typ := range []election.EventType{election.EventRoleChange, election.EventTermChange, election.EventElectionStart,
		election.EventVoteGranted, election.EventVoteDenied, election.EventLeaderElected, election.EventLeaderKnown, election.EventStepDown} {
		require.True(t, seen[typ], "no %v event in 20 failovers", typ)
	}
}
