package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/bench/raftmix"
)

// TestMain lets the test binary serve as a burner process of
// -burn-cores (raftmix.Burn).
func TestMain(m *testing.M) {
	raftmix.Burn()
	os.Exit(m.Run())
}

// TestSmoke runs every implementation briefly on a few hundred groups and
// checks the output's structure: a result per run in order, the floor
// first, every field in its range and consistent with the others (fires
// no more than due, percentiles in order, no timer fired early, a tick only
// where there is a wheel), and the table's columns. It asserts no amount or
// pace of work: on a shared or loaded machine a quarter of a second may see
// any number of heartbeats and fires, none included.
func TestSmoke(t *testing.T) {
	out := runOK(t, "-groups", "300", "-impl", strings.Join(raftmix.Impls, ","),
		"-seconds", "0.25", "-warmup", "0.1", "-sample", "8", "-json")
	got := jsonLines[raftmix.Result](t, out)
	require.Len(t, got, len(raftmix.Impls))
	require.Equal(t, raftmix.ImplNone, got[0].Impl, "the floor runs first")
	for _, r := range got {
		require.Equal(t, 300, r.Groups)
		checkResult(t, r)
		if r.Impl == raftmix.ImplNone {
			require.Zero(t, r.StepDownFires)
		}
		if r.Impl == raftmix.ImplRaftick || r.Impl == raftmix.ImplRaftickKeep {
			require.Equal(t, 1.0, r.TickMs, "%s: the wheel's default tick", r.Impl)
		} else {
			require.Zero(t, r.TickMs, "%s has no wheel", r.Impl)
		}
	}

	// The table form prints a header, a row per run and the ratio lines.
	out = runOK(t, "-groups", "50", "-impl", "raftick,none", "-seconds", "0.05", "-warmup", "0")
	text := out
	require.Contains(t, text, "step-downs fired/due")
	require.Contains(t, text, " raftick ")
	require.Contains(t, text, " none ")
}

// checkResult checks what holds of any run's result whatever the
// machine's load: counters are not negative, fires are at most due, the
// lateness percentiles are in order, and timers never fire early (tick
// loops, etcd-tick and etcd-loop included, catching up after a stall, the race detector
// or a busy machine, may).
func checkResult(t *testing.T, r raftmix.Result) {
	t.Helper()
	require.Greater(t, r.Seconds, 0.0, "%s", r.Impl)
	require.GreaterOrEqual(t, r.Heartbeats, int64(0), "%s", r.Impl)
	require.GreaterOrEqual(t, r.HeartbeatPace, 0.0, "%s", r.Impl)
	require.GreaterOrEqual(t, r.CPUNsPerEvent, 0.0, "%s", r.Impl)
	require.GreaterOrEqual(t, r.StepDownFires, int64(0), "%s", r.Impl)
	require.GreaterOrEqual(t, r.SpuriousElections, int64(0), "%s", r.Impl)
	require.LessOrEqual(t, r.StepDownFires, r.StepDownDue, "%s", r.Impl)
	if r.LatenessSamples > 0 {
		require.GreaterOrEqual(t, r.LatenessMaxMs, r.LatenessP99Ms, "%s", r.Impl)
		require.GreaterOrEqual(t, r.LatenessP99Ms, r.LatenessP50Ms, "%s", r.Impl)
	}
	if r.Impl != raftmix.ImplTick10 && r.Impl != raftmix.ImplTick100 && r.Impl != raftmix.ImplEtcd && r.Impl != raftmix.ImplEtcdLoop {
		require.Zero(t, r.EarlyFires, "%s fired a step-down early", r.Impl)
	}
	require.True(t, r.WakeupsPerSec == -1 || r.WakeupsPerSec >= 0, "%s: wake-ups/s %v", r.Impl, r.WakeupsPerSec)
	require.Zero(t, r.WheelPanics, "%s: callbacks panicked on the wheel (see the log)", r.Impl)
}

