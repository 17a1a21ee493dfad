package wheel

import "sync/atomic"

// Lanes: the real-time driver's fast path for fixed-delay periodic timers.
//
// A timer bound with InitNext and marked SetPeriodic re-arms with the same
// delay on every fire. The driver fires a lane's timers in the order they
// re-armed and re-arms each from the coarse clock, so their new deadlines
// come in the order of the old ones: the timers of one delay form a queue
// sorted by deadline without any sorting, and a fire needs no
// re-bucketing (no locating, no slot, no chunk to move): the driver takes the
// front of the queue as it comes due and puts each re-armed timer at the
// back. A lane is that queue, a ring of (timer, deadline) entries.
//
// Entries are never removed from the middle. A timer leaves its lane
// under the lock (unlink: a locked Reset, Init, a move by the driver)
// by getting a slotStart other than the lane's sentinel, which is what
// makes its entry stale; the driver skips stale entries when it reaches
// them. A queued timer that is Stopped stays queued until the driver
// reaches it and lets it go. A lock-free Reset may move a queued timer's
// deadline later (never earlier, see extendOK); the driver, finding the
// timer's deadline later than its entry's, moves it to a slot.
//
// The ring, its head and tail belong to the driver goroutine: it walks a
// lane's front without the lock and changes the ring only under it, so
// that Stop, which reads the rings under the lock, finds every queued
// timer, including those the driver is firing.

// lane is the queue of the timers that re-arm period after each fire.
type lane struct {
	period int64       // ns
	ring   []laneEntry // a power of two long
	// head and tail count the entries ever taken and queued: ring holds
	// [head, tail), at index k&(len(ring)-1).
	head, tail uint64
	lastR      int64 // the deadline of the entry at the tail
}

// laneEntry is a timer queued in a lane and the deadline it was queued
// with.
type laneEntry struct {
	t *Timer
	r int64
}

const (
	// maxLanes bounds the lanes of a wheel, hence the distinct periods
	// that get one; the timers of other periods stay in slots.
	maxLanes = 8
	// laneBatch is how many entries of a lane the driver walks between two
	// holds of the lock, as a chunk of a slot (see endLaneBatch).
	laneBatch = chunkLen
	// laneInitial is a new lane's ring length.
	laneInitial = 64
)

// laneSentinel is what Timer.slotStart holds while the timer is queued in
// lane i of w: at or below laneMember (not a slot's start, not
// "unlinked"), and unique to the wheel and the lane, so that an entry of
// a timer since rebound to another wheel, and queued in a lane there, is
// stale here too. It is what the driver, and Stop, tell a timer still
// queued in a lane by: Init, and every unlink, store another slotStart,
// so a timer with the sentinel is bound to w and its loc and slot are
// w's (written under w's lock).
func (w *Wheel) laneSentinel(i int) int64 { return w.laneBase - int64(i) }

// laneMember is the greatest slotStart of a timer queued in a lane.
const laneMember = -2

// wheelSeq numbers the wheels, for their lanes' sentinels.
var wheelSeq atomic.Int64

// laneFor returns the index of the lane of period, creating it if there
// is room, or -1. mu held; real-time wheels whose driver makes re-arms
// itself only (no Executor, no MaxPending).
func (w *Wheel) laneFor(period int64) int {
	if !w.batchSlots || w.exec != nil || w.maxPending > 0 || period <= 0 {
		return -1
	}
	for i, l := range w.lanes {
		if l.period == period {
			return i
		}
	}
	if len(w.lanes) == maxLanes {
		return -1
	}
	w.lanes = append(w.lanes, &lane{period: period, ring: make([]laneEntry, laneInitial)})
	return len(w.lanes) - 1
}

// fits reports whether an entry with deadline r may go to the tail of l:
// a lane stays in the order of its deadlines to within a tick (a timer
// waits behind one queued ahead of it at most that long), and an entry
// far later than the tail's, which would hold up the entries queued
// behind it, goes to a slot instead.
func (l *lane) fits(r, tick int64) bool {
	return l.head == l.tail || (r >= l.lastR-tick && r-l.lastR <= 2*l.period)
}

// front returns the deadline of l's first entry; l is not empty.
func (l *lane) front() int64 { return l.ring[l.head&uint64(len(l.ring)-1)].r }

