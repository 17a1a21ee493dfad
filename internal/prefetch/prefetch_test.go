package prefetch

import (
	"testing"
	"unsafe"
)

// Line is a hint and must not fault on any address, valid or not.
func TestLineNeverFaults(t *testing.T) {
	x := make([]byte, 256)
	base := uintptr(unsafe.Pointer(&x[0]))
	for _, a := range []uintptr{base, base + 255, 0, base + ^uintptr(0)>>1} {
		Line(a)
	}
	if x[0] != 0 || x[255] != 0 {
		t.Fatal("Line wrote to memory")
	}
}

// Range is a hint too: any address and length, and it returns.
func TestRangeNeverFaults(t *testing.T) {
	x := make([]byte, 512)
	base := uintptr(unsafe.Pointer(&x[0]))
	for _, c := range []struct{ a, n uintptr }{
		{base, 512}, {base + 1, 128}, {base + 63, 2}, {base, 0}, {0, 64}, {base + ^uintptr(0)>>2, 256}, {^uintptr(0) - 100, 200},
	} {
		Range(c.a, c.n)
	}
	if x[0] != 0 || x[511] != 0 {
		t.Fatal("Range wrote to memory")
	}
}
