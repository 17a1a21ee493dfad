//go:build !race

package multiraft_test

const raceEnabled = false
