package experiment

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/sim"
)

// TestTimersAtCrash: a follower's timer that starts at the crash fires a
// whole minimum timeout (150ms) after it at the earliest, so no trial is
// faster; with the paper's crash at a uniform point of the heartbeat
// interval the timers started at the last heartbeat, before the crash,
// and some trials are faster than 150ms.
func TestTimersAtCrash(t *testing.T) {
	seed := testseed.Seed(t)
	s := PlainModel()
	s.TimeoutMin, s.TimeoutMax = 150*ms, 300*ms
	s.Latency, s.Disk = sim.Fixed(ms), nil
	s.ShortLogs = 0
	s.Until = UntilElected
	run := func(atCrash bool) (below, trials int) {
		s.TimersAtCrash = atCrash
		for i := range 40 {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			out, err := RunFailover(context.Background(), Raftick{}, s, rng, nil)
			require.NoError(t, err)
			require.True(t, out.OK)
			if out.Time < s.TimeoutMin {
				below++
			}
			trials++
		}
		return below, trials
	}
	below, _ := run(true)
	require.Zero(t, below, "a timer started at the crash fires a whole timeout after it")
	below, n := run(false)
	require.Positive(t, below, "of %d trials, none was faster: timers started at the last heartbeat fire sooner", n)

	s.TimersAtCrash, s.Settle = true, 10*ms
	require.ErrorIs(t, s.Validate(), ErrInvalidConfig)
}

// TestBootstrapShortLogs: a server with a short log never wins a cold
// start while the short logs are fewer than a majority.
func TestBootstrapShortLogs(t *testing.T) {
	seed := testseed.Seed(t)
	s := PaperModel()
	s.ShortLogs = 2
	shortRe := regexp.MustCompile(`short logs: \[(.*)\]`)
	leaderRe := regexp.MustCompile(`n(\d+) +LeaderElected`)
	for i := range 30 {
		var log strings.Builder
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		out, err := RunBootstrap(context.Background(), Raftick{}, s, rng, func(line string) { log.WriteString(line + "\n") })
		require.NoError(t, err)
		require.True(t, out.OK)
		short := shortRe.FindStringSubmatch(log.String())
		require.NotNil(t, short)
		require.Len(t, strings.Fields(short[1]), 2)
		for _, m := range leaderRe.FindAllStringSubmatch(log.String(), -1) {
			require.NotContains(t, strings.Fields(short[1]), m[1], "trial %d: a short log won", i)
		}
	}
}
