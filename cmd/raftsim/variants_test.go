package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/raftick/raftick/sim/experiment"
	"github.com/stretchr/testify/require"
)

func TestVariantFlagsExit2NamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"failover", "--candidate-timeout", "9-1ms"}, "--candidate-timeout"},
		{[]string{"failover", "--candidate-timeout", "soon"}, "--candidate-timeout"},
		{[]string{"bootstrap", "--candidate-backoff=maybe"}, "--candidate-backoff"},
		{[]string{"failover", "--crash", "3"}, "--crash"},
		{[]string{"failover", "--crash", "0"}, "--crash"},
		{[]string{"failover", "--nodes", "3", "--crash", "2"}, "--crash"},
		{[]string{"failover", "--crash-offset", "5ms"}, "--crash-offset"},
		{[]string{"failover", "--model", "hashicorp", "--crash-offset", "0"}, "--crash-offset"},
		{[]string{"failover", "--until", "never"}, "--until"},
		{[]string{"bootstrap", "--until", "default"}, "--until"},
		{[]string{"failover", "--engine", "hashicorp", "--crash", "2", "--nodes", "5"}, "--crash"},
		{[]string{"failover", "--engine", "hashicorp", "--candidate-timeout", "50-100ms"}, "--candidate-timeout"},
		{[]string{"sweep", "--over", "crash=3"}, "--over"},
		{[]string{"sweep", "--over", "until=never"}, "--over"},
		{[]string{"sweep", "--over", "candidatetimeout=9-1ms"}, "--over"},
		{[]string{"sweep", "--experiment", "bootstrap", "--over", "crash=1,2"}, "--over"},
		{[]string{"partition", "--shape", "donut"}, "--shape"},
		{[]string{"partition", "--model", "plain,quantum"}, "--model"},
		{[]string{"partition", "--for", "0s"}, "--for"},
		{[]string{"partition", "--nodes", "2"}, "--nodes"},
		{[]string{"partition", "--cdf", "--json"}, "--cdf"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) { requireUsageError(t, tc.args, tc.flag) })
	}
}

func TestVariantFlagsInHelp(t *testing.T) {
	for sub, flags := range map[string][]string{
		"failover":  {"--candidate-timeout", "--candidate-backoff", "--candidate-waits", "--crash ", "--crash-offset", "--until", "--lateness"},
		"bootstrap": {"--candidate-timeout", "--candidate-backoff", "--candidate-waits", "--until", "--lateness"},
		"sweep":     {"--candidate-timeout", "--crash ", "--crash-offset", "--until", "candidatetimeout", "candidatebackoff", "crashoffset"},
		"paper":     {"--candidate-timeout", "(default 15m0s)"},
		"partition": {"--shape", "--for", "follower-cut", "bare-quorum", "leader-minority", "chain", "one-way"},
		"tune":      {"--candidate-backoff"},
	} {
		code, out, errOut := raftsim(t, sub, "--help")
		require.Equal(t, 0, code, errOut)
		for _, f := range flags {
			require.Contains(t, out, f, sub)
		}
	}
	_, out, _ := raftsim(t, "bootstrap", "--help")
	require.NotContains(t, out, "--crash")
}

func TestVariantsRun(t *testing.T) {
	code, out, errOut := raftsim(t, "failover", "--crash", "2", "--crash-offset", "0", "--until", "majority",
		"--candidate-timeout", "100-150ms", "--candidate-backoff", "--candidate-waits=false", "--trials", "50", "--json")
	require.Equal(t, 0, code, errOut)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, 50.0, r["trials"])
	require.Equal(t, 3.0, r["alive"], "two of five crashed")
	code, out, errOut = raftsim(t, "failover", "--candidate-waits=false", "--trials", "10")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "candidates wait")
	code, out, errOut = raftsim(t, "failover", "--model", "plain", "--candidate-waits", "--trials", "10")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "candidates wait for their timeout")
	code, out, errOut = raftsim(t, "failover", "--noise", "uniform:0,100us", "--trials", "20")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "timer lateness uniform:0s,100µs")
	require.Empty(t, errOut, "--noise is a hidden alias of --lateness")
	code, out, errOut = raftsim(t, "sweep", "--over", "candidatebackoff=false,true", "--over", "until=elected,all", "--trials", "30")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "candidatebackoff=true until=elected")
	code, out, errOut = raftsim(t, "sweep", "--over", "crash=1,2", "--over", "crashoffset=uniform,0", "--trials", "30", "--csv")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 5, strings.Count(out, "\n"), out)
	code, out, errOut = raftsim(t, "sweep", "--over", "candidatetimeout=0,50-100ms", "--over", "candidateswait=false,true", "--trials", "30")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "candidatetimeout=50-100ms candidateswait=false")
}

func TestPartitionCommand(t *testing.T) {
	code, out, errOut := raftsim(t, "partition", "--model", "plain", "--shape", "one-way,follower-cut", "--for", "1m", "--trials", "1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 3+8, strings.Count(out, "\n"), out)
	require.Contains(t, out, "leaderless/h")
	code, out, errOut = raftsim(t, "partition", "--model", "all", "--shape", "chain", "--prevote", "--checkquorum", "--for", "1m", "--trials", "1", "--json")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, len(experiment.Models()), "one row per model")
	for _, l := range lines {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		require.Equal(t, "chain", r["shape"])
		require.Equal(t, true, r["prevote"])
		require.Equal(t, 0.0, r["elections_per_hour"], l)
	}
	code, out, errOut = raftsim(t, "partition", "--model", "plain", "--shape", "leader-minority", "--for", "1m", "--trials", "1", "--csv")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 5, strings.Count(out, "\n"))
	code, out, errOut = raftsim(t, "partition", "--model", "plain", "--shape", "one-way", "--for", "1m", "--trace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "partition one-way around leader")
}
