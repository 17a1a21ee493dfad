package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a buffer that goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// interrupted runs raftsim with args in-process as main does and sends
// the process a real SIGINT once the run has work to show (its first
// trial finished): no clock decides when.
func interrupted(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	self, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	var out, errb lockedBuffer
	code = runMain(args, &out, &errb, func() {
		if err := self.Signal(os.Interrupt); err != nil {
			t.Errorf("cannot interrupt: %v", err)
		}
	})
	return code, out.String(), errb.String()
}

// interruptRuns are runs of every subcommand far too long to finish
// before the interrupt that follows their first trial.
var interruptRuns = [][]string{
	{"paper", "--trials", "1000000"},
	{"failover", "--trials", "100000000"},
	{"failover", "--engine", "hashicorp", "--nodes", "3", "--trials", "1000000"},
	{"failover", "--engine", "etcd", "--trials", "100000000"},
	{"bootstrap", "--trials", "100000000"},
	{"splitvote", "--trials", "100000000"},
	{"sweep", "--over", "nodes=3,5", "--trials", "100000000"},
	{"tune", "--trials", "100000000", "--stable-trials", "1000000"},
	{"partition", "--model", "plain", "--for", "1m", "--trials", "100000000"},
	{"multiraft", "--groups", "3000", "--nodes", "3", "--settle", "100000h"},
	{"ticks", "--trials", "100000000", "--stable-trials", "1000000"},
}

// TestInterruptCompare: an interrupted compare exits 130, says how many of
// its runs finished, and prints no comparison (compare writes no records).
func TestInterruptCompare(t *testing.T) {
	code, out, errOut := interrupted(t, "compare", "--trials", "100000000", "--timeout", "12-24ms")
	require.Equal(t, 130, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
	require.Regexp(t, `interrupted: 0 of 3 runs finished`, out)
	require.NotContains(t, out, "KS")
}

// TestInterruptEverySubcommand: an interrupted run exits 130, marks its
// table and every record as interrupted with the trials requested and
// finished, and gives no verdict or recommendation.
func TestInterruptEverySubcommand(t *testing.T) {
	verdicts := []string{"recommended:", "runner-up:", "no candidate is feasible", "The paper's figures beside", "shape (as in the paper)", "<- best"}
	for _, args := range interruptRuns {
		t.Run(strings.Join(args[:3], " "), func(t *testing.T) {
			code, out, errOut := interrupted(t, args...)
			require.Equal(t, 130, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			require.Contains(t, errOut, "raftsim: interrupt: stopping the trials")
			require.Contains(t, out, "interrupted: ", "the table says it is partial")
			require.Regexp(t, `interrupted: \d+ of \d+ (failover )?(trials|windows|candidates|runs) finished`, out)
			for _, v := range verdicts {
				require.NotContains(t, out, v)
			}

			code, out, errOut = interrupted(t, append(args, "--json")...)
			require.Equal(t, 130, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			recs := checkJSONRecords(t, args[0], out)
			partial := false
			for _, r := range recs {
				require.Equal(t, true, r["interrupted"], "every record is marked")
				require.NotEqual(t, "tune-verdict", r["record"], "no verdict")
				if r["trials"] != r["trials_requested"] {
					partial = true
				}
				if best, ok := r["best"].(bool); ok {
					require.False(t, best, "no recommendation")
				}
			}
			require.True(t, partial, "some record has fewer trials than requested")
		})
	}
}

// TestInterruptedRecordsSayPartial: the trials of an interrupted
// failover's record are what finished, less than requested.
func TestInterruptedRecordsSayPartial(t *testing.T) {
	code, out, _ := interrupted(t, "failover", "--trials", "100000000", "--json")
	require.Equal(t, 130, code)
	var m struct {
		Interrupted bool `json:"interrupted"`
		Trials      int  `json:"trials"`
		Requested   int  `json:"trials_requested"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &m))
	require.True(t, m.Interrupted)
	require.Equal(t, 100000000, m.Requested)
	require.Less(t, m.Trials, m.Requested)
}
