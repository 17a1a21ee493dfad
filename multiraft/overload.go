package multiraft

import "time"

// A host that cannot keep up (its processor taken by other work, or more
// groups than it can serve) runs its timers late and steps its inbound
// batches late. Its followers' election timers then come due before the
// heartbeats that would have reset them are stepped, and the elections
// they start add votes, fresh leaders' heartbeats and step-downs to the
// work the host is already behind on: the overload feeds itself and
// outlasts its cause.
//
// The host watches its own lateness through its sweep timer, which comes
// due every heartbeat interval whatever the configuration: a sweep that
// runs more than lateLimit after its deadline marks the host behind, the
// next sweep on time marks it caught up. While it is behind, the silence
// of a leader is the host's own and counts against no leader: its nodes'
// election.Config.Lagging reports it, so that no follower's election
// timer or candidate's vote timer that comes due starts anything (each
// runs on with a fresh timeout) and no leader steps down for CheckQuorum.
// Once the host has caught up, a group whose leader's heartbeats were
// waiting in its backlog holds no election, and a leader that is really
// gone is replaced an election timeout or two later than on an idle host.

// lateLimit returns how late the sweep may run before the host counts as
// behind: half a heartbeat interval, and at least two of the wheel's
// ticks, beyond the lateness of a wheel that keeps up (a tick), so that a
// heartbeat interval of a tick or two does not leave the host behind for
// good.
func lateLimit(hb, tick time.Duration) time.Duration { return max(hb/2, 2*tick) }

// lagging is every node's election.Config.Lagging: it reports the host
// behind, counting the timers it stops in Stats.LaggingSkips. It is called
// with a node's lock held and takes no lock.
func (h *Host) lagging() bool {
	if !h.behind.Load() {
		return false
	}
	h.laggingSkips.Add(1)
	return true
}

// noteLateness records that the sweep ran late by late at now. The host
// is behind from a sweep late by more than lateLimit until its sweeps
// have run on time for an election timeout: a follower's election timer
// re-armed while the host was behind then comes due after the heartbeats
// of a live leader have caught up. h.mu is held.
func (h *Host) noteLateness(now, late time.Duration) {
	h.lateness = late
	h.maxLateness = max(h.maxLateness, late)
	if late > lateLimit(h.ecfg.HeartbeatInterval, h.w.Tick()) {
		h.lateAt, h.wasLate = now, true
	}
	behind := h.wasLate && now-h.lateAt < h.ecfg.ElectionTimeout
	if behind && !h.behind.Load() {
		h.stats.BehindSpells++
	}
	h.behind.Store(behind)
}
