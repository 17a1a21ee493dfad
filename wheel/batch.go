package wheel

import (
	"unsafe"

	"github.com/raftick/raftick/internal/prefetch"
)

// runBatch claims and runs the collected timers, without the lock. A timer
// stopped or reset since it was collected fails the claim and is skipped
// (a reset one has been re-placed by its Reset). The batch is read-only
// here: Stop, under the lock, claims what has not started.
//
// While its callback runs a timer is in state dueFiring: idle, but a Reset
// (typically the callback re-arming its own timer, the periodic timer's
// cycle) just stores the new deadline, without the lock, and leaves the
// timer to the driver, which places it, with the next few re-armed ones,
// under one hold of the lock while they are still in cache (placeRearmed).
func (w *Wheel) runBatch(now int64) {
	p := batchPass{now: now}
	for !w.walkBatch(&p) {
		// A callback panicked; the fire is ended, and the walk goes on.
	}
	if p.nr > 0 {
		w.placeRearmed(p.rearmed[:p.nr])
	}
}

// batchPass is runBatch's progress through the batch, kept outside the
// walk that runs the callbacks (see transitPass).
type batchPass struct {
	i       int // the batch entry looked at
	now     int64
	firing  firingNow
	rearmed [rearmBatch]*Timer
	nr      int
}

// walkBatch runs the batch from p's place to its end (true), or until a
// callback panics (false: recovered and the fire ended, see
// recoverBatch).
func (w *Wheel) walkBatch(p *batchPass) (done bool) {
	defer w.recoverBatch(p)
	for ; p.i < len(w.batch); p.i++ {
		i := p.i
		if j := i + prefetchAhead; j < len(w.batch) {
			w.batch[j].prefetch()
		}
		e := &w.batch[i]
		if !e.t.due.CompareAndSwap(e.when+1, dueFiring) {
			continue
		}
		if i > 0 && (i < clockEvery || i%clockEvery == 0) {
			// The clock measures lateness (behind slow callbacks too) and
			// keeps epochs short. It is read before each of the first
			// clockEvery fires of a batch, then before every clockEvery-th:
			// a clock read costs about as much as a fire's work, and the
			// lateness of a fire is then measured at most clockEvery-1
			// callbacks early.
			p.now = w.readClock()
		}
		w.fireClaimed(&p.firing, e.t, e.f, p.now-e.when)
		w.endBatchFire(p, e.t)
	}
	return true
}

// endBatchFire ends the fire of t, from the batch: t goes idle, or if its
// callback re-armed it, is queued to be placed.
func (w *Wheel) endBatchFire(p *batchPass, t *Timer) {
	if t.endFire() {
		p.rearmed[p.nr] = t
		if p.nr++; p.nr == rearmBatch {
			w.placeRearmed(p.rearmed[:p.nr])
			p.nr = 0
		}
	}
}

// recoverBatch is recoverTransit for walkBatch.
func (w *Wheel) recoverBatch(p *batchPass) {
	t := p.firing.t
	if t == nil {
		return
	}
	w.endPanicked(&p.firing, recover())
	w.endBatchFire(p, t)
	p.i++
}

// rearmBatch is how many re-armed timers the driver places under one hold
// of the lock.
const rearmBatch = 16

// prefetchTimer hints the cache line(s) of t's first 32 bytes, what the
// driver's visit of a slotted timer reads first (a Timer embedded in a
// caller's struct need not start on a line).
func prefetchTimer(t *Timer) {
	prefetch.Range(uintptr(unsafe.Pointer(t)), unsafe.Offsetof(t.w))
}

// clockEvery is how many fires of a long batch share one clock read.
const clockEvery = 8

// prefetchAhead is how many fires ahead runBatch prefetches a timer's
// memory. With many timers every fire starts with cache misses (the timer,
// the struct that embeds it, the callback's closure); prefetched a few
// fires ahead they overlap with the callbacks in between.
const prefetchAhead = 6

// prefetch hints the cache lines the fire of e will touch first: the
// timer, the 128 bytes after it (the embedding struct's fields, which a
// callback such as repeated's reads next) and the callback's closure.
func (e *firing) prefetch() {
	p := uintptr(unsafe.Pointer(e.t))
	// A Timer need not start on a line: cover every line of the timer and
	// of the 128 bytes after it (repeated keeps its fire-and-re-arm state
	// there).
	prefetch.Range(p, unsafe.Sizeof(Timer{})+128)
	prefetch.Line(*(*uintptr)(unsafe.Pointer(&e.f)))
}

// placeRearmed places timers of the batch that were re-armed through the
// driver while their callbacks ran, and are still pending and not placed
// by a locked Reset since. It takes the lock.
func (w *Wheel) placeRearmed(ts []*Timer) {
	w.mu.Lock()
	if !w.stopped {
		for _, t := range ts {
			w.prefetchPlace(t)
		}
		for _, t := range ts {
			if t.boundTo(w) && t.loc == locNone && t.due.Load() > 0 {
				w.place(t)
			}
		}
	}
	w.mu.Unlock()
}
