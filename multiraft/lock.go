package multiraft

import (
	"github.com/raftick/raftick/election"
)

// No user code runs under the host's lock: what a call makes while it
// holds h.mu for the Transport (a vote, a control) or the Observer (a
// node's event) goes to the effects queue, and whoever ends the call runs
// it after letting go of the lock, in the order it was queued. So an
// Observer or a Transport that delivers synchronously may call the Host
// back: the call takes the lock afresh, queues its own effects behind, and
// the goroutine already running the queue runs them when it returns.
//
// The queue (fx) is guarded by fxMu, a leaf lock (Host.mu -> fxMu,
// election.Node's lock -> fxMu). collecting is set while some goroutine
// holds h.mu: an effect made then is queued for that holder, one made
// while h.mu is free runs at once on its own goroutine (after the queue,
// if another goroutine is running it). draining is set while a goroutine
// runs the queue; only one does at a time, which keeps the order.

// effect is one call-out: a batch for the Transport, or an event for the
// Observer (obs set).
type effect struct {
	b     Batch
	obs   bool
	group GroupID
	e     election.Event
}

// lock takes h.mu; what the caller queues until unlock runs after it.
func (h *Host) lock() {
	h.mu.Lock()
	h.collecting.Store(true)
}

// tryLock takes h.mu if it is free.
func (h *Host) tryLock() bool {
	if !h.mu.TryLock() {
		return false
	}
	h.collecting.Store(true)
	return true
}

// unlock releases h.mu. On a virtual wheel it first wakes the groups
// that Touch queued while the lock was held, and retakes the lock to wake
// those queued while it was letting go, unless another holder took it
// (which wakes them). On a real-time wheel only the waker goroutine wakes
// them (wakeLoop), wakeChunk per hold of the lock; any other holder
// kicks it. Then unlock runs the effects queued meanwhile, unless another
// goroutine is running them.
func (h *Host) unlock() {
	for {
		if h.wakeKick == nil && h.npend.Load() > 0 {
			h.wakePending()
		}
		h.collecting.Store(false)
		h.mu.Unlock()
		if h.npend.Load() == 0 {
			break
		}
		if h.wakeKick != nil {
			h.kickWaker()
			break
		}
		if !h.tryLock() {
			break
		}
	}
	// collecting was cleared before nfx is read, and an effect's maker
	// counts it in nfx before it reads collecting: either it saw the lock
	// free and runs the queue itself, or this sees its effect.
	if h.nfx.Load() > 0 {
		h.fxMu.Lock()
		h.drain()
	}
}

// emit runs fx now, or queues it if h.mu is held or the queue is being
// run (see lock.go's comment). No lock of the host is needed.
func (h *Host) emit(fx effect) {
	h.fxMu.Lock()
	h.fx = append(h.fx, fx)
	h.nfx.Add(1)
	if h.collecting.Load() {
		h.fxMu.Unlock()
		return
	}
	h.drain()
}

// drain runs the queued effects unless another goroutine is at it, until
// the queue is empty. fxMu is held, and released on return.
func (h *Host) drain() {
	if h.draining || len(h.fx) == 0 {
		h.fxMu.Unlock()
		return
	}
	h.draining = true
	for len(h.fx) > 0 {
		q := h.fx
		h.fx = h.fxSpare
		h.fxSpare = nil
		h.nfx.Store(0)
		h.fxMu.Unlock()
		for i := range q {
			h.run(&q[i])
		}
		clear(q)
		h.fxMu.Lock()
		if h.fxSpare == nil {
			h.fxSpare = q[:0]
		}
	}
	h.draining = false
	h.fxMu.Unlock()
}

// run performs one effect. No lock of the host is held.
func (h *Host) run(fx *effect) {
	if fx.obs {
		h.cfg.Observer(fx.group, fx.e)
		return
	}
	h.tr.Send(fx.b)
}

// emitBatch hands b to the Transport now or after the host's lock.
func (h *Host) emitBatch(b Batch) { h.emit(effect{b: b}) }
