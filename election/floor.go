package election

import (
	"time"

	"github.com/raftick/raftick/wheel"
)

// MinElectionTimeout is the smallest ElectionTimeout (and VoteTimeout) a
// Config accepts. An election timeout must outlast a heartbeat's trip
// from the leader and a vote's round trip with its disk write, or
// followers campaign before any leader can reach them and the group never
// keeps a leader; no network and disk answer within a millisecond, and
// the real-time wheel's default tick (wheel.DefaultConfig) is a
// millisecond, so a shorter timeout would also fire up to a whole
// timeout late. hashicorp/raft refuses timeouts under 5ms.
const MinElectionTimeout = time.Millisecond

// MinPeriod is the smallest period of a node's other timers
// (HeartbeatInterval, StepDownInterval, SnapshotInterval) a Config
// accepts: a timer that comes due more often than once a microsecond
// costs more than the time between its fires (a wheel fire and the
// message it sends take about that long), so the wheel would do nothing
// else.
const MinPeriod = time.Microsecond

// checkFloors refuses the durations of c (defaults applied) that no timer
// can honour: see MinElectionTimeout and MinPeriod.
func (c *Config) checkFloors() error {
	for _, f := range [...]struct {
		name  string
		d     time.Duration
		floor time.Duration
	}{
		{"ElectionTimeout", c.ElectionTimeout, MinElectionTimeout},
		{"VoteTimeout", c.VoteTimeout, MinElectionTimeout},
		{"HeartbeatInterval", c.HeartbeatInterval, MinPeriod},
		{"StepDownInterval", c.StepDownInterval, MinPeriod},
		{"SnapshotInterval", c.SnapshotInterval, MinPeriod},
	} {
		if err := floor(f.name, f.d, f.floor); err != nil {
			return err
		}
	}
	return nil
}

// floor refuses d, the value of field, if it is set (non-zero) and
// below min.
func floor(field string, d, min time.Duration) error {
	if d != 0 && d < min {
		return fieldErr(field, d, "is below the floor of %v (time.Duration counts nanoseconds: did you forget a unit such as time.Millisecond?)", min)
	}
	return nil
}

// fitWheel refuses the periods of c (defaults applied) that a real-time
// wheel w cannot honour: one below w's tick would fire up to a tick
// late, at the tick's pace instead of its own. A virtual wheel fires
// every timer at its exact deadline, so any period above the floors
// works there.
func (c *Config) fitWheel(w *wheel.Wheel) error {
	if w == nil || w.IsVirtual() {
		return nil
	}
	tick := w.Tick()
	for _, f := range [...]struct {
		name string
		d    time.Duration
	}{{"ElectionTimeout", c.ElectionTimeout}, {"VoteTimeout", c.VoteTimeout}} {
		if f.d < tick {
			return fieldErr(f.name, f.d, "must be at least the real-time wheel's tick (%v): a timer fires up to a tick late", tick)
		}
	}
	return nil
}
