package experiment

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
)

func TestSetupValidate(t *testing.T) {
	ok := PaperModel()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		mod  func(*Setup)
		want string
	}{
		{func(s *Setup) { s.Nodes = 0 }, "Nodes"},
		{func(s *Setup) { s.TimeoutMin = 0 }, "TimeoutMin"},
		{func(s *Setup) { s.TimeoutMax = s.TimeoutMin - 1 }, "TimeoutMax"},
		{func(s *Setup) { s.Heartbeat = -1 }, "Heartbeat"},
		{func(s *Setup) { s.Settle = -1 }, "Settle"},
		{func(s *Setup) { s.Stickiness = 9 }, "Stickiness"},
		{func(s *Setup) { s.Heartbeat = s.TimeoutMin }, "Heartbeat"},
		{func(s *Setup) { s.TimeoutMin, s.TimeoutMax = 1, 1 }, "TimeoutMin"},
		{func(s *Setup) { s.Loss = 1 }, "Loss"},
		{func(s *Setup) { s.Duplicate = 2 }, "Duplicate"},
		{func(s *Setup) { s.ShortLogs = 4 }, "ShortLogs"},
		{func(s *Setup) { s.ShortLogs = -1 }, "ShortLogs"},
		{func(s *Setup) { s.Nodes, s.ShortLogs = 2, 1 }, "ShortLogs"},
		{func(s *Setup) { s.Granularity = -1 }, "Granularity"},
		{func(s *Setup) { s.MaxTime = -1 }, "MaxTime"},
	} {
		s := PaperModel()
		tc.mod(&s)
		err := s.Validate()
		fe := requireField(t, err, tc.want)
		require.NotContains(t, fe.Reason, "Setup.", "reasons name no Go fields")
	}
}

// TestSetupValidateLatencyLimit: a latency, disk or
// timer-noise model slower than the trial's time limit is refused.
func TestSetupValidateLatencyLimit(t *testing.T) {
	for _, tc := range []struct {
		edit  func(*Setup)
		field string
	}{
		{func(s *Setup) { s.Latency = sim.Uniform(0, math.MaxInt64) }, "Latency"},
		{func(s *Setup) { s.Latency = sim.Normal(2562047*time.Hour, 1000*time.Hour) }, "Latency"},
		{func(s *Setup) { s.Disk = sim.Fixed(61 * time.Second) }, "Disk"},
		{func(s *Setup) { s.TimerLateness = sim.Fixed(time.Hour); s.MaxTime = 30 * time.Minute }, "TimerLateness"},
	} {
		s := PaperModel()
		tc.edit(&s)
		fe := requireField(t, s.Validate(), tc.field)
		require.Contains(t, fe.Reason, "time limit")
	}
	s := PaperModel()
	s.Latency, s.MaxTime = sim.Fixed(time.Hour), 2*time.Hour
	require.NoError(t, s.Validate(), "within the limit")
}

func TestDescribe(t *testing.T) {
	require.Equal(t, "5 servers, latency normal:250µs,50µs, disk normal:2.6ms,500µs, timer lateness uniform:0s,200µs; "+
		"writes block the server, new leader writes 2 times before its first heartbeat, timers wait for the write, "+
		"a grant at a new term re-arms after the term write, candidates wait for their timeout, "+
		"keep their deadline when deposed, timeouts in whole milliseconds", PaperModel().Describe())
	require.Contains(t, HashicorpModel().Describe(), "last-contact detection, (pre-)votes refused while a leader is known, per-follower heartbeats every [hb, 2hb), crash 150ms-180ms after the leader is known (harness)")
	s := PlainModel()
	s.Loss = 0.1
	require.Contains(t, s.Describe(), "loss 0.1, dup 0")
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi time.Duration
	}{
		{"150ms-300ms", 150 * ms, 300 * ms},
		{"150-300ms", 150 * ms, 300 * ms},
		{"12-24ms", 12 * ms, 24 * ms},
		{"150ms", 150 * ms, 150 * ms},
		{"1s-1500ms", time.Second, 1500 * ms},
		{"0.5-1s", 500 * ms, time.Second},
		{"150ms-300", 150 * ms, 300 * ms}, // the unit on either end
		{"1.5s-2", 1500 * ms, 2 * time.Second},
	} {
		lo, hi, err := ParseRange(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.lo, lo, tc.in)
		require.Equal(t, tc.hi, hi, tc.in)
	}
	for _, bad := range []string{"", "fast", "300ms-150ms", "0-1s", "x-1s", "1s-y", "-5ms"} {
		_, _, err := ParseRange(bad)
		require.Error(t, err, bad)
	}
	// A missing unit is named as such, with the range that was meant.
	for in, want := range map[string]string{
		"150":     `"150": has no unit (want e.g. 150ms)`,
		"150-300": `"150-300": has no unit (want e.g. 150-300ms)`,
		"fast":    `"fast": is not a duration or a range (want e.g. 150ms or 150ms-300ms)`,
	} {
		_, _, err := ParseRange(in)
		require.ErrorContains(t, err, want, in)
	}
	require.Equal(t, "150-155ms", RangeLabel(150*ms, 155*ms))
	require.Equal(t, "1.5ms-2ms", RangeLabel(1500*time.Microsecond, 2*ms))
}

