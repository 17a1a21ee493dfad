//go:build !unix

package raftmix

import "time"

// processCPU is not available here: -1.
func processCPU() time.Duration { return -1 }