// push queues t with deadline r. mu held, driver goroutine.
func (l *lane) push(t *Timer, r int64) {
	if l.tail-l.head == uint64(len(l.ring)) {
		ring := make([]laneEntry, 2*len(l.ring))
		for k := l.head; k < l.tail; k++ {
			ring[k&uint64(len(ring)-1)] = l.ring[k&uint64(len(l.ring)-1)]
		}
		l.ring = ring
	}
	l.ring[l.tail&uint64(len(l.ring)-1)] = laneEntry{t: t, r: r}
	l.tail++
	l.lastR = r
}

// join queues t, a pending timer the driver fired and whose NextFunc
// re-armed it with period, in the lane of period, if there is one for it
// and its deadline fits there, and reports whether it did; the caller
// then takes t out of the chunk it fired from, if it is still there. It
// publishes the lane's sentinel before it reads the deadline it queues t
// with, so that a lock-free Reset racing with it either comes first (and
// t is queued with the new deadline) or finds t in the lane (and moves
// the deadline later only, see extendOK). mu held.
func (w *Wheel) join(t *Timer, period int64) bool {
	li := w.laneFor(period)
	if li < 0 {
		return false
	}
	l := w.lanes[li]
	due := t.due.Load()
	if due <= 0 || !l.fits(due-1, w.tick) {
		return false
	}
	t.slotStart.Store(w.laneSentinel(li))
	if t.due.Load() != due {
		return false // moved meanwhile: the caller places it (locate publishes its slot)
	}
	t.loc, t.slot = locLane, uint16(li)
	l.push(t, due-1)
	return true
}

// laneWake returns when the driver should next look at its lanes: when
// the first entry of one may fire, and no sooner than the latest deadline
// queued in the same tick as that entry's has passed (plus
// republishAfter, by which the slack of its epoch has passed too), so
// that the driver takes a lane's tick in one walk, as it takes a level-0
// slot whole once its latest deadline has passed (see napUntil). Driver
// goroutine, mu held.
func (w *Wheel) laneWake(now int64) int64 {
	next := never
	for _, l := range w.lanes {
		if l.head == l.tail {
			continue
		}
		mask := uint64(len(l.ring) - 1)
		r := l.front()
		at := w.fireableAt(r, now)
		if end := w.tickStart(r/w.tick + 1); end != never {
			// The last entry before the end of r's tick: the lane is in
			// deadline order (to within a tick, see fits).
			lo, hi := l.head, l.tail // entries [lo, hi) may be before end
			for hi-lo > 1 {
				mid := lo + (hi-lo)/2
				if l.ring[mid&mask].r < end {
					lo = mid
				} else {
					hi = mid
				}
			}
			at = max(at, min(l.ring[lo&mask].r+1, end)+republishAfter)
		}
		next = min(next, at)
	}
	return next
}

// lanesDue reports whether the first entry of some lane may fire by now.
// Driver goroutine, mu held.
func (w *Wheel) lanesDue(now int64) bool {
	for _, l := range w.lanes {
		if l.head != l.tail && w.fireableAt(l.front(), now) <= now {
			return true
		}
	}
	return false
}

// laneOp is what the driver does with a lane entry it walked, under the
// lock at the end of the batch (endLaneBatch): queue t again with deadline
// when (when >= 0: its NextFunc re-armed it with the lane's period), or
// (when < 0) take it out of the lane and place it where its deadline now
// belongs, if it is still pending.
type laneOp struct {
	t    *Timer
	when int64
}

// lanePass is the driver's walk of one lane, kept outside walkLane so that
// the walk can go on after a callback panics (see transitPass).
type lanePass struct {
	l      *lane
	li     int
	i, end uint64 // the next entry, and the tail when the walk began
	now    int64
	n      int // entries taken
	firing firingNow
	ops    [laneBatch]laneOp
	nops   int
}

// runLanes walks the due front of every lane, without the lock, and
// returns how many entries it took. Entries queued meanwhile (the timers
// it re-arms) are a period ahead, so each lane's walk ends at the tail it
// began with.
func (w *Wheel) runLanes(now int64) (n int) {
	for li, l := range w.lanes {
		if l.head == l.tail {
			continue
		}
		p := lanePass{l: l, li: li, i: l.head, end: l.tail, now: now}
		for !w.walkLane(&p) {
			// A callback panicked; its fire is ended and the walk goes on.
		}
		n += p.n
	}
	return n
}