func TestSetupSet(t *testing.T) {
	s := PaperModel()
	for _, kv := range [][2]string{
		{"nodes", "7"}, {"timeout", "100-200ms"}, {"heartbeat", "20ms"}, {"latency", "uniform:1ms,2ms"},
		{"disk", "none"}, {"loss", "0.1"}, {"dup", "0.05"}, {"lateness", "fixed:1ms"}, {"granularity", "0s"},
		{"prevote", "true"}, {"checkquorum", "true"}, {"shortlogs", "1"}, {"candidateswait", "false"}, {"diskblocks", "false"},
		{"stickiness", "true"}, {"groupcommit", "true"}, {"leaderwrite", "false"}, {"keeptimer", "false"},
		{"hbjitter", "true"}, {"hbperpeer", "true"}, {"stickymode", "until-timeout"}, {"settle", "50ms"},
	} {
		require.NoError(t, s.Set(kv[0], kv[1]), kv)
	}
	require.Equal(t, 7, s.Nodes)
	require.Equal(t, 100*ms, s.TimeoutMin)
	require.Equal(t, "uniform:1ms,2ms", s.Latency.String())
	require.Nil(t, s.Disk)
	require.True(t, s.PreVote && s.CheckQuorum && s.LeaderStickiness && s.GroupCommit)
	require.False(t, s.CandidatesWait || s.DiskBlocks || s.LeaderWrite || s.KeepTimer)
	require.True(t, s.HeartbeatJitter && s.HeartbeatPerPeer)
	require.Equal(t, election.StickyUntilTimeout, s.Stickiness)
	require.Equal(t, 50*ms, s.Settle)
	require.NoError(t, s.Validate())
	ec := s.electionConfig()
	require.True(t, ec.Emulate.HeartbeatPerPeer && ec.LeaderStickiness && !ec.Emulate.WaitForVoteTimeout && !ec.Emulate.KeepTimerOnStepDown)
	require.Equal(t, repeated.Proportional(1), ec.HeartbeatJitter)
	require.Equal(t, election.StickyUntilTimeout, ec.Stickiness)
	for _, kv := range [][2]string{
		{"nodes", "x"}, {"nodes", "0"}, {"timeout", "9-1ms"}, {"heartbeat", "soon"}, {"latency", "warp:1"},
		{"loss", "1"}, {"dup", "-1"}, {"prevote", "maybe"}, {"shortlogs", "-1"}, {"colour", "red"},
		{"keeptimer", "sometimes"}, {"stickymode", "glue"}, {"settle", "-1s"}, {"settle", "later"},
	} {
		err := s.Set(kv[0], kv[1])
		if kv[0] == "colour" {
			require.Equal(t, kv[0], requireField(t, err, "").Value, "an unknown parameter is the value refused")
		} else {
			require.Equal(t, kv[1], requireField(t, err, kv[0]).Value)
		}
	}
	var sv SplitVote
	require.NoError(t, sv.Set("nodes", "5"))
	require.NoError(t, sv.Set("alive", "4"))
	require.NoError(t, sv.Set("l", "0.1"))
	require.NoError(t, sv.Set("model", "cluster"))
	require.NoError(t, sv.Set("range", "50ms"))
	require.NoError(t, sv.Set("latency", "uniform:1ms,2ms"))
	require.NoError(t, sv.Validate())
	require.Error(t, sv.Set("l", "2"))
	require.Error(t, sv.Set("model", "x"))
	require.Error(t, sv.Set("what", "x"))
}

func TestParseAxisAndGrid(t *testing.T) {
	a, err := ParseAxis("timeout=150-155ms,150-200ms")
	require.NoError(t, err)
	require.Equal(t, []string{"150-155ms", "150-200ms"}, a.Values)
	b, err := ParseAxis("latency=fixed:1ms,uniform:1ms,5ms,normal:5ms,2ms")
	require.NoError(t, err)
	require.Equal(t, []string{"fixed:1ms", "uniform:1ms,5ms", "normal:5ms,2ms"}, b.Values)
	c, err := ParseAxis("latency=uniform:1ms,5ms;fixed:2ms")
	require.NoError(t, err)
	require.Equal(t, []string{"uniform:1ms,5ms", "fixed:2ms"}, c.Values)
	for _, bad := range []string{"", "timeout", "=1,2", "nodes=", "nodes=1,,2"} {
		_, err := ParseAxis(bad)
		require.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
	g := Grid([]Axis{a, {Name: "nodes", Values: []string{"3", "5", "7"}}})
	require.Len(t, g, 6)
	require.Equal(t, "timeout=150-155ms nodes=3", GridLabel(g[0]))
	require.Equal(t, "timeout=150-200ms nodes=7", GridLabel(g[5]))
}

// TestMaxTime: a trial's limit is MaxTime, or DefaultMaxTime for 0.
func TestMaxTime(t *testing.T) {
	s := PaperModel()
	require.Equal(t, DefaultMaxTime, s.maxTime())
	s.MaxTime = 3 * time.Second
	require.Equal(t, 3*time.Second, s.maxTime())
}
