//go:build !race

package election_test

const raceEnabled = false
