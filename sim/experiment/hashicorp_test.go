package experiment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

// hashicorp3 is the hashicorp model for 3 servers and T = 100ms, the
// setting compared with real hashicorp/raft clusters in README.
func hashicorp3() Setup {
	s := HashicorpModel()
	s.Nodes = 3
	s.TimeoutMin, s.TimeoutMax, s.Heartbeat, s.Settle = 100*ms, 200*ms, 10*ms, 100*ms
	return s
}

// TestFailoverSettle checks the harness-like crash of Setup.Settle: nobody
// campaigns at once, the servers elect a leader on their own, and the
// leader crashes Settle plus [0, TimeoutMin/5) after every server follows
// it; without Settle, server 1 campaigns at once and the crash follows a
// heartbeat broadcast.
func TestFailoverSettle(t *testing.T) {
	seed := testseed.Seed(t)
	for _, settle := range []time.Duration{0, 100 * ms} {
		s := hashicorp3()
		s.Settle = settle
		for i := range 20 {
			var lines []string
			o, err := Failover{s}.Trial(context.Background(), i, sim.TrialRand(seed, i), func(l string) { lines = append(lines, l) })
			require.NoError(t, err)
			require.True(t, o.OK)
			text := strings.Join(lines, "\n")
			var setupAt, crashAt float64
			for _, l := range lines {
				f := strings.Fields(l)
				at := parseMS(t, f[0])
				switch {
				case strings.Contains(l, "setup done"):
					setupAt = at
				case strings.HasSuffix(l, " crash"):
					crashAt = at
				}
			}
			if settle == 0 {
				require.Contains(t, text, "(campaign)")
				require.Contains(t, text, "heartbeat broadcast; crash in")
				require.NotContains(t, text, "settling")
				continue
			}
			require.NotContains(t, text, "(campaign)", "nobody campaigns at once")
			require.NotContains(t, text, "heartbeat broadcast")
			require.Contains(t, text, "settling; crash in")
			wait := crashAt - setupAt
			require.GreaterOrEqual(t, wait, 100.0, "trial %d", i)
			// The trace prints whole microseconds, so a wait just under
			// 120ms can read as 120.000 between two rounded times.
			require.Less(t, wait, 120.0+0.002, "trial %d", i)
		}
	}
}

func parseMS(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	_, err := fmt.Sscanf(strings.TrimSuffix(s, "ms"), "%g", &v)
	require.NoError(t, err, s)
	return v
}

// TestHashicorpModelStickiness: in the hashicorp model a survivor refuses
// (pre-)votes as long as it knows the crashed leader, so a new leader is
// elected only once a quorum of survivors have each timed out; with the
// time-based stickiness the first survivor to time out wins at once. With
// 3 servers the failover is the later of the two survivors' detections
// instead of the earlier one: far slower, never split.
func TestHashicorpModelStickiness(t *testing.T) {
	seed := testseed.Seed(t)
	until := hashicorp3()
	contact := until
	contact.Stickiness = election.StickyByContact
	const n = 400
	res, err := Run(context.Background(), []Experiment{Failover{until}, Failover{contact}}, []int{n, n}, sim.RunOptions{Seed: seed})
	require.NoError(t, err)
	su, sc := res[0], res[1]
	t.Logf("until-timeout: p50 %v p90 %v; by contact: p50 %v p90 %v", su.P50, su.P90, sc.P50, sc.P90)
	require.Equal(t, n, su.Trials)
	require.Greater(t, su.P50, sc.P50+40*ms)
	require.Greater(t, su.Mean, sc.Mean+40*ms)
	require.Zero(t, su.SplitVoteRate, "pre-vote and zero latency: no split votes")
	// Detection alone takes more than T minus a heartbeat period; the
	// last of two [T, 2T) timers is at most about 3T after the crash.
	require.Greater(t, su.Min, 80*ms)
	require.Less(t, su.Max, 320*ms)
}

func TestModels(t *testing.T) {
	require.Equal(t, "paper, plain, hashicorp, etcd or ocaml-raft", ModelNames())
	for _, m := range Models() {
		got, err := ModelNamed(m.Name)
		require.NoError(t, err)
		require.Equal(t, m.Name, got.Name)
		require.NoError(t, m.Setup().Validate(), m.Name)
		require.NotEmpty(t, m.Doc)
	}
	_, err := ModelNamed("quantum")
	requireField(t, err, "Model")

	plain := PlainModel()
	require.False(t, plain.DiskBlocks || plain.LeaderWrite || plain.CandidatesWait || plain.KeepTimer)
	require.True(t, plain.GroupCommit)
	require.Zero(t, plain.Granularity)
	require.Nil(t, plain.TimerLateness)

	// The hashicorp model's timing rules: T means [T, 2T), heartbeat T/10,
	// crash T after the leader settled; other ranges are refused.
	hc, _ := ModelNamed("hashicorp")
	s := hc.Setup()
	require.NoError(t, hc.Timing(&s, 100*ms, 100*ms, 0))
	require.Equal(t, [4]time.Duration{100 * ms, 200 * ms, 10 * ms, 100 * ms}, [4]time.Duration{s.TimeoutMin, s.TimeoutMax, s.Heartbeat, s.Settle})
	require.NoError(t, hc.Timing(&s, 50*ms, 100*ms, 7*ms))
	require.Equal(t, 7*ms, s.Heartbeat)
	requireField(t, hc.Timing(&s, 150*ms, 155*ms, 0), "TimeoutMax")
	paper, _ := ModelNamed("paper")
	s = paper.Setup()
	require.NoError(t, paper.Timing(&s, 150*ms, 155*ms, 0))
	require.Equal(t, [3]time.Duration{150 * ms, 155 * ms, 0}, [3]time.Duration{s.TimeoutMin, s.TimeoutMax, s.Heartbeat})

	c := TuneConfig{Base: hc.Setup()}
	c.Base.Heartbeat = 0
	require.NoError(t, hc.Tune(&c))
	require.Equal(t, []float64{1}, c.Spreads)
	require.Equal(t, 0.1, c.HeartbeatRatio)
	require.Equal(t, 1.0, c.SettleRatio)
	c.Spreads = []float64{0.5}
	requireField(t, hc.Tune(&c), "Spreads")
	c = TuneConfig{Spreads: []float64{0.5}}
	require.NoError(t, paper.Tune(&c))
	require.Equal(t, TuneConfig{Spreads: []float64{0.5}}, c, "other models keep the search")

	// WithNodes keeps the paper's short logs where they fit.
	require.Equal(t, 2, PaperModel().WithNodes(4).ShortLogs)
	require.Equal(t, 0, PaperModel().WithNodes(3).ShortLogs)
	require.Equal(t, 2, PaperModel().WithNodes(7).ShortLogs)
}
