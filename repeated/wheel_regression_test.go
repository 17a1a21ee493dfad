package repeated_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

// Regression tests for wheel defects found while building this package
// (all fixed in the wheel; kept here because they exercise the wheel the
// way a repeated timer does).

// TestWheelRegression_ResetBeforeCursorGrowsReadyHeap: an advance used to
// re-bucket slots past its target, so the wheel's cursor sat past a pending
// timer's tick and the timer lives in the ready heap. Every
// Reset to a deadline before the cursor then takes the locked path and
// pushes a new heap entry, leaving the old one behind as stale, and a stale
// entry is only dropped when it reaches the top of the heap. The heap, and
// the memory it holds, grow with the number of Resets made in the interval
// before time next reaches those entries. A Raft follower's heartbeat path
// (Reset with a random [T, 2T) timeout) does exactly this.
// DESIGN.md: "Extending a live timer's deadline must not take a lock or
// allocate"; "Zero allocations for a timer embedded in the caller's struct
// and reused".
func TestWheelRegression_ResetBeforeCursorGrowsReadyHeap(t *testing.T) {
	v := newVirtual(t)
	var wt wheel.Timer
	require.NoError(t, wt.Init(v.Wheel, func() {}))
	wt.Reset(200 * ms)
	v.AdvanceTo(ms) // nothing due; the cursor used to move to tick 201

	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for i := range 100_000 {
		// Alternate deadlines 151ms (before the cursor) and 251ms.
		wt.Reset(150*ms + time.Duration(i%2)*100*ms)
	}
	runtime.ReadMemStats(&m1)
	// Observed: ~6.3 MB (50,001 heap entries) for 100k Resets of one timer.
	require.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(64<<10),
		"Reset of one timer must not grow the wheel's memory")
}
