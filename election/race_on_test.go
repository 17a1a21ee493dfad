//go:build race

package election_test

// raceEnabled lowers the default number of random schedules: the race
// detector slows the simulation about 15 times, and a virtual-time cluster
// runs on one goroutine, so more schedules would find no more races.
const raceEnabled = true
