package golden

import (
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Scenarios runs the datadriven files under dir, each with a fresh state
// of type S. The command named create makes the cluster a file runs on;
// any other command before it fails the test. run executes one command
// and returns its output; after each command, check (the safety checker
// over all events so far) must return nil.
func Scenarios[S any](t *testing.T, dir, create string, run func(t *testing.T, d *datadriven.TestData, s *S) string, check func(*S) error) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		var s S
		created := false
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != create && !created {
				d.Fatalf(t, "no cluster: use the %s command first", create)
			}
			created = true
			out := run(t, d, &s)
			if err := check(&s); err != nil {
				d.Fatalf(t, "safety: %v", err)
			}
			return out
		})
	})
}

// Duration returns the duration argument key of d (for=150ms), or def if
// d has none; a malformed value fails the test.
func Duration(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	t.Helper()
	var s string
	if !d.MaybeScanArgs(t, key, &s) {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "argument %s: %v", key, err)
	}
	return v
}
