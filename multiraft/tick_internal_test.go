package multiraft

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNextTickKeepsTheRate: a tick that runs a little late keeps the
// next one on the original schedule, so the heartbeats keep their rate;
// one half a period or more late starts the schedule again from now.
func TestNextTickKeepsTheRate(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct{ due, now, want time.Duration }{
		{100 * ms, 100 * ms, 145 * ms}, // on time
		{100 * ms, 112 * ms, 145 * ms}, // late: the next keeps its deadline
		{100 * ms, 122 * ms, 145 * ms}, // just under half a period late
		{100 * ms, 123 * ms, 168 * ms}, // half a period late: not made up for
		{100 * ms, 400 * ms, 445 * ms}, // a stall: no ticks back to back
	} {
		require.Equal(t, tc.want, nextTick(tc.due, tc.now, 45*ms), "due %v, run at %v", tc.due, tc.now)
	}
}
