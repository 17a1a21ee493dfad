package gid

import (
	"runtime"
	"sync"
	"testing"
)

// TestCurrent checks that Current is stable within a goroutine and
// differs between goroutines alive at the same time.
func TestCurrent(t *testing.T) {
	me := Current()
	if me == 0 {
		if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
			t.Fatal("Current returned 0")
		}
		t.Skip("no implementation on " + runtime.GOARCH)
	}
	grow(64) // a stack that moves keeps its goroutine's identity
	if Current() != me {
		t.Fatal("Current changed within one goroutine")
	}
	const n = 16
	ids := make([]uintptr, n)
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(1)
	var all sync.WaitGroup
	for i := range n {
		all.Go(func() {
			ids[i] = Current()
			ready.Done()
			done.Wait() // all alive at once
		})
	}
	ready.Wait()
	seen := map[uintptr]bool{me: true}
	for i, id := range ids {
		if seen[id] {
			t.Fatalf("goroutine %d shares identity %#x", i, id)
		}
		seen[id] = true
	}
	done.Done()
	all.Wait()
}

//go:noinline
func grow(n int) int {
	var pad [256]byte
	if n == 0 {
		return int(pad[0])
	}
	return grow(n-1) + int(pad[n%256])
}

func BenchmarkCurrent(b *testing.B) {
	for b.Loop() {
		Current()
	}
}
