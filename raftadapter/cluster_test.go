package raftadapter

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

var (
	logLevel = flag.String("raftlog", "off", "hclog level for hashicorp/raft in harness tests (trace, debug, info, warn, error, off)")
)

// TestMain checks that every goroutine started by a test — hashicorp/raft's
// own, the transports' listeners and connection handlers, the harness's
// LeaderCh readers and the bridge's workers — has stopped at the end. No
// goroutine is ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testSeed returns the seed of t's latency draws (the -seed flag, or a
// fresh one) and logs how to reproduce them.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	return testseed.Seed(t)
}

func testLogger(t *testing.T) hclog.Logger {
	t.Helper()
	l, err := NewLogger(os.Stderr, *logLevel)
	require.NoError(t, err)
	return l
}

// fixedLatency and uniformLatency stand in for package sim's models.
type fixedLatency time.Duration

func (f fixedLatency) Sample(*rand.Rand) time.Duration { return time.Duration(f) }
func (f fixedLatency) String() string                  { return "fixed:" + time.Duration(f).String() }

type uniformLatency struct{ lo, hi time.Duration }

func (u uniformLatency) Sample(r *rand.Rand) time.Duration {
	return u.lo + time.Duration(r.Int64N(int64(u.hi-u.lo)))
}
func (u uniformLatency) String() string { return fmt.Sprintf("uniform:%v,%v", u.lo, u.hi) }

// testClusterConfig: 3 nodes, HeartbeatTimeout = ElectionTimeout = et.
func testClusterConfig(t *testing.T, kind TransportKind, et time.Duration) ClusterConfig {
	cc := DefaultClusterConfig()
	cc.Transport = kind
	cc.Timing.ElectionTimeout = et
	cc.Seed = testSeed(t)
	cc.Logger = testLogger(t)
	return cc
}

// failoverBound is the generous upper bound on one failover in tests: the
// expected value is 1.5-3 HeartbeatTimeouts, but CI runs -race on 2 shared
// cores.
const failoverBound = 5 * time.Second

func checkTrial(t *testing.T, tr Trial) {
	t.Helper()
	t.Logf("failover %v -> %v: detected %v, elected %v, all know %v, terms %d -> %d",
		tr.OldLeader, tr.NewLeader, tr.Detected, tr.Elected, tr.Failover, tr.OldTerm, tr.NewTerm)
	require.NotEmpty(t, tr.NewLeader)
	require.NotEqual(t, tr.OldLeader, tr.NewLeader)
	require.Greater(t, tr.NewTerm, tr.OldTerm)
	require.Positive(t, tr.Failover)
	require.Less(t, tr.Failover, failoverBound)
	require.Positive(t, tr.Elected)
	require.LessOrEqual(t, tr.Elected, tr.Failover, "the winner observes itself before the last survivor does")
	if tr.Detected > 0 {
		require.LessOrEqual(t, tr.Detected, tr.Elected, "a survivor clears the dead leader before anyone can win")
	}
}

func TestClusterFailover(t *testing.T) {
	for _, kind := range []TransportKind{TransportInmem, TransportTCP} {
		t.Run(kind.String(), func(t *testing.T) {
			cc := testClusterConfig(t, kind, 100*time.Millisecond)
			if kind == TransportInmem {
				cc.Latency = uniformLatency{200 * time.Microsecond, 2 * time.Millisecond}
			}
			c, err := NewCluster(cc)
			require.NoError(t, err)
			defer func() { require.NoError(t, c.Shutdown()) }()
			require.Equal(t, []raft.ServerID{"n1", "n2", "n3"}, c.IDs())

			ctx, cancel := context.WithTimeout(context.Background(), failoverBound)
			defer cancel()
			leader, err := c.WaitLeader(ctx)
			require.NoError(t, err)
			require.Equal(t, raft.Leader, c.Raft(leader).State())

			tr, err := c.CrashLeader(ctx)
			require.NoError(t, err)
			require.Equal(t, leader, tr.OldLeader)
			checkTrial(t, tr)
			require.False(t, c.Alive(leader))
			require.Equal(t, raft.Shutdown, c.Raft(leader).State())
			got, ok := c.Leader()
			require.True(t, ok)
			require.Equal(t, tr.NewLeader, got)

			// The crashed node is unreachable, and that is counted.
			require.ErrorIs(t, c.Crash(leader), ErrNodeDown)
			st := c.Stats()
			require.Positive(t, st.RPCs)
			if cc.Latency != nil {
				require.Positive(t, st.Delayed)
				require.LessOrEqual(t, st.MaxDelay, 2*time.Millisecond)
			}
		})
	}
}

