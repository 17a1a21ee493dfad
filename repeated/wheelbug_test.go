package repeated_test

import (
	"flag"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

// Tests that demonstrate wheel defects found while building this package.
// They fail until the wheel is fixed, so they are skipped unless asked for:
//
//	go test ./repeated -run TestWheelBug -wheelbugs
var wheelBugs = flag.Bool("wheelbugs", false, "run the tests demonstrating known wheel bugs (they fail until fixed)")

// TestWheelBug_ResetBeforeCursorGrowsReadyHeap: once an advance (virtual)
// or a driver pass (real-time) has peeked at a timer, the wheel's cursor
// sits past that timer's tick and the timer lives in the ready heap. Every
// Reset to a deadline before the cursor then takes the locked path and
// pushes a new heap entry, leaving the old one behind as stale, and a stale
// entry is only dropped when it reaches the top of the heap. The heap, and
// the memory it holds, grow with the number of Resets made in the interval
// before time next reaches those entries. A Raft follower's heartbeat path
// (Reset with a random [T, 2T) timeout) does exactly this.
// DESIGN.md: "Extending a live timer's deadline must not take a lock or
// allocate"; "Zero allocations for a timer embedded in the caller's struct
// and reused".
func TestWheelBug_ResetBeforeCursorGrowsReadyHeap(t *testing.T) {
	if !*wheelBugs {
		t.Skip("known wheel bug; run with -wheelbugs")
	}
	v := newVirtual(t)
	var wt wheel.Timer
	require.NoError(t, wt.Init(v.Wheel, func() {}))
	wt.Reset(200 * ms)
	v.AdvanceTo(ms) // nothing due; the cursor moves to tick 201

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
