package invariants_test

import (
	"testing"

	"github.com/raftick/raftick/internal/invariants"
)

// TestEnabledFollowsTag: the constant is the build tag's, so that a test
// run with -tags invariants really runs the checks.
func TestEnabledFollowsTag(t *testing.T) {
	if invariants.Enabled != tagged {
		t.Fatalf("invariants.Enabled = %v in a build where the invariants tag is %v", invariants.Enabled, tagged)
	}
}
