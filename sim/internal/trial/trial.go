package trial

import "time"

// DefaultMaxTime bounds a trial's measured interval in virtual time when
// its setup leaves MaxTime 0.
const DefaultMaxTime = 60 * time.Second

// MaxTime returns the time limit of a trial whose setup says d:
// d if positive, else DefaultMaxTime.
func MaxTime(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultMaxTime
}

// ShortLogsFit reports whether short of nodes servers may miss the last
// log entry in a failover trial: 0 always fits, otherwise the crashed
// leader and at least one more survivor need full logs, so short must be
// at most nodes-2.
func ShortLogsFit(short, nodes int) bool {
	return short == 0 || (short > 0 && short <= nodes-2)
}
