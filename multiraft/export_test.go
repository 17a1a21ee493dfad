package multiraft

import "time"

// SetPersistDelay sets how long after a state changes the persister of a
// host on a virtual wheel writes (one wheel tick by default): the time a
// write and its sync take, during which a crash loses the batch.
func SetPersistDelay(h *Host, d time.Duration) {
	h.pmu.Lock()
	h.persistDelay = d
	h.pmu.Unlock()
}

// Tick runs the host's heartbeat tick now, as its timer does: every
// leader's CheckQuorum and heartbeats, and the flush of the outboxes.
func Tick(h *Host) { h.onHeartbeatTick() }

// BubbleWheel is bubbleWheel, for the package's external tests.
var BubbleWheel = bubbleWheel
