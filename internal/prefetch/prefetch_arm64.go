package prefetch

// Line hints that the cache line holding addr will be read soon.
func Line(addr uintptr)

// Range hints that the cache lines holding addr through addr+n-1 (at least
// the first) will be read soon.
func Range(addr, n uintptr) {
	end := addr + n
	for a := addr &^ 63; ; a += 64 {
		Line(a)
		if a+64 >= end || a+64 < a {
			return
		}
	}
}
