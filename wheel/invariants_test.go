package wheel

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInvariantsHoldAndCatchCorruption: the rules checkLocked checks hold
// on a wheel in use, and a wheel whose bookkeeping is corrupted (a slot's
// occupied bit cleared under its timers) fails them. With the invariants
// tag every step checks them; this test runs with or without it.
func TestInvariantsHoldAndCatchCorruption(t *testing.T) {
	v, err := NewVirtual(DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	ts := make([]Timer, 200)
	for i := range ts {
		require.NoError(t, ts[i].Init(v.Wheel, func() {}))
		ts[i].Reset(time.Duration(i%50+1) * 3 * time.Millisecond)
	}
	for i := 0; i < len(ts); i += 3 {
		ts[i].Stop()
	}
	v.AdvanceTo(40 * time.Millisecond)
	v.mu.Lock()
	require.NotPanics(t, v.checkLocked)
	lv := &v.levels[0]
	idx, ok := lv.firstFrom(0)
	require.True(t, ok)
	lv.unmark(idx)
	require.PanicsWithValue(t, "wheel invariant: level 0 slot "+itoa(idx)+": occupied bit false, "+itoa(int(lv.buckets[idx].live))+" timers", v.checkLocked)
	lv.mark(idx)
	v.mu.Unlock()
}

func itoa(i int) string { return fmt.Sprint(i) }
