package multiraft

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReleaseReuses: a released batch's entry slices go to the next
// outbox slice large enough to need one, and small ones are not kept.
// sync.Pool may drop what it holds (at a collection, and at random under
// the race detector), so the test asks for one reuse in several tries.
func TestReleaseReuses(t *testing.T) {
	reused := false
	for range 50 {
		b := Batch{Heartbeats: make([]Heartbeat, 300, 400)}
		arr := &b.Heartbeats[:1][0]
		b.Release()
		require.Zero(t, b.Len(), "a released batch is empty")
		s := hbPool.reserve([]Heartbeat{{Group: 7}}, 299)
		require.Len(t, s, 1)
		require.Equal(t, GroupID(7), s[0].Group, "the entries queued already are kept")
		require.GreaterOrEqual(t, cap(s), 300)
		if &s[:1][0] == arr {
			reused = true
			break
		}
	}
	require.True(t, reused, "a released slice is reused")

	// A slice under minPooled entries is not kept: nothing the pool
	// holds is that small.
	small := Batch{Responses: make([]HeartbeatResponse, 3, minPooled-1)}
	smallArr := &small.Responses[0]
	small.Release()
	for {
		v, _ := respPool.p.Get().(*[]HeartbeatResponse)
		if v == nil {
			break
		}
		require.GreaterOrEqual(t, cap(*v), minPooled, "a small slice was pooled")
		require.NotSame(t, smallArr, &(*v)[:1][0], "a small slice was pooled")
	}
}