// TestClusterPartition isolates the leader: the majority elects a new
// leader, the old one steps down when its lease runs out (it cannot reach a
// quorum), and after healing the cluster agrees on one leader again.
func TestClusterPartition(t *testing.T) {
	cc := testClusterConfig(t, TransportInmem, 100*time.Millisecond)
	c, err := NewCluster(cc)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*failoverBound)
	defer cancel()
	old, err := c.WaitLeader(ctx)
	require.NoError(t, err)

	require.NoError(t, c.Partition([]raft.ServerID{old}))
	require.Eventually(t, func() bool {
		if c.Raft(old).State() == raft.Leader {
			return false
		}
		for _, id := range c.IDs() {
			if id != old && c.Raft(id).State() == raft.Leader {
				return true
			}
		}
		return false
	}, failoverBound, 5*time.Millisecond, "majority elects a new leader, isolated leader steps down")
	require.Positive(t, c.Stats().Dropped)

	c.Heal()
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	require.NotEqual(t, old, leader, "the old leader's term is stale; it cannot win back at once")

	require.ErrorIs(t, c.Partition([]raft.ServerID{"n9"}), ErrUnknownNode)
	require.ErrorContains(t, c.Partition([]raft.ServerID{"n1"}, []raft.ServerID{"n1"}), "more than one group")
}

func TestClusterCrashErrors(t *testing.T) {
	cc := testClusterConfig(t, TransportInmem, 50*time.Millisecond)
	cc.Nodes = 1
	c, err := NewCluster(cc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), failoverBound)
	defer cancel()
	leader, err := c.WaitLeader(ctx)
	require.NoError(t, err)
	require.Equal(t, raft.ServerID("n1"), leader)
	require.ErrorIs(t, c.Crash("zz"), ErrUnknownNode)
	require.NoError(t, c.Crash("n1"))
	_, err = c.CrashLeader(ctx)
	require.ErrorIs(t, err, ErrNoLeader)
	require.NoError(t, c.Shutdown())
	require.NoError(t, c.Shutdown(), "idempotent")
	_, err = c.WaitLeader(ctx)
	require.ErrorIs(t, err, ErrClusterShutdown)
	require.ErrorIs(t, c.Crash("n1"), ErrClusterShutdown)
	_, err = c.CrashLeader(ctx)
	require.ErrorIs(t, err, ErrClusterShutdown)
}

// TestReload re-tunes a live node through ReloadConfig.
func TestReload(t *testing.T) {
	cc := testClusterConfig(t, TransportInmem, 100*time.Millisecond)
	c, err := NewCluster(cc)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown()) }()
	r := c.Raft("n1")
	before := r.ReloadableConfig()

	require.NoError(t, Reload(r, Retune{ElectionTimeout: 60 * time.Millisecond, VoteTimeout: 120 * time.Millisecond}))
	rc := r.ReloadableConfig()
	require.Equal(t, 60*time.Millisecond, rc.HeartbeatTimeout)
	require.Equal(t, 120*time.Millisecond, rc.ElectionTimeout)
	require.Equal(t, before.TrailingLogs, rc.TrailingLogs, "other reloadable fields are kept")
	require.Equal(t, before.SnapshotInterval, rc.SnapshotInterval)
	require.Equal(t, before.SnapshotThreshold, rc.SnapshotThreshold)

	require.NoError(t, Reload(r, Retune{ElectionTimeout: 200 * time.Millisecond}))
	require.Equal(t, 200*time.Millisecond, r.ReloadableConfig().ElectionTimeout, "VoteTimeout 0 keeps 120ms, raised to ElectionTimeout")

	// Zero fields keep the current values: Retune{} changes nothing.
	require.NoError(t, Reload(r, Retune{VoteTimeout: 300 * time.Millisecond}))
	require.NoError(t, Reload(r, Retune{}))
	rc = r.ReloadableConfig()
	require.Equal(t, []time.Duration{200 * time.Millisecond, 300 * time.Millisecond}, []time.Duration{rc.HeartbeatTimeout, rc.ElectionTimeout})
	require.NoError(t, Reload(r, Retune{ElectionTimeout: 200 * time.Millisecond, VoteTimeout: 200 * time.Millisecond}))

	cases := []struct {
		rt    Retune
		field string
		text  string
	}{
		{Retune{ElectionTimeout: 4 * time.Millisecond}, "Retune.ElectionTimeout", "at least 5ms"},
		{Retune{ElectionTimeout: -time.Second}, "Retune.ElectionTimeout", "at least 5ms"},
		{Retune{VoteTimeout: 100 * time.Millisecond}, "Retune.VoteTimeout", ">= HeartbeatTimeout"},
		{Retune{ElectionTimeout: 100 * time.Millisecond, VoteTimeout: 50 * time.Millisecond}, "Retune.VoteTimeout", ">= HeartbeatTimeout"},
		{Retune{ElectionTimeout: 100 * time.Millisecond, VoteTimeout: -1}, "Retune.VoteTimeout", "negative"},
		// The lease (50ms, fixed at creation) is longer than 40ms: only
		// hashicorp can see that.
		{Retune{ElectionTimeout: 40 * time.Millisecond}, "Retune.ElectionTimeout", "LeaderLeaseTimeout"},
	}
	for _, tc := range cases {
		err := Reload(r, tc.rt)
		require.ErrorIs(t, err, ErrInvalidTiming, "%+v", tc.rt)
		var te *TimingError
		require.True(t, errors.As(err, &te))
		require.Equal(t, tc.field, te.Field)
		require.Contains(t, err.Error(), tc.text)
	}
	require.Equal(t, 200*time.Millisecond, r.ReloadableConfig().HeartbeatTimeout, "failed reloads change nothing")
	require.ErrorIs(t, Reload(nil, Retune{}), ErrNilRaft)
}

