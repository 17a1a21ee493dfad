//go:build !amd64 && !arm64

package gid

// Current returns 0: this architecture has no implementation.
func Current() uintptr { return 0 }
