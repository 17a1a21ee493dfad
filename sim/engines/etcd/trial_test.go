package etcd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// fastSetup is the etcd model at 10ms ticks: timeouts in [100, 200) ms,
// heartbeats every tick, pre-vote and CheckQuorum on.
func fastSetup(nodes int) experiment.Setup {
	s := experiment.EtcdModel()
	s.Tick, s.Heartbeat = 10*ms, 10*ms
	s.TimeoutMin, s.TimeoutMax = 100*ms, 200*ms
	s.Nodes, s.ShortLogs = nodes, max(0, min(2, nodes-2))
	return s
}

// trial runs one trial of s (failover or bootstrap) and returns its
// outcome and trace.
func trial(t *testing.T, s experiment.Setup, bootstrap bool, rng *rand.Rand) (sim.Outcome, []string) {
	t.Helper()
	var e experiment.Trialer = Failover{Setup: s}
	if bootstrap {
		e = Bootstrap{Setup: s}
	}
	var lines []string
	o, err := e.Trial(context.Background(), 0, rng, func(l string) { lines = append(lines, l) })
	require.NoError(t, err)
	return o, lines
}

// The same seed gives the same trial, event for event, also while other
// trials run in parallel (each draws etcd's crypto timeouts too, which the
// adapter overrides); another seed gives another trial.
func TestTrialsAreDeterministic(t *testing.T) {
	seed := testSeed(t)
	s := fastSetup(5)
	s.Latency = sim.Uniform(0, 2*ms)
	s.Disk = sim.Uniform(0, ms)
	s.Loss, s.Duplicate = 0.01, 0.05
	for _, bootstrap := range []bool{false, true} {
		o1, tr1 := trial(t, s, bootstrap, trialRand(seed, 0))
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				_, _ = Failover{Setup: s}.Trial(context.Background(), 0, trialRand(seed, 100+i), nil)
			})
		}
		o2, tr2 := trial(t, s, bootstrap, trialRand(seed, 0))
		wg.Wait()
		require.True(t, o1.OK, "seed %d: bootstrap=%v trial did not finish", seed, bootstrap)
		require.Equal(t, o1, o2, "seed %d: bootstrap=%v", seed, bootstrap)
		require.Equal(t, tr1, tr2, "seed %d: bootstrap=%v traces differ", seed, bootstrap)
		o3, tr3 := trial(t, s, bootstrap, trialRand(seed, 1))
		require.False(t, o1 == o3 && slices.Equal(tr1, tr3), "seed %d: bootstrap=%v: two seeds gave the same trial", seed, bootstrap)
	}
}

// traceNode returns the node of a trace line ("n3" -> 3), 0 for none.
func traceNode(line string) election.ID {
	f := strings.Fields(line)
	var id election.ID
	if len(f) > 1 {
		_, _ = fmt.Sscanf(f[1], "n%d", &id)
	}
	return id
}

// Failover across sizes and options: every trial finishes, the new
// leader has a full log and a higher term, the measured time cannot be
// shorter than a follower's timeout allows, and (checked by the trial)
// election safety holds throughout.
func TestFailover(t *testing.T) {
	seed := testSeed(t)
	for _, nodes := range []int{3, 5} {
		for _, preVote := range []bool{false, true} {
			for _, checkQuorum := range []bool{false, true} {
				name := fmt.Sprintf("nodes=%d/prevote=%v/checkquorum=%v", nodes, preVote, checkQuorum)
				t.Run(name, func(t *testing.T) {
					s := fastSetup(nodes)
					s.PreVote, s.CheckQuorum, s.LeaderStickiness = preVote, checkQuorum, checkQuorum
					floor := s.TimeoutMin - s.Tick - s.Heartbeat
					for i := range 40 {
						o, lines := trial(t, s, false, trialRand(seed, i))
						var short []election.ID
						var winner election.ID
						crashed := false
						for _, l := range lines {
							if _, list, ok := strings.Cut(l, "setup done: "); ok {
								_, list, _ = strings.Cut(list, "short logs: [")
								for f := range strings.FieldsSeq(strings.TrimSuffix(list, "]")) {
									var id election.ID
									_, _ = fmt.Sscan(f, &id)
									short = append(short, id)
								}
							}
							crashed = crashed || strings.HasSuffix(l, "  crash")
							if crashed && strings.Contains(l, "LeaderElected") {
								winner = traceNode(l)
							}
						}
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
			s.PreVote = preVote
			for i := range 20 {
				o, _ := trial(t, s, true, trialRand(seed, i))
				require.True(t, o.OK, "seed %d nodes %d trial %d", seed, nodes, i)
				require.Greater(t, o.Time, s.TimeoutMin-s.Tick)
				require.GreaterOrEqual(t, o.Terms, 1)
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
		s.PreVote = preVote
		s.MaxTime = 2 * time.Second
		o, _ := trial(t, s, false, trialRand(seed, 0))
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
	o, _ := trial(t, s, false, trialRand(seed, 1))
	require.Equal(t, sim.Outcome{Time: s.MaxTime, NoLeader: true}, o)
}

// observed is the engine with one more observer of every node event.
type observed struct {
	engine
	obs func(election.Event)
}

func (o observed) NewCluster(ctx context.Context, s experiment.Setup, rng *rand.Rand, h experiment.Hooks) (experiment.Cluster, error) {
	prev := h.Observer
	h.Observer = func(e election.Event) {
		if prev != nil {
			prev(e)
		}
		o.obs(e)
	}
	return o.engine.NewCluster(ctx, s, rng, h)
}

// The events of etcd nodes are election.Node's types, so the trials'
// tracking and safety checks consume them.
func TestEventsCoverTheTrackerTypes(t *testing.T) {
	seen := map[election.EventType]bool{}
	s := fastSetup(5)
	e, err := newEngine(s, Config{})
	require.NoError(t, err)
	for i := range 20 {
		_, err := experiment.RunFailover(context.Background(), observed{e, func(e election.Event) { seen[e.Type] = true }}, s, trialRand(testSeed(t), i), nil)
		require.NoError(t, err)
	}
	for _, typ := range []election.EventType{election.EventRoleChange, election.EventTermChange, election.EventElectionStart,
		election.EventVoteGranted, election.EventVoteDenied, election.EventLeaderElected, election.EventLeaderKnown, election.EventStepDown} {
		require.True(t, seen[typ], "no %v event in 20 failovers", typ)
	}
}

// The shared procedure gives the etcd engine the failover's options:
// two servers crash at once, the clock stops at the election, the crash
// comes right after the heartbeat broadcast.
func TestFailoverOptions(t *testing.T) {
	seed := testSeed(t)
	s := fastSetup(5)
	s.Crash, s.ShortLogs = 2, 1
	s.Until, s.CrashAfterHeartbeat = experiment.UntilElected, true
	require.NoError(t, Failover{Setup: s}.Check())
	for i := range 20 {
		o, lines := trial(t, s, false, trialRand(seed, i))
		require.True(t, o.OK, "seed %d trial %d: %+v", seed, i, o)
		crashes := 0
		for _, l := range lines {
			if strings.HasSuffix(l, "  crash") {
				crashes++
			}
			if strings.Contains(l, "heartbeat broadcast; crash in") {
				require.True(t, strings.HasSuffix(l, "crash in 1ns"), l)
			}
		}
		require.Equal(t, 2, crashes, "seed %d trial %d", seed, i)
	}
	require.Equal(t, 3, Failover{Setup: s}.Result(nil).Alive)
}