// TestTick runs raftick on a wheel with a coarser tick than the default
// (-tick): the run reports the tick, and no step-down fires early.
func TestTick(t *testing.T) {
	out := runOK(t, "-groups", "200", "-impl", "raftick", "-tick", "10ms",
		"-seconds", "0.3", "-warmup", "0.1", "-sample", "4", "-json")
	got := jsonLines[raftmix.Result](t, out)
	require.Len(t, got, 1)
	r := got[0]
	require.Equal(t, 10.0, r.TickMs, "the wheel's tick")
	checkResult(t, r)
}

// TestRaftickKeep runs raftick-keep (raftick with the election timer's
// Reset keeping its drawn delay) with a tick loop and the floor: no
// step-down fires early, and it gets raftick's ratio lines under its own
// name; raftick's ratios keep their format beside it.
func TestRaftickKeep(t *testing.T) {
	out := runOK(t, "-groups", "300", "-impl", "raftick-keep,tick10,none",
		"-seconds", "0.25", "-warmup", "0.1", "-sample", "8", "-json")
	got := jsonLines[raftmix.Result](t, out)
	require.Len(t, got, 3)
	r := got[1]
	require.Equal(t, raftmix.ImplRaftickKeep, r.Impl)
	checkResult(t, r)
	require.GreaterOrEqual(t, r.WakeupsPerSec, 0.0)

	out = runOK(t, "-groups", "50", "-impl", "raftick-keep,tick10,none", "-seconds", "0.05", "-warmup", "0")
	require.Contains(t, out, " raftick-keep ")
	require.Contains(t, out, "  50 groups: raftick-keep/tick10: cpu per event ")
	require.NotContains(t, out, "raftick/", "raftick did not run")

	// With both, raftick's lines come first, as they were, then
	// raftick-keep's, and the medians pair them alike.
	res := func(impl string, cores, perEvent float64) raftmix.Result {
		return raftmix.Result{Impl: impl, Cores: cores, CPUNsPerEvent: perEvent}
	}
	results := map[string]raftmix.Result{
		raftmix.ImplNone:        res(raftmix.ImplNone, 0.1, 10),
		raftmix.ImplTick10:      res(raftmix.ImplTick10, 0.3, 20),
		raftmix.ImplRaftick:     res(raftmix.ImplRaftick, 0.2, 10),
		raftmix.ImplRaftickKeep: res(raftmix.ImplRaftickKeep, 0.15, 5),
	}
	require.Equal(t, []string{
		"raftick/tick10: cpu per event 0.50x, cpu above floor 0.50x (0.100 vs 0.200 cores)",
		"raftick-keep/tick10: cpu per event 0.25x, cpu above floor 0.25x (0.050 vs 0.200 cores)",
	}, ratios(results))
	lines := medians([]string{raftmix.ImplNone, raftmix.ImplRaftick, raftmix.ImplRaftickKeep, raftmix.ImplTick10},
		[]map[string]raftmix.Result{results, results})
	require.Len(t, lines, 3)
	require.True(t, strings.HasPrefix(lines[1], "raftick/tick10: median cpu per event 0.50x"), lines[1])
	require.True(t, strings.HasPrefix(lines[2], "raftick-keep/tick10: median cpu per event 0.25x"), lines[2])
}

