//go:build amd64 || arm64

package gid

// Current returns an identity of the running goroutine, unique among the
// goroutines alive at the time (see the package documentation).
//
//go:noescape
func Current() uintptr
