package prefetch

// Line hints that the cache line holding addr will be read soon.
func Line(addr uintptr)
