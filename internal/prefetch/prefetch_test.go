package prefetch

import (
	"testing"
	"unsafe"
)

// Line is a hint and must not fault on any address, valid or not.
func TestLineNeverFaults(t *testing.T) {
	x := make([]byte, 256)
	base := uintptr(unsafe.Pointer(&x[0]))
	for _, a := range []uintptr{base, base + 255, 0, base + 1<<40} {
		Line(a)
	}
	if x[0] != 0 || x[255] != 0 {
		t.Fatal("Line wrote to memory")
	}
}