// TestHostSmoke runs raftick-host briefly on a few hundred groups over
// five nodes, half of them active, and checks the structure of its
// result: the run's shape, counters in their ranges, the heap measured.
// It asserts no amount of work done (how many touches, messages or fires
// a half second holds depends on the machine's load).
func TestHostSmoke(t *testing.T) {
	out := runOK(t, "-groups", "200", "-impl", raftmix.ImplHost, "-nodes", "5", "-active", "0.5",
		"-seconds", "0.5", "-warmup", "0.3", "-json")
	var r raftmix.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r), "output %q", out)
	require.Equal(t, raftmix.ImplHost, r.Impl)
	require.Equal(t, 200, r.Groups)
	h := r.Host
	require.NotNil(t, h)
	require.Equal(t, 5, h.Nodes)
	require.Equal(t, 3, h.Replicas)
	require.Equal(t, 100, h.ActiveGroups)
	require.True(t, h.Coalesce)
	require.GreaterOrEqual(t, h.AwakeReplicas, int64(0))
	require.LessOrEqual(t, h.AwakeReplicas, int64(600), "200 groups of 3 replicas")
	require.GreaterOrEqual(t, h.Touches, int64(0))
	require.GreaterOrEqual(t, h.TimersFired, int64(0))
	require.GreaterOrEqual(t, h.MessagesPerSec, 0.0)
	require.GreaterOrEqual(t, h.BatchesPerSec, 0.0)
	require.Greater(t, h.HeapPerGroupAsleep, 0.0)
	require.InDelta(t, h.HeapPerGroupAsleep/3, h.HeapPerReplicaAsleep, 1e-6)
	require.GreaterOrEqual(t, r.CPUNsPerEvent, 0.0)
	require.GreaterOrEqual(t, r.WakeupsPerSec, 0.0)
	// Fires are the leaders' checks against an expected number (not a
	// count of owed ones), so they may exceed it; with coalescing a host
	// checks its leaders at every tick (nine tenths of the heartbeat
	// interval), and the lateness is the checks' own.
	require.GreaterOrEqual(t, r.StepDownFires, int64(0))
	require.Equal(t, int64(math.Round(r.Seconds*100/0.045)), r.StepDownDue, "100 active groups, a check every tick (45ms)")
	require.GreaterOrEqual(t, r.HeartbeatPace, 0.0)
	if r.LatenessSamples > 0 {
		require.GreaterOrEqual(t, r.LatenessMaxMs, r.LatenessP99Ms)
		require.GreaterOrEqual(t, r.LatenessP99Ms, r.LatenessP50Ms)
	}
	require.Zero(t, r.EarlyFires, "a probe fired early")
	require.Zero(t, r.WheelPanics, "callbacks panicked on the wheel (see the log)")

	// The table form prints the row, the host's lines and, for a second
	// group count, the CPU against the first.
	out = runOK(t, "-groups", "30,60", "-impl", raftmix.ImplHost, "-active", "1,0.5",
		"-seconds", "0.1", "-warmup", "0")
	text := out
	require.Contains(t, text, " raftick-host ")
	require.Contains(t, text, "heap per group")
	require.Contains(t, text, "messages/s in")
	require.Contains(t, text, "vs")
	require.Contains(t, text, "for 30 groups at active 1")
}

// TestBurn runs raftick-host with a burn inside the window and checks the
// shape of what it reports: three phases that make up the window, a count
// of elections per second of it, and the phase lines of the table.
func TestBurn(t *testing.T) {
	out := runOK(t, "-groups", "30", "-impl", raftmix.ImplHost, "-seconds", "1.5", "-warmup", "0.1",
		"-burn-cores", "1", "-burn-at", "0.5s", "-burn-for", "0.5s", "-json")
	var r raftmix.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r), "output %q", out)
	p := r.Phases
	require.NotNil(t, p)
	require.Equal(t, 1, p.BurnCores)
	require.Equal(t, 0.5, p.BurnAtSec)
	require.Equal(t, 0.5, p.BurnForSec)
	var secs float64
	var elections int64
	for k := range p.Seconds {
		require.GreaterOrEqual(t, p.Seconds[k], 0.0)
		require.GreaterOrEqual(t, p.Elections[k], int64(0))
		require.GreaterOrEqual(t, p.HeartbeatPace[k], 0.0)
		require.GreaterOrEqual(t, p.CheckRate[k], 0.0)
		secs += p.Seconds[k]
		elections += p.Elections[k]
	}
	require.LessOrEqual(t, secs, r.Seconds, "the phases lie within the window")
	require.Len(t, p.ElectionsPerSec, 2, "a count per second of the window, the last partial")
	var perSec int64
	for _, c := range p.ElectionsPerSec {
		perSec += c
	}
	require.Equal(t, elections, perSec)
	require.LessOrEqual(t, elections, r.SpuriousElections)
	require.GreaterOrEqual(t, p.LastElectionAfterBurnSec, 0.0)

	out = runOK(t, "-groups", "30", "-impl", raftmix.ImplHost, "-seconds", "0.3", "-warmup", "0",
		"-burn-cores", "1", "-burn-at", "0.1s", "-burn-for", "0.1s")
	require.Contains(t, out, "burn: 1 cores from 0.1s for 0.1s of the window")
	require.Contains(t, out, "burn: during ")
	require.Contains(t, out, "burn: elections per second: ")
}

