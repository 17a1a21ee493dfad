package etcd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

// TestNodeConfig: etcd's settings derive from the Setup (tick: the
// Setup's, else the heartbeat; ElectionTick: TimeoutMin in ticks;
// HeartbeatTick: the heartbeat in ticks), and Config overrides them.
func TestNodeConfig(t *testing.T) {
	s := experiment.EtcdModel()
	nc, err := NodeConfig(s, Config{})
	require.NoError(t, err)
	require.Equal(t, 100*ms, nc.TickInterval)
	require.Equal(t, 10, nc.ElectionTick)
	require.Equal(t, 1, nc.HeartbeatTick)
	require.True(t, nc.PreVote)
	require.True(t, nc.CheckQuorum)

	s.Tick, s.TimeoutMin, s.TimeoutMax, s.Heartbeat = 0, 300*ms, 600*ms, 50*ms
	s.PreVote = false
	nc, err = NodeConfig(s, Config{})
	require.NoError(t, err)
	require.Equal(t, 50*ms, nc.TickInterval, "no tick: the heartbeat is one tick")
	require.Equal(t, 6, nc.ElectionTick)
	require.False(t, nc.PreVote)

	nc, err = NodeConfig(s, Config{Tick: 10 * ms, ElectionTick: 20, HeartbeatTick: 2})
	require.NoError(t, err)
	require.Equal(t, etcdadapter.Config{ElectionTick: 20, HeartbeatTick: 2, TickInterval: 10 * ms, CheckQuorum: true},
		etcdadapter.Config{ElectionTick: nc.ElectionTick, HeartbeatTick: nc.HeartbeatTick, TickInterval: nc.TickInterval, CheckQuorum: nc.CheckQuorum, PreVote: nc.PreVote})
}

// TestCheck: what etcd cannot express is refused with the field that says
// it.
func TestCheck(t *testing.T) {
	require.NoError(t, Check(experiment.EtcdModel(), Config{}, true))
	for _, tc := range []struct {
		name     string
		edit     func(*experiment.Setup)
		c        Config
		failover bool
		field    string
	}{
		{"one node cannot fail over", func(s *experiment.Setup) { s.Nodes, s.ShortLogs = 1, 0 }, Config{}, true, "Nodes"},
		{"range not [T, 2T)", func(s *experiment.Setup) { s.Tick = 0; s.TimeoutMax = 1500 * ms }, Config{}, false, "TimeoutMax"},
		{"timeout not whole ticks", func(s *experiment.Setup) { s.Tick = 0; s.TimeoutMin, s.TimeoutMax = 1050*ms, 2100*ms }, Config{}, false, "TimeoutMin"},
		{"heartbeat not whole ticks", func(*experiment.Setup) {}, Config{Tick: 30 * ms, ElectionTick: 10}, false, "Heartbeat"},
		{"election tick not above heartbeat tick", func(*experiment.Setup) {}, Config{ElectionTick: 1}, false, "ElectionTick"},
		{"negative override", func(*experiment.Setup) {}, Config{HeartbeatTick: -1}, false, "HeartbeatTick"},
		{"election tick beyond etcdadapter's limit", func(*experiment.Setup) {}, Config{Tick: time.Nanosecond, ElectionTick: 1<<30 + 1}, false, "ElectionTick"},
		{"candidates wait", func(s *experiment.Setup) { s.CandidatesWait = true }, Config{}, true, "CandidatesWait"},
		{"timer lateness", func(s *experiment.Setup) { s.Tick = 0; s.TimerLateness = sim.Fixed(ms) }, Config{}, true, "TimerLateness"},
		{"last-contact detection", func(s *experiment.Setup) { s.Detection = election.CheckLastContact }, Config{}, true, "Detection"},
		{"blocking disk", func(s *experiment.Setup) { s.DiskBlocks = true }, Config{}, true, "DiskBlocks"},
		{"harness crash", func(s *experiment.Setup) { s.Settle = time.Second }, Config{}, true, "Settle"},
		{"votes sticky without CheckQuorum", func(s *experiment.Setup) { s.CheckQuorum = false }, Config{}, true, "LeaderStickiness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := experiment.EtcdModel()
			tc.edit(&s)
			err := Check(s, tc.c, tc.failover)
			var fe *sim.FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.field, fe.Field)
			require.True(t, errors.Is(err, ErrInvalidConfig) || errors.Is(err, experiment.ErrInvalidConfig))
			require.NotContains(t, fe.Reason, "Node.", "etcdadapter's field names are mapped to the engine's")
			// A trial refuses too, without running.
			_, err = Failover{Setup: s, Config: tc.c}.Trial(context.Background(), 0, sim.TrialRand(1, 0), nil)
			require.Error(t, err)
		})
	}
	// The paper's model is LogCabin's, not etcd's.
	require.Error(t, Check(experiment.PaperModel(), Config{}, true))
}

