package multiraft

import (
	"time"

	"github.com/raftick/raftick/election"
)

// checkFloors refuses the host's own durations that are set below
// election.MinPeriod, the floor of any periodic timer (the election
// template's durations have election's own floors): a period of
// nanoseconds is a unit forgotten, and a wheel would do nothing but fire
// that timer. NewHost further refuses periods below the wheel's tick.
func (c *Config) checkFloors() error {
	for _, f := range [...]struct {
		name string
		d    time.Duration
	}{
		{"HibernateAfter", c.HibernateAfter}, {"CoalesceWindow", c.CoalesceWindow},
		{"LivenessInterval", c.LivenessInterval}, {"LivenessTimeout", c.LivenessTimeout},
	} {
		if f.d != 0 && f.d < election.MinPeriod {
			return fieldErr(f.name, f.d, "is below the floor of %v (time.Duration counts nanoseconds: did you forget a unit?)", election.MinPeriod)
		}
	}
	return nil
}