// TestCrash runs raftick-host with node 1 crashed inside the window and
// checks the shape of what it reports: the groups node 1 led, those
// re-elected on another node with their failover times in order, and the
// line under the row (no timing is asserted: the machine may be loaded).
func TestCrash(t *testing.T) {
	out := runOK(t, "-groups", "30", "-impl", raftmix.ImplHost, "-seconds", "1.5", "-warmup", "0.2",
		"-crash-at", "0.3s", "-json")
	var r raftmix.Result
	require.NoError(t, json.Unmarshal([]byte(out), &r), "output %q", out)
	c := r.Crash
	require.NotNil(t, c)
	require.Equal(t, 0.3, c.CrashAtSec)
	require.Positive(t, c.Lost, "node 1 led groups (a third, as bootstrapped)")
	require.LessOrEqual(t, c.Recovered, c.Lost)
	require.LessOrEqual(t, c.FailoverP50Ms, c.FailoverP99Ms)
	require.LessOrEqual(t, c.FailoverP99Ms, c.FailoverMaxMs)
	require.Positive(t, c.ElectionTimeoutMs)

	out = runOK(t, "-groups", "30", "-impl", raftmix.ImplHost, "-seconds", "0.5", "-warmup", "0", "-crash-at", "0.1s")
	require.Contains(t, out, "crash: node 1 at 0.1s: ")
}

// TestProductSmoke runs raftick-node, etcd-tick and etcd-loop briefly and
// checks the structure of their results, as TestSmoke does for the timer
// rows.
func TestProductSmoke(t *testing.T) {
	impls := []string{raftmix.ImplNode, raftmix.ImplEtcd, raftmix.ImplEtcdLoop}
	out := runOK(t, "-groups", "60", "-impl", strings.Join(impls, ","), "-etcd-workers", "2",
		"-seconds", "0.3", "-warmup", "0.2", "-sample", "4", "-json")
	verdicts := jsonLines[jsonResult](t, out)
	for _, v := range verdicts {
		require.NotNil(t, v.KeepsUp, "%s: a verdict", v.Impl)
		require.Equal(t, *v.KeepsUp, v.Short == "", "%s: %q", v.Impl, v.Short)
	}
	got := jsonLines[raftmix.Result](t, out)
	require.Len(t, got, len(impls))
	for i, r := range got {
		require.Equal(t, impls[i], r.Impl)
		require.Equal(t, 60, r.Groups)
		checkResult(t, r)
	}
	require.Equal(t, 1.0, got[0].TickMs, "raftick-node's wheel has the default tick")
	require.Zero(t, got[1].TickMs, "etcd-tick has no wheel")
	require.NotNil(t, got[1].Etcd, "etcd-tick reports its pool")
	require.Equal(t, 2, got[1].Etcd.Workers)
	require.GreaterOrEqual(t, got[1].Etcd.TicksDropped, int64(0))
	require.Nil(t, got[2].Etcd, "etcd-loop has no pool")

	out = runOK(t, "-groups", "20", "-impl", "none,"+strings.Join(impls, ","), "-seconds", "0.05", "-warmup", "0")
	for _, impl := range impls {
		require.Contains(t, out, " "+impl+" ")
	}
	require.Contains(t, out, "20 groups: etcd-tick: 3 nodes x ")
	require.Contains(t, out, "raftick-node/etcd-loop: cores ")
}