func TestFailoverTrials(t *testing.T) {
	cfg := DefaultFailoverConfig()
	cfg.Cluster = testClusterConfig(t, TransportInmem, 50*time.Millisecond)
	cfg.Trials = 3
	var calls []int
	cfg.Progress = func(done, total int, tr Trial) {
		require.Equal(t, 3, total)
		calls = append(calls, done)
		checkTrial(t, tr)
	}
	trials, err := FailoverTrials(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, trials, 3)
	require.Equal(t, []int{1, 2, 3}, calls)

	// Failover returns the same measure as plain durations.
	cfg.Trials = 1
	cfg.Progress = nil
	ds, err := Failover(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Positive(t, ds[0])
	require.Less(t, ds[0], failoverBound)
}

func TestFailoverCancel(t *testing.T) {
	cfg := DefaultFailoverConfig()
	cfg.Cluster = testClusterConfig(t, TransportInmem, 50*time.Millisecond)
	cfg.Trials = 100
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(done, total int, tr Trial) { cancel() }
	trials, err := FailoverTrials(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "trial 2 of 100")
	require.Len(t, trials, 1, "the finished trial is returned")
}

func TestConfigValidation(t *testing.T) {
	ok := DefaultFailoverConfig()
	require.NoError(t, ok.Validate())
	cases := []struct {
		name string
		mod  func(*FailoverConfig)
		text string
	}{
		{"no nodes", func(c *FailoverConfig) { c.Cluster.Nodes = 0 }, "ClusterConfig.Nodes 0"},
		{"too many nodes", func(c *FailoverConfig) { c.Cluster.Nodes = MaxClusterNodes + 1 }, "ClusterConfig.Nodes"},
		{"bad timing", func(c *FailoverConfig) { c.Cluster.Timing.ElectionTimeout = time.Millisecond }, "Timing.ElectionTimeout (1ms)"},
		{"bad transport", func(c *FailoverConfig) { c.Cluster.Transport = 7 }, "ClusterConfig.Transport TransportKind(7)"},
		{"negative rpc timeout", func(c *FailoverConfig) { c.Cluster.RPCTimeout = -1 }, "ClusterConfig.RPCTimeout"},
		{"one node", func(c *FailoverConfig) { c.Cluster.Nodes = 1 }, "FailoverConfig.Cluster.Nodes 1"},
		{"no trials", func(c *FailoverConfig) { c.Trials = 0 }, "FailoverConfig.Trials 0"},
		{"negative settle", func(c *FailoverConfig) { c.Settle = -1 }, "FailoverConfig.Settle"},
		{"negative start timeout", func(c *FailoverConfig) { c.StartTimeout = -1 }, "FailoverConfig.StartTimeout"},
		{"negative trial timeout", func(c *FailoverConfig) { c.TrialTimeout = -1 }, "FailoverConfig.TrialTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultFailoverConfig()
			tc.mod(&c)
			err := c.Validate()
			require.ErrorContains(t, err, tc.text)
			require.Contains(t, err.Error(), "raftadapter: ")
			_, ferr := Failover(context.Background(), c)
			require.Equal(t, err, ferr)
		})
	}
	_, err := NewCluster(ClusterConfig{})
	require.ErrorContains(t, err, "ClusterConfig.Nodes")

	k, err := ParseTransportKind("tcp")
	require.NoError(t, err)
	require.Equal(t, TransportTCP, k)
	_, err = ParseTransportKind("udp")
	require.ErrorContains(t, err, `"udp"`)
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	l, err := NewLogger(&buf, "WARN")
	require.NoError(t, err)
	l.Info("hidden")
	l.Warn("shown", "k", 1)
	require.NotContains(t, buf.String(), "hidden")
	require.Contains(t, buf.String(), "shown")
	require.NotContains(t, buf.String(), "raftick", "the logger carries no name of raftick's")

	_, err = NewLogger(&buf, "verbose")
	require.ErrorContains(t, err, `"verbose"`)
	_, err = NewLogger(nil, "info")
	require.Error(t, err)
}

// TestHarnessLogsThroughHclog checks that hashicorp/raft's logs reach the
// harness's hclog logger, per node.
func TestHarnessLogsThroughHclog(t *testing.T) {
	var buf syncBuffer
	l, err := NewLogger(&buf, "info")
	require.NoError(t, err)
	cc := testClusterConfig(t, TransportInmem, 50*time.Millisecond)
	cc.Logger = l
	c, err := NewCluster(cc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), failoverBound)
	defer cancel()
	_, err = c.WaitLeader(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Shutdown())
	out := buf.String()
	require.Contains(t, out, " n1: entering follower state", "nodes log under their own names")
	require.Contains(t, out, " harness: cluster started")
	require.NotContains(t, out, "raftick.n1")
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
