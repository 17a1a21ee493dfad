package experiment

import (
	"errors"

	"github.com/raftick/raftick/election"
)

// A TimerStarter is a Cluster that can start its servers' election
// timers at one instant, for Setup.TimersAtCrash.
type TimerStarter interface {
	// StartTimersAt makes every server of survivors act as if a heartbeat
	// of leader at term arrived now (restarting its election timer with a
	// fresh draw), and drops leader's messages still in flight to them.
	StartTimersAt(leader election.ID, term uint64, survivors []election.ID)
}

// errNoTimerStarter is returned for Setup.TimersAtCrash on an engine
// whose clusters are not TimerStarters.
var errNoTimerStarter = errors.New("experiment: TimersAtCrash needs an engine whose clusters can start timers at the crash (raftick's)")

// errHeartbeatOffset is returned for Setup.HeartbeatOffset in a failover.
var errHeartbeatOffset = errors.New("experiment: HeartbeatOffset applies to Bootstrap only (a failover measures from its crash)")

// StartTimersAt delivers a heartbeat of leader at term to each survivor
// now, then cuts the links from leader to them, so that the heartbeats of
// leader's last broadcast still in flight are dropped.
func (c *raftickCluster) StartTimersAt(leader election.ID, term uint64, survivors []election.ID) {
	now := c.Now()
	for _, id := range survivors {
		c.Deliver(election.Message{Type: election.MsgHeartbeat, From: leader, To: id, Term: term, Sent: now})
		c.Cut(leader, id)
	}
}
