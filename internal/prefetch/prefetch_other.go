//go:build !amd64 && !arm64

package prefetch

// Line hints that the cache line holding addr will be read soon. On this
// architecture it does nothing.
func Line(addr uintptr) {}

// Range hints that the cache lines holding addr through addr+n-1 will be
// read soon. On this architecture it does nothing.
func Range(addr, n uintptr) {}