// TestProductRatios checks the lines comparing raftick-node and
// raftick-host with etcd-tick: cores only, per round and as medians.
func TestProductRatios(t *testing.T) {
	res := func(impl string, cores float64) raftmix.Result {
		return raftmix.Result{Impl: impl, Cores: cores, CPUNsPerEvent: 100}
	}
	round := func(etcd float64) map[string]raftmix.Result {
		return map[string]raftmix.Result{
			raftmix.ImplNone: res(raftmix.ImplNone, 0.01),
			raftmix.ImplNode: res(raftmix.ImplNode, 0.2),
			raftmix.ImplHost: res(raftmix.ImplHost, 0.1),
			raftmix.ImplEtcd: res(raftmix.ImplEtcd, etcd),
		}
	}
	require.Equal(t, []string{
		"raftick-node/etcd-tick: cores 0.50x (0.200 vs 0.400)",
		"raftick-host/etcd-tick: cores 0.25x (0.100 vs 0.400)",
	}, ratios(round(0.4)))
	lines := medians([]string{raftmix.ImplNone, raftmix.ImplNode, raftmix.ImplHost, raftmix.ImplEtcd},
		[]map[string]raftmix.Result{round(0.4), round(0.2), round(0.8)})
	require.Equal(t, []string{
		"median cores: none 0.010, raftick-node 0.200 (0.190 above floor), raftick-host 0.100 (0.090 above floor), etcd-tick 0.400 (0.390 above floor)",
		"raftick-node/etcd-tick: median cores 0.50x (0.25x to 1.00x)",
		"raftick-host/etcd-tick: median cores 0.25x (0.12x to 0.50x)",
	}, lines)
}

// TestKeepsUp checks the verdict printed under the rows that run Raft's
// election.
func TestKeepsUp(t *testing.T) {
	good := raftmix.Result{Impl: raftmix.ImplHost, Cores: 0.5, HeartbeatPace: 1.11, StepDownDelivered: 1,
		LatenessSamples: 10, LatenessP99Ms: 1.5}
	require.Equal(t, "keeps up on 0.500 cores", keepsUp(good))
	bad := good
	bad.SpuriousElections, bad.HeartbeatPace, bad.StepDownDelivered, bad.LatenessP99Ms, bad.EarlyFires = 3, 0.9, 0.5, 7, 2
	bad.WheelPanics = 4
	require.Equal(t, "falls behind on 0.500 cores: 3 spurious elections, heartbeat pace 0.9000 < 0.99, "+
		"step-downs fired/due 0.5000 < 0.974, lateness p99 7.00 ms > 2 ms, 4 callbacks panicked on the wheel, 2 early", keepsUp(bad))
	node := bad
	node.Impl = raftmix.ImplNode
	require.Contains(t, keepsUp(node), "step-downs fired/due 0.5000 < 0.99,")
	etcd := good
	etcd.Impl, etcd.EarlyFires = raftmix.ImplEtcd, 5
	require.Equal(t, "keeps up on 0.500 cores", keepsUp(etcd), "a tick loop's early ticks")
	none := good
	none.LatenessSamples = 0
	require.Contains(t, keepsUp(none), "no lateness sampled")
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
		{"-tick", "-1ms"},
		{"-tick", "2h"},
		{"-tick", "soon"},
		{"-rounds", "0"},
		{"-rounds", "1001"},
		{"-rounds", "two"},
		{"-impl", "raftick", "-burn-cores", "1", "-burn-for", "1s"},
		{"-impl", "raftick-host", "-burn-cores", "1", "-burn-at", "9s", "-burn-for", "2s", "-seconds", "10"},
		{"-impl", "raftick-host", "-burn-cores", "1", "-seconds", "10"},
		{"-impl", "raftick-host", "-burn-cores", "-1"},
		{"-impl", "raftick-host", "-burn-cores", "65", "-burn-for", "1s"},
		{"-impl", "raftick-host", "-burn-cores", "1", "-burn-at", "-1s", "-burn-for", "1s"},
		{"-impl", "raftick", "-crash-at", "1s"},
		{"-impl", "raftick-host", "-crash-at", "10s", "-seconds", "10"},
		{"-impl", "raftick-host", "-crash-at", "-1s"},
		{"-impl", "etcd-tick", "-etcd-workers", "-1"},
		{"-impl", "etcd-tick", "-etcd-workers", "1025"},
		{"-nosuchflag"},
		{"extra"},
	} {
		var out, errb bytes.Buffer
		require.Equal(t, 2, run(args, &out, &errb), "%v", args)
		require.NotEmpty(t, errb.String(), "%v: no error message", args)
		require.Empty(t, out.String(), "%v: printed results", args)
	}
}

