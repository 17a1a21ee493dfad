//go:build race

package multiraft_test

// raceEnabled shortens the randomized tests: the race detector slows the
// virtual-time simulation, which runs on one goroutine, many times.
const raceEnabled = true
