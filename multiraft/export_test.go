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

// Tick runs the host's heartbeat tick now, as its timer does (every
// leader's CheckQuorum and heartbeats, and the flush of the outboxes),
// its walk whole, on the calling goroutine.
func Tick(h *Host) {
	h.beginTick()
	if !h.tick() {
		// The walk yielded the driver after its first chunk: the rest
		// goes here, at once (the continuation then finds it done).
		h.lock()
		h.walkUntil = 0
		if !h.stopped && h.walking {
			h.walkSome()
		}
		h.unlock()
	}
	h.endTick()
}

// BubbleWheel is bubbleWheel, for the package's external tests.
var BubbleWheel = bubbleWheel
