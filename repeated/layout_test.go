package repeated

import (
	"testing"
	"unsafe"
)

// TestLayout guards the layout the hot paths rely on (see timer): the
// fire-and-re-arm state in the first two cache lines, the size a multiple
// of 128 bytes.
func TestLayout(t *testing.T) {
	var tm Timer
	if s := unsafe.Sizeof(tm); s%128 != 0 {
		t.Errorf("Sizeof(Timer) = %d, not a multiple of 128", s)
	}
	if o := unsafe.Offsetof(tm.mu); o != 64 {
		t.Errorf("Offsetof(mu) = %d, want 64 (right after the wheel timer's line)", o)
	}
	if end := unsafe.Offsetof(tm.triggers) + unsafe.Sizeof(tm.triggers); end > 128 {
		t.Errorf("the fire-and-re-arm state ends at byte %d, past the second line", end)
	}
}