// TestRounds runs two rounds and checks that every run is reported with
// its round, and that the table ends with the medians of the rounds.
func TestRounds(t *testing.T) {
	out := runOK(t, "-groups", "50", "-impl", "raftick,tick10,none", "-seconds", "0.05", "-warmup", "0",
		"-rounds", "2", "-json")
	got := jsonLines[jsonResult](t, out)
	require.Len(t, got, 6)
	for i, r := range got {
		require.Equal(t, 1+i/3, r.Round, "run %d", i)
		require.Equal(t, []string{raftmix.ImplNone, raftmix.ImplRaftick, raftmix.ImplTick10}[i%3], r.Impl,
			"run %d: each round runs the floor first, then the rest in order", i)
		require.Equal(t, 50, r.Groups)
	}

	out = runOK(t, "-groups", "50", "-impl", "raftick,tick10,none", "-seconds", "0.05", "-warmup", "0",
		"-rounds", "2")
	text := out
	require.Contains(t, text, "50 groups, round 1/2: raftick/tick10: cpu per event")
	require.Contains(t, text, "50 groups, round 2/2: raftick/tick10: cpu per event")
	require.Contains(t, text, "50 groups, 2 rounds: median cores: none ")
	require.Contains(t, text, "50 groups, 2 rounds: raftick/tick10: median cpu per event")

	// One round keeps the JSON of one run as it was: no round field.
	out = runOK(t, "-groups", "20", "-impl", "none", "-seconds", "0.02", "-warmup", "0", "-json")
	require.NotContains(t, out, `"round"`)
}

func TestMedianAndSpread(t *testing.T) {
	xs := []float64{3, 1, 2}
	require.Equal(t, 2.0, median(xs))
	require.Equal(t, []float64{3, 1, 2}, xs, "median leaves its input alone")
	require.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	require.True(t, math.IsNaN(median(nil)))
	require.Equal(t, "2.00x (1.00x to 3.00x)", spread(xs))

	// A round whose floor is at or above the other's cores has no ratio
	// above the floor, and the medians leave it out.
	res := func(impl string, cores, perEvent float64) raftmix.Result {
		return raftmix.Result{Impl: impl, Cores: cores, CPUNsPerEvent: perEvent}
	}
	round := func(floor, tick, rt float64) map[string]raftmix.Result {
		return map[string]raftmix.Result{
			raftmix.ImplNone:    res(raftmix.ImplNone, floor, 10),
			raftmix.ImplTick10:  res(raftmix.ImplTick10, tick, 20),
			raftmix.ImplRaftick: res(raftmix.ImplRaftick, rt, 40),
		}
	}
	lines := medians([]string{raftmix.ImplNone, raftmix.ImplTick10, raftmix.ImplRaftick},
		[]map[string]raftmix.Result{round(0.1, 0.2, 0.3), round(0.1, 0.15, 0.25), round(0.2, 0.2, 0.5)})
	require.Equal(t, []string{
		"median cores: none 0.100, tick10 0.200 (0.050 above floor), raftick 0.300 (0.200 above floor)",
		"raftick/tick10: median cpu per event 2.00x (2.00x to 2.00x), median cpu above floor 2.50x (2.00x to 3.00x) over 2 rounds with a ratio",
	}, lines)
}

// runOK runs the command with args, requires it to succeed, and returns
// what it printed.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(args, &out, &errb), "args %v, stderr: %s", args, errb.String())
	return out.String()
}

// jsonLines decodes the output of a -json run, an object per line.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var got []T
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "line %q", sc.Text())
		got = append(got, r)
	}
	return got
}