// walkLane walks lane p.l from entry p.i until the first entry that may
// not fire yet, or the end, and returns true; or until a callback panics:
// then it recovers, ends that fire and returns false (see recoverLane).
// For each entry whose timer is still queued there and still due at the
// entry's deadline it claims the timer and runs its callback, queueing
// the timer again if its NextFunc re-armed it with the lane's period;
// every other entry's timer, if still queued, is taken out of the lane
// and placed by its deadline (endLaneBatch).
func (w *Wheel) walkLane(p *lanePass) (done bool) {
	defer w.recoverLane(p)
	l, sentinel := p.l, w.laneSentinel(p.li)
	for p.i < p.end {
		mask := uint64(len(l.ring) - 1)
		if k := p.i + fireAhead; k < p.end {
			prefetchFire(l.ring[k&mask].t)
		}
		e := l.ring[p.i&mask]
		if w.fireableAt(e.r, p.now) > p.now {
			break // the lane's due front ends here
		}
		p.i++
		p.n++
		t := e.t
		if t.slotStart.Load() != sentinel {
			continue // left the lane: a stale entry
		}
		// The callback is read before the claim (see walkTransit).
		if due, f := t.due.Load(), t.loadF(); due-1 == e.r && due > 0 && t.due.CompareAndSwap(due, dueFiring) {
			period, when := w.fireClaimed(&p.firing, t, f, p.now-e.r)
			t.endFire()
			if period != l.period {
				when = -1
			}
			w.queueLane(p, laneOp{t: t, when: when})
			continue
		}
		w.queueLane(p, laneOp{t: t, when: -1})
	}
	w.endLaneBatch(p)
	return true
}

// queueLane queues op for the end of the walk's batch, ending the batch
// when it is full.
func (w *Wheel) queueLane(p *lanePass, op laneOp) {
	p.ops[p.nops] = op
	if p.nops++; p.nops == len(p.ops) {
		w.endLaneBatch(p)
	}
}

// endLaneBatch ends a batch of the walk of a lane: under the lock it
// drops the entries walked from the ring and does the batch's ops (see
// laneOp), skipping the timers that left the lane meanwhile (whoever
// unlinked them placed them). Driver goroutine.
func (w *Wheel) endLaneBatch(p *lanePass) {
	l := p.l
	if p.nops == 0 && l.head == p.i {
		return
	}
	ops := p.ops[:p.nops]
	p.nops = 0
	// As at the end of a slot's chunk (see endChunk): the lateness of
	// the next fires, and short coarse-clock epochs for the re-arms.
	p.now = w.readClock()
	w.mu.Lock()
	defer w.mu.Unlock()
	mask := uint64(len(l.ring) - 1)
	for k := l.head; k < p.i; k++ {
		l.ring[k&mask] = laneEntry{} // let go of the timer
	}
	l.head = p.i
	for _, op := range ops {
		t := op.t
		if t.slotStart.Load() != w.laneSentinel(p.li) {
			continue // left the lane since the walk: whoever took it out placed it
		}
		if !w.stopped && op.when >= 0 && t.due.Load() == op.when+1 && l.fits(op.when, w.tick) {
			l.push(t, op.when)
			continue
		}
		w.unlink(t)
		if t.due.Load() > 0 && !w.stopped {
			w.place(t)
		}
	}
}

// recoverLane, deferred by walkLane, recovers the panic of the callback
// walkLane was running, if any, and ends its fire as a return would have
// (see recoverTransit).
func (w *Wheel) recoverLane(p *lanePass) {
	t := p.firing.t
	if t == nil {
		return
	}
	w.endPanicked(&p.firing, recover())
	t.endFire()
	w.queueLane(p, laneOp{t: t, when: -1})
}

// stopLanes hands every timer queued in a lane to claim, as Stop does with
// the slots' timers, and takes it out of its lane. mu held, wheel stopped.
func (w *Wheel) stopLanes(claim func(*Timer)) {
	for li, l := range w.lanes {
		sentinel := w.laneSentinel(li)
		mask := uint64(len(l.ring) - 1)
		for k := l.head; k < l.tail; k++ {
			if t := l.ring[k&mask].t; t != nil && t.slotStart.Load() == sentinel {
				w.unlink(t)
				claim(t)
			}
		}
	}
}
