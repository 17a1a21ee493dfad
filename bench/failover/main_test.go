package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOptionsCheck(t *testing.T) {
	good := options{groups: 30, storage: "memory", network: "memnet", runs: 1, timeout: time.Minute}
	require.NoError(t, good.check())
	for flag, o := range map[string]options{
		"-groups":  {groups: 2, storage: "memory", network: "memnet", runs: 1, timeout: time.Minute},
		"-storage": {groups: 30, storage: "disk", network: "memnet", runs: 1, timeout: time.Minute},
		"-network": {groups: 30, storage: "memory", network: "tcp", runs: 1, timeout: time.Minute},
		"-runs":    {groups: 30, storage: "memory", network: "memnet", runs: 0, timeout: time.Minute},
	} {
		err := o.check()
		require.Error(t, err, flag)
		require.Contains(t, err.Error(), flag)
	}
}

// TestRun runs a small failover on each storage and network: every lost
// group elects a new leader (it waits for that, not for a time).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	for _, o := range []options{
		{groups: 30, storage: "pebble", network: "inbox"},
		{groups: 30, storage: "file", network: "memnet", hibernate: true},
	} {
		o.runs, o.dir, o.timeout = 1, t.TempDir(), 2*time.Minute
		var out bytes.Buffer
		require.NoError(t, run(&out, o), out.String())
		require.True(t, strings.Contains(out.String(), "lost 10,"), out.String())
	}
}
