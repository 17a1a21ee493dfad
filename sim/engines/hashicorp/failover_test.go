package hashicorp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/raftadapter"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
)

const ms = time.Millisecond

func TestCheck(t *testing.T) {
	s := experiment.HashicorpModel()
	require.NoError(t, Check(s))
	for _, tc := range []struct {
		edit  func(*experiment.Setup)
		field string
	}{
		{func(s *experiment.Setup) { s.Nodes = 1 }, "Nodes"},
		{func(s *experiment.Setup) { s.Nodes = raftadapter.MaxClusterNodes + 1 }, "Nodes"},
		{func(s *experiment.Setup) { s.TimeoutMin, s.TimeoutMax = ms, 2*ms }, "TimeoutMin"},
		{func(s *experiment.Setup) { s.TimeoutMax = 155 * ms }, "TimeoutMax"},
	} {
		s := experiment.HashicorpModel()
		tc.edit(&s)
		err := Check(s)
		require.ErrorIs(t, err, ErrInvalidConfig)
		var fe *sim.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, tc.field, fe.Field)
	}
}

// TestResult: raftadapter's trials map onto outcomes (a split vote costs
// a term) and summarize as the real cluster ran, in the simulator's
// output format.
func TestResult(t *testing.T) {
	require.Equal(t, sim.Outcome{Time: 300 * ms, Terms: 2, Splits: 1, OK: true},
		Outcome(raftadapter.Trial{OldTerm: 3, NewTerm: 5, Failover: 300 * ms}))
	require.Equal(t, sim.Outcome{Time: 200 * ms, Terms: 1, OK: true},
		Outcome(raftadapter.Trial{OldTerm: 3, NewTerm: 4, Failover: 200 * ms}))

	s := experiment.HashicorpModel()
	s.Nodes = 3
	s.Latency = sim.Fixed(ms)
	r := Result(s, []sim.Outcome{{Time: 200 * ms, Terms: 1, OK: true}}, 9)
	require.Equal(t, "failover", r.Experiment)
	require.Equal(t, "150-300ms", r.Label)
	require.Equal(t, "hashicorp-engine", r.Model)
	require.Equal(t, 2, r.Alive)
	require.Equal(t, uint64(9), r.Seed)
	require.Equal(t, 1, r.Trials)
	var b bytes.Buffer
	require.NoError(t, report.WriteJSON(&b, r, false))
	require.Contains(t, b.String(), `"latency":"fixed:1ms","prevote":true,"engine":"hashicorp"`)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	require.NotContains(t, m, "heartbeat_ms", "hashicorp's heartbeat is its own, not a setting")
	require.Equal(t, 0.0, m["params"].(map[string]any)["heartbeat_ms"], "no heartbeat of the election package")
}
