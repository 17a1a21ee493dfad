//go:build unix

package raftmix

import (
	"syscall"
	"time"
)

// processCPU returns the process's user+system CPU time, or -1.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