// TestResult: results are described as the etcd engine's.
func TestResult(t *testing.T) {
	o := sim.Outcome{Time: 1200 * ms, Terms: 2, Splits: 1, Messages: 30, OK: true}
	s := experiment.EtcdModel()
	r := Failover{Setup: s}.Result([]sim.Outcome{o})
	require.Equal(t, "failover", r.Experiment)
	require.Equal(t, "etcd-engine", r.Model)
	require.Equal(t, "1000-2000ms", r.Label)
	require.Equal(t, 4, r.Alive)
	require.Equal(t, 1, r.Trials)
	require.Equal(t, 1200*ms, r.P50)
	// Overrides show in the description.
	r = Failover{Setup: s, Config: Config{Tick: 50 * ms, ElectionTick: 30, HeartbeatTick: 3}}.Result(nil)
	require.Equal(t, "1500-3000ms", r.Label)
	require.Equal(t, 150*ms, r.Setup.Heartbeat)
	require.Equal(t, 50*ms, r.Setup.Tick)
	b := Bootstrap{Setup: s}.Result(nil)
	require.Equal(t, "bootstrap", b.Experiment)
	require.Equal(t, "etcd-engine", b.Model)
}

// TestDeterministicParallel: the trials run through sim's runner give the
// same outcomes whatever the number of workers, and a trial alone
// reproduces its outcome from its seed and index.
func TestDeterministicParallel(t *testing.T) {
	seed := testseed.Seed(t)
	s := experiment.EtcdModel()
	s.Latency = sim.Normal(20*ms, 5*ms)
	exps := []experiment.Experiment{Failover{Setup: s}, Bootstrap{Setup: s.WithNodes(3)}}
	trials := []int{40, 40}
	one, err := experiment.Run(context.Background(), exps, trials, sim.RunOptions{Seed: seed, Workers: 1})
	require.NoError(t, err)
	four, err := experiment.Run(context.Background(), exps, trials, sim.RunOptions{Seed: seed, Workers: 4})
	require.NoError(t, err)
	for i, r := range one {
		require.Equal(t, r.Summary, four[i].Summary) // (Analytic is NaN: compare the summaries)
		require.Equal(t, 40, r.Trials)
		require.Zero(t, r.TimedOut)
	}
	// Failover: detection takes at least ElectionTick-1 ticks after the
	// last heartbeat, which came at most a tick before the crash.
	require.GreaterOrEqual(t, one[0].Min, 800*ms)
	// Trial 7 alone.
	o, err := Failover{Setup: s}.Trial(context.Background(), 7, sim.TrialRand(seed, 7), nil)
	require.NoError(t, err)
	again, err := Failover{Setup: s}.Trial(context.Background(), 7, sim.TrialRand(seed, 7), nil)
	require.NoError(t, err)
	require.Equal(t, o, again)
}

// TestTrace: a traced trial writes etcd's events in sim's format.
func TestTrace(t *testing.T) {
	var lines []string
	s := experiment.EtcdModel()
	o, err := Failover{Setup: s}.Trial(context.Background(), 0, sim.TrialRand(1, 0), func(l string) { lines = append(lines, l) })
	require.NoError(t, err)
	require.True(t, o.OK)
	require.NotEmpty(t, lines)
	require.Contains(t, strings.Join(lines, "\n"), "heartbeat broadcast; crash in", "the trial's faults are traced")
}
