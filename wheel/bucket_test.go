package wheel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Timers moved earlier out of one slot, again and again, leave tombstones
// behind; the bucket is compacted instead of growing, what stays in it
// still fires, in order, and the chunks go back to the free list.
func TestBucketTombstonesCompact(t *testing.T) {
	v, err := NewVirtual(DefaultConfig())
	require.NoError(t, err)
	far := 500 * time.Millisecond
	var order []int
	stay := make([]*Timer, 5)
	for i := range stay {
		i := i
		stay[i], err = v.AfterFunc(far, func() { order = append(order, i) })
		require.NoError(t, err)
	}
	movers := make([]Timer, 40)
	moved := 0
	for i := range movers {
		require.NoError(t, movers[i].Init(v.Wheel, func() { moved++ }))
	}
	lv := &v.levels[0]
	b := &lv.buckets[lv.index(int64(far)/v.tick)]
	maxEntries := int32(0)
	for round := range 50 {
		for i := range movers {
			movers[i].Stop()     // lazily: it stays where it was
			movers[i].Reset(far) // into the same slot as stay
		}
		require.Equal(t, int32(len(stay)+len(movers)), b.live)
		for i := range movers {
			movers[i].Reset(far - time.Duration(100+round)*time.Millisecond) // earlier: a tombstone
		}
		checkStructure(t, v.Wheel)
		require.Equal(t, int32(len(stay)), b.live)
		maxEntries = max(maxEntries, b.live+b.dead)
	}
	// Compaction keeps the tombstones below the live timers plus a chunk.
	require.LessOrEqual(t, maxEntries, int32(len(stay))+chunkLen+1, "tombstones were not compacted")

	v.AdvanceTo(far)
	require.Equal(t, []int{0, 1, 2, 3, 4}, order, "the timers left in the compacted slot fire in order")
	require.Equal(t, len(movers), moved)
	checkStructure(t, v.Wheel)
	v.mu.Lock()
	defer v.mu.Unlock()
	require.Equal(t, v.chunks, v.nfree, "every chunk is back on the free list once the wheel is empty")
}

// In a steady state (a periodic timer re-armed from its callback) the
// wheel reuses its chunks and allocates nothing.
func TestBucketSteadyStateAllocatesNothing(t *testing.T) {
	v, err := NewVirtual(DefaultConfig())
	require.NoError(t, err)
	var tm Timer
	require.NoError(t, tm.Init(v.Wheel, func() { tm.Reset(75 * time.Millisecond) }))
	tm.Reset(75 * time.Millisecond)
	v.AdvanceBy(10 * time.Second) // every slot of level 0 visited
	require.Zero(t, testing.AllocsPerRun(2000, func() { v.AdvanceToNext() }))
	v.mu.Lock()
	defer v.mu.Unlock()
	require.LessOrEqual(t, v.chunks, 2, "a wheel with one timer needs one chunk (and may keep one spare)")
}
