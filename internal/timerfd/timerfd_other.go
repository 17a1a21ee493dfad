//go:build !linux

package timerfd

// Timer exists only on Linux: New returns nil elsewhere.
type Timer struct{}

// New returns nil: no timerfd here.
func New() *Timer { return nil }

func (t *Timer) Arm(int64)  {}
func (t *Timer) Wait() bool { return false }
func (t *Timer) Close()     {}
