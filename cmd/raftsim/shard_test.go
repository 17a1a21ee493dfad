package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShardMergeIsTheUnshardedRun: the N shards of a command, merged,
// print exactly what the command prints alone, for every output form.
func TestShardMergeIsTheUnshardedRun(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"paper", "--seed", "7", "--trials", "30", "--max-time", "5s"},
		{"paper", "--seed", "7", "--trials", "30", "--max-time", "5s", "--json", "--cdf"},
		{"sweep", "--over", "nodes=3,5,7", "--trials", "20", "--csv"},
		{"failover", "--timeout", "150-155ms", "--trials", "30", "--json"},
		{"bootstrap", "--trials", "20"},
		{"splitvote", "--trials", "1000", "--l", "0.05,0.2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, whole, errOut := raftsim(t, args...)
			require.Equal(t, 0, code, errOut)
			var files []string
			for k := range 3 {
				// Shards may run with different worker counts.
				code, out, errOut := raftsim(t, append(args, "--shard", []string{"0/3", "1/3", "2/3"}[k], "--workers", []string{"1", "2", "3"}[k])...)
				require.Equal(t, 0, code, errOut)
				f := filepath.Join(dir, strings.ReplaceAll(strings.Join(args[:2], "-"), "=", "")+[]string{"a", "b", "c"}[k])
				require.NoError(t, os.WriteFile(f, []byte(out), 0o600))
				files = append(files, f)
			}
			// Any order of the files.
			code, merged, errOut := raftsim(t, "merge", files[2], files[0], files[1])
			require.Equal(t, 0, code, errOut)
			require.Equal(t, whole, merged)

			code, _, errOut = raftsim(t, "merge", files[0], files[1])
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "missing shards: 2/3")
			code, _, errOut = raftsim(t, "merge", files[0], files[1], files[1], files[2])
			require.Equal(t, 2, code)
			require.Contains(t, errOut, "are both shard 1/3")
		})
	}
}

func TestShardErrors(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"failover", "--shard", "3/3"}},
		{[]string{"failover", "--shard", "x"}},
		{[]string{"failover", "--shard", "0/0"}},
		{[]string{"failover", "--shard", "0/2", "--trace"}},
		{[]string{"failover", "--engine", "hashicorp", "--shard", "0/2"}},
		{[]string{"merge"}},
		{[]string{"merge", "/nonexistent"}},
	} {
		code, _, errOut := raftsim(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	}
	// Shards of two different commands do not merge.
	dir := t.TempDir()
	_, a, _ := raftsim(t, "failover", "--trials", "10", "--shard", "0/2")
	_, b, _ := raftsim(t, "failover", "--trials", "12", "--shard", "1/2")
	fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(fa, []byte(a), 0o600))
	require.NoError(t, os.WriteFile(fb, []byte(b), 0o600))
	code, _, errOut := raftsim(t, "merge", fa, fb)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "a shard of `raftsim failover --trials 12`")
}
