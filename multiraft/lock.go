package multiraft

import (
	"errors"

	"github.com/raftick/raftick/internal/gid"
)

// ErrReentrant is returned by a Host's methods called on a goroutine that
// is already inside a call of the same Host holding its lock: from the
// Host's Observer, or through a Transport that delivers a batch
// synchronously into a Host that sent it. Such a call could never take
// the lock. Methods without an error result (Step, Stop, Stats) panic
// with this error instead.
var ErrReentrant = errors.New("multiraft: Host called from inside its own call (an Observer that calls the Host, or a Transport that delivers synchronously); queue the call instead")

// lock takes h.mu and records the goroutine as its owner. It returns
// ErrReentrant, without waiting, if the calling goroutine holds h.mu
// already. It reads the goroutine's identity on every call (a few
// instructions) and compares owners only when the lock is busy.
func (h *Host) lock() error {
	me := gid.Current()
	if !h.mu.TryLock() {
		if me != 0 && h.owner.Load() == me {
			return ErrReentrant
		}
		h.mu.Lock()
	}
	h.owner.Store(me)
	return nil
}

// mustLock is lock for the methods without an error result: it panics
// with ErrReentrant.
func (h *Host) mustLock() {
	if err := h.lock(); err != nil {
		panic(err)
	}
}

// tryLock takes h.mu if it is free, recording the owner.
func (h *Host) tryLock() bool {
	if !h.mu.TryLock() {
		return false
	}
	h.owner.Store(gid.Current())
	return true
}

// holding reports whether the calling goroutine holds h.mu.
func (h *Host) holding() bool {
	me := gid.Current()
	return me != 0 && h.owner.Load() == me
}

// unlock releases h.mu, first waking the groups that Touch queued while
// the lock was held; it retakes the lock to wake those queued while it
// was letting go, unless another holder took it (which wakes them).
func (h *Host) unlock() {
	for {
		if h.npend.Load() > 0 {
			h.wakePending()
		}
		h.owner.Store(0)
		h.mu.Unlock()
		if h.npend.Load() == 0 || !h.tryLock() {
			return
		}
	}
}
