package prefetch

// Line hints that the cache line holding addr will be read soon.
func Line(addr uintptr)

// Range hints that the cache lines holding addr through addr+n-1 (at least
// the first) will be read soon, in one call.
func Range(addr, n uintptr)
