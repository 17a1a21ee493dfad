package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/bench/raftmix"
)

// TestSmoke runs every implementation briefly on a few hundred groups and
// checks that the output is sane: a result per run, heartbeats delivered,
// step-downs fired where there are timers, none early on timers. It checks
// no timing targets (the machine is shared).
func TestSmoke(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-groups", "300", "-impl", strings.Join(raftmix.Impls, ","),
		"-seconds", "0.25", "-warmup", "0.1", "-sample", "8", "-json"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	var got []raftmix.Result
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r raftmix.Result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "line %q", sc.Text())
		got = append(got, r)
	}
	require.Len(t, got, len(raftmix.Impls))
	require.Equal(t, raftmix.ImplNone, got[0].Impl, "the floor runs first")
	for _, r := range got {
		require.Equal(t, 300, r.Groups)
		require.Greater(t, r.Seconds, 0.2, "%s", r.Impl)
		require.Greater(t, r.Heartbeats, int64(0), "%s", r.Impl)
		require.Greater(t, r.HeartbeatPace, 0.3, "%s", r.Impl)
		require.Greater(t, r.CPUNsPerEvent, 0.0, "%s", r.Impl)
		if r.Impl == raftmix.ImplNone {
			require.Zero(t, r.StepDownFires)
			continue
		}
		if r.Impl == raftmix.ImplRaftick || r.Impl == raftmix.ImplStd {
			// Timers never fire early; tick loops catching up after a
			// stall (the race detector, a busy machine) may.
			require.Zero(t, r.EarlyFires, "%s fired a step-down early", r.Impl)
		}
		require.LessOrEqual(t, r.StepDownFires, r.StepDownDue, "%s", r.Impl)
		if r.Impl != raftmix.ImplTick100 { // may see no step-down in 0.25s
			require.Greater(t, r.StepDownFires, int64(0), "%s", r.Impl)
			require.Greater(t, r.LatenessSamples, 0, "%s", r.Impl)
			require.GreaterOrEqual(t, r.LatenessMaxMs, r.LatenessP99Ms)
			require.GreaterOrEqual(t, r.LatenessP99Ms, r.LatenessP50Ms)
		}
	}
	for _, r := range got {
		if r.Impl == raftmix.ImplRaftick {
			require.GreaterOrEqual(t, r.WakeupsPerSec, 0.0)
		}
	}

	// The table form prints a header, a row per run and the ratio lines.
	out.Reset()
	code = run([]string{"-groups", "50", "-impl", "raftick,none", "-seconds", "0.05", "-warmup", "0"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	text := out.String()
	require.Contains(t, text, "step-downs fired/due")
	require.Contains(t, text, " raftick ")
	require.Contains(t, text, " none ")
}

// TestHostSmoke runs raftick-host briefly on a few hundred groups over
// five nodes, half of them active, and checks the host's counters: the
// active groups' replicas are awake and the others asleep, heartbeats are
// coalesced, the heap is measured. It checks no timing targets.
func TestHostSmoke(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-groups", "200", "-impl", raftmix.ImplHost, "-nodes", "5", "-active", "0.5",
		"-seconds", "0.5", "-warmup", "0.3", "-json"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	var r raftmix.Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), "output %q", out.String())
	require.Equal(t, raftmix.ImplHost, r.Impl)
	require.Equal(t, 200, r.Groups)
	h := r.Host
	require.NotNil(t, h)
	require.Equal(t, 5, h.Nodes)
	require.Equal(t, 3, h.Replicas)
	require.Equal(t, 100, h.ActiveGroups)
	require.True(t, h.Coalesce)
	// The active groups' replicas were touched within the last heartbeat
	// period, so they are awake. (Others may wake too if a stall of the
	// machine looks like a silent node to liveness.)
	require.GreaterOrEqual(t, h.AwakeReplicas, 300)
	require.LessOrEqual(t, h.AwakeReplicas, 600)
	require.Greater(t, h.Touches, int64(0))
	require.Greater(t, h.Delivered, uint64(0))
	require.Greater(t, h.TimersFired, int64(0))
	require.Greater(t, h.MessagesPerSec, 0.0)
	require.Greater(t, h.BatchesPerSec, 0.0)
	require.Greater(t, h.Coalescing, 1.0, "heartbeats travel coalesced")
	require.Greater(t, h.HeapPerGroupAsleep, 0.0)
	require.Greater(t, h.HeapPerGroupEnd, 0.0)
	require.InDelta(t, h.HeapPerGroupAsleep/3, h.HeapPerReplicaAsleep, 1e-6)
	require.Greater(t, r.CPUNsPerEvent, 0.0)
	require.GreaterOrEqual(t, r.WakeupsPerSec, 0.0)
	require.Zero(t, r.StepDownFires, "step-downs live inside election.Node")

	// The table form prints the row, the host's lines and, for a second
	// group count, the CPU against the first.
	out.Reset()
	code = run([]string{"-groups", "30,60", "-impl", raftmix.ImplHost, "-active", "1,0.5",
		"-seconds", "0.1", "-warmup", "0"}, &out, &errb)
	require.Equal(t, 0, code, "stderr: %s", errb.String())
	text := out.String()
	require.Contains(t, text, " raftick-host ")
	require.Contains(t, text, "heap per group")
	require.Contains(t, text, "messages/s in")
	require.Contains(t, text, "vs")
	require.Contains(t, text, "for 30 groups at active 1")
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-groups", "0"},
		{"-groups", "10,x"},
		{"-impl", "raftick,bogus"},
		{"-seconds", "-1"},
		{"-seconds", "NaN"},
		{"-warmup", "abc"},
		{"-sample", "0"},
		{"-active", "1.5"},
		{"-active", "x"},
		{"-groups", "1,2,3", "-active", "1,0.5"},
		{"-impl", "raftick-host", "-nodes", "0"},
		{"-impl", "raftick-host", "-heartbeat", "2s", "-election-timeout", "1s"},
		{"-impl", "raftick-host", "-heartbeat", "-1s"},
		{"-nosuchflag"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		require.Equal(t, 2, run(args, &out, &errb), "%v", args)
		require.NotEmpty(t, errb.String(), "%v: no error message", args)
		require.Empty(t, out.String(), "%v: printed results", args)
	}
}
