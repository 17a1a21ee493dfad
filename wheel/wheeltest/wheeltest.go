// Package wheeltest provides timing wheels for the tests of packages
// built on package wheel (repeated, election, multiraft and the
// simulator's engines).
package wheeltest

import (
	"github.com/raftick/raftick/wheel"
	"github.com/raftick/raftick/wheel/internal/hook"
)

// NewInBubble is wheel.New for a test in a testing/synctest bubble: the
// driver never sleeps on its timerfd (a goroutine reading a file is not
// durably blocked, so the bubble's clock would not move while it naps);
// it sleeps on the runtime's timers, whose time is the bubble's. Inside
// a bubble a real-time wheel's test then runs in no wall time and its
// timing is exact: time.Sleep and the wheel's deadlines move the
// bubble's clock, not the machine's. Call it inside synctest.Test and
// Stop the wheel before the bubble's function returns.
func NewInBubble(cfg wheel.Config) (*wheel.Wheel, error) {
	w, err := wheel.New(cfg)
	if err == nil {
		hook.NoNap(w)
	}
	return w, err
}
