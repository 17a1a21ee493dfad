//go:build !linux

package realtime

import "time"

// sleeper is a runtime timer where no timerfd exists: deliveries are then
// up to about a millisecond late (Stats shows it).
type sleeper struct{ fb *timerSleeper }

func newSleeper() sleeper              { return sleeper{newTimerSleeper()} }
func (s *sleeper) arm(d time.Duration) { s.fb.arm(d) }
func (s *sleeper) wait() bool          { return s.fb.wait() }
func (s *sleeper) close()              { s.fb.close() }
