package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlagsKeepTheirWord: flags that were accepted and ignored, or
// refused with a wrong reason, are refused with the right one (exit 2,
// one line naming the flag), and no help page names a hidden flag.
func TestFlagsKeepTheirWord(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", "--max-rounds", "-1"}, "--max-rounds: must not be negative"},
		{[]string{"multiraft", "--groups", "30", "--shard", "0/2"}, "--shard: is not available with multiraft"},
		{[]string{"partition", "--shard", "0/2"}, "--shard: is not available with partition"},
		{[]string{"partition", "--model", "all,nope"}, `--model: all names every model; it cannot be combined with other names, got "all,nope"`},
		{[]string{"partition", "--model", "plain,nope"}, `--model: unknown model "nope"`},
		{[]string{"partition", "--shape", "chain,all"}, "--shape: all names every shape"},
		{[]string{"failover", "--plot", filepath.Join(file, "x.png")}, `--plot: "` + file + `" is not a directory`},
		{[]string{"failover", "--plot", filepath.Join(file, "sub", "x.png")}, `--plot: "` + file + `" is not a directory`},
		{[]string{"failover", "--plot", filepath.Join(t.TempDir(), "missing", "x.png")}, "--plot: directory \""},
	} {
		code, out, errOut := raftsim(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "raftsim: "+tc.want, "%v", tc.args)
		require.Equal(t, 1, countLines(errOut), "one line: %q", errOut)
	}

	for _, cmd := range []string{"paper", "failover", "bootstrap", "sweep", "tune", "partition", "splitvote", "multiraft"} {
		code, out, _ := raftsim(t, cmd, "--help")
		require.Equal(t, 0, code)
		require.NotContains(t, out, "--noise", "%s --help names the hidden --noise", cmd)
	}
	// --noise still works, as the old name of --lateness.
	code, _, errOut := raftsim(t, "failover", "--trials", "5", "--noise", "none")
	require.Equal(t, 0, code, errOut)
}

func countLines(s string) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}
