package wheel

import (
	"math"
	"unsafe"

	"github.com/raftick/raftick/internal/prefetch"
)

// batchSlot takes level-0 slot idx (tick start), some of whose timers are
// due, for runDue to run without the lock (runTransit): its bucket whole,
// in O(1), so that timers placed meanwhile go to a fresh one. If the slot
// is due whole (its latest deadline, slotDue, has passed) the cursor moves
// past it, and a timer still inside its epoch's slack waits in the next
// slot; before that, the cursor stays, and runTransit puts the timers that
// are not due yet back into the slot. (Re-armed periodic timers fall due in
// the part of a tick the driver wakes in, so a slot is mostly due, or
// pushed later, by the time the driver first looks at it.) mu held.
func (w *Wheel) batchSlot(idx int, start, now int64) {
	lv := &w.levels[0]
	b := &lv.buckets[idx]
	w.tr, w.trStart, w.trMax = *b, start, w.slotMax[idx]
	*b = bucket{} // its chunks are in transit now: their gen is w.tr's
	lv.unmark(idx)
	if w.slotDue(start) <= now {
		w.trWait = start + 1
		w.moveCursor(start + 1)
	} else {
		w.trWait = start
		w.moveCursor(start)
	}
}

// runTransit runs the level-0 slot that batchSlot took (w.tr, tick
// w.trStart), without the lock, touching each timer once: it reads the
// timer's deadline and, if the timer is due, claims it and runs its
// callback at once, while the timer's memory is in cache. What needs the
// lock (unlinking the timer from the slot, re-placing one whose deadline
// moved or that its callback re-armed, putting back one not due yet) is
// queued and done a chunk of the slot at a time, under one hold of the
// lock (endChunk): when most of a chunk's timers go to the same slot, as
// a slot's re-armed periodic timers or its heartbeat-pushed election timers
// do, the chunk itself moves to that slot's bucket (spliceChunk), and
// each of those timers is only told its new slot.
//
// The slot's timers stay linked in its chunks meanwhile (marked transit),
// so that Stop, Init and a locked Reset find them: such a Reset or Init
// unlinks a timer under the lock, with an atomic store of its tombstone,
// and the driver skips an entry that is no longer the timer it read. A
// lock-free Reset that pushes a timer later races with the claim as with
// any fire: the claim is a compare-and-swap of the deadline the driver
// read, and fails if the timer moved.
func (w *Wheel) runTransit(now int64) {
	p := transitPass{start: w.trStart, now: now, c: w.tr.head}
	// A timer is due in this slot or before if its deadline is before the
	// slot's end (compared, not divided: a division costs tens of cycles).
	p.end = w.tickStart(p.start + 1)
	for !w.walkTransit(&p) {
		// A callback panicked; the fire is ended, and the walk goes on.
	}
}

// transitPass is runTransit's progress through the slot in transit, kept
// outside the walk that runs the callbacks, so that the walk can go on
// after a callback panics: one deferred recover covers a whole slot's
// callbacks (a recover deferred around each callback cost about 8 % of a
// fire).
type transitPass struct {
	start, end, now int64
	c               *chunk // the chunk walked
	i               int    // the entry of c looked at
	firing          firingNow
	fix             [chunkLen]transitEntry // the entries of chunk c looked at, to fix
	nf              int
}

// walkTransit walks the slot in transit from p's place to its end, or
// until it gives the slot's rest back, and returns true; or until a
// callback panics: then it recovers, ends that fire, moves p past it and
// returns false (see recoverTransit).
func (w *Wheel) walkTransit(p *transitPass) (done bool) {
	defer w.recoverTransit(p)
	for p.c != nil {
		c := p.c
		n, last := chunkLen, c == w.tr.tail
		if last {
			n = int(w.tr.tn)
		}
		for ; p.i < n; p.i++ {
			i := p.i
			if t := transitAt(c, i+fireAhead, n); t != nil {
				prefetchFire(t)
			}
			t := c.load(i)
			if t == nil {
				continue
			}
			due := t.due.Load()
			if c.load(i) != t {
				continue // unlinked meanwhile, by whoever unlinked it
			}
			wait := false
			if when := due - 1; due > 0 && when < p.end {
				if look := w.fireableAt(when, p.now); look > p.now {
					if when > p.now && w.trWait == p.start && !w.closed.Load() {
						// The slot is not due whole, and here begin its
						// timers that are not due yet (timers are
						// appended in about deadline order): give the
						// rest back to the slot untouched.
						if p.nf > 0 {
							w.fixTransit(p.fix[:p.nf], p.now)
						}
						w.giveBack(c, i, look)
						return true
					}
					wait = true // its epoch's slack has not passed yet
				} else if f := t.loadF(); t.due.CompareAndSwap(due, dueFiring) {
					// The callback is read before the claim: once t is
					// claimed it is not pending, and Init may rebind it.
					period, _ := w.fireClaimed(&p.firing, t, f, p.now-when)
					t.endFire()
					w.queueFix(p, transitEntry{c: c, i: int32(i), t: t, period: period})
					continue
				}
			}
			w.queueFix(p, transitEntry{c: c, i: int32(i), wait: wait, t: t})
		}
		if last {
			break
		}
		w.endChunk(p, c)
	}
	if p.nf > 0 {
		w.fixTransit(p.fix[:p.nf], p.now)
		p.nf = 0
	}
	return true
}

// queueFix queues entry e of the chunk of the slot in transit that the
// walk is in, for endChunk (or fixTransit) to fix.
func (w *Wheel) queueFix(p *transitPass, e transitEntry) {
	p.fix[p.nf] = e
	p.nf++
}

// endChunk ends the walk's visit of chunk c, a full chunk of the slot in
// transit (not its tail), every live entry of which the walk has queued:
// under one hold of the lock it fixes them, moving c itself to the slot
// most of them go to (spliceChunk), or else freeing it, and moves the
// walk, and the slot in transit, on to the next chunk. It reads the clock
// first, for the lateness of the fires and to keep the coarse clock's
// epochs short (see readClock): once per chunk, 62 timers, a few
// microseconds of the driver's work, well inside republishAfter. (A clock
// read costs about half of a fire's work.)
func (w *Wheel) endChunk(p *transitPass, c *chunk) {
	p.now = w.readClock()
	next := c.next
	es := p.fix[:p.nf]
	p.nf = 0
	w.mu.Lock()
	if w.stopped {
		w.fixLocked(es, p.now)
		c.next = nil
		w.freeChunk(c)
	} else {
		w.spliceChunk(c, es, p.now)
	}
	w.tr.head, w.tr.pos = next, 0
	w.mu.Unlock()
	p.c, p.i = next, 0
}

// spliceChunk fixes the entries es of chunk c, a full chunk of the slot
// in transit, and disposes of c. Each timer is located where its deadline
// now belongs (locate publishes it as place does). The earliest level-0 slot
// one of them goes to is the target (if none goes to level 0, the slot of
// the first that goes higher): the timers that go there, or on level 0 at
// most joinWindow ticks later, stay where they are in c, and are only
// told their new slot; the others are unlinked from c, leaving tombstones, and
// placed one by one as fixLocked places them. Then c itself moves to the
// target slot's bucket if at least half of its entries are timers going
// there (so that a bucket's chunks are at least half full of timers when
// they arrive; appendChunk keeps the bucket in about the order of its
// deadlines); else those timers are linked there one by one, and c is
// freed. mu held, wheel not stopped.
//
// A slot's re-armed periodic timers all go to one slot (a period ahead),
// and its election timers that heartbeats pushed later go to the slot
// their SetMinReset promise allows, or, a sixth of them at 100k Raft
// groups (a timeout drawn short, its heartbeat a while ago), to the slot
// of their deadline, a few ticks before. Moving the chunk whole to the
// earliest of these slots, rather than to where its first timer goes
// (which left a sixth of the timers to be placed one by one into slots
// of their own, and freed the chunk whenever that first timer was one of
// them), keeps each chunk's timers together and in the order of their
// memory: the driver's walks then read the groups' timers in address
// order, which the processor's prefetchers and TLB follow, where about a
// quarter of the walk's steps had jumped elsewhere. At 100k groups this
// took 7-10 % off the process's CPU (bench/scalemix, two builds run at
// once); the timers moved ahead of their own slot are looked at a little
// early, which added about 2 % visits.
// A timer moved ahead keeps the later slot start locate published: a
// lock-free Reset needs a deadline at or after that start, which is
// stricter than needed, never looser.
func (w *Wheel) spliceChunk(c *chunk, es []transitEntry, now int64) {
	// Where each timer goes (locate publishes it), and the target: the
	// earliest level-0 slot any of them goes to, or if none goes to level
	// 0, the slot of the first that goes higher.
	var to [chunkLen]struct {
		tk, when, key int64
		lvl           int
	}
	tl, tk0 := -1, int64(0)
	for _, e := range es {
		t := e.t
		if c.t[e.i] != t {
			continue // unlinked since the walk saw it
		}
		if e.wait {
			w.fixEntry(e, now) // unlinks it: the pass below skips it
			continue
		}
		if e.period > 0 && w.join(t, e.period) {
			c.t[e.i] = nil // in its lane now: the pass below skips it
			t.ch = nil
			continue
		}
		a := &to[e.i]
		a.lvl, a.tk, a.when, a.key = w.locate(t)
		switch {
		case a.lvl == 0 && (tl != 0 || a.tk < tk0):
			tl, tk0 = 0, a.tk
		case a.lvl > 0 && tl < 0:
			tl, tk0 = a.lvl, a.tk
		}
	}
	var keys [chunkLen]int64
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64) // of keys
	matched := 0
	var slot uint16
	var lv *level
	if tl >= 0 {
		lv = &w.levels[tl]
		slot = uint16(tl<<slotLevelShift | lv.index(tk0))
	}
	for _, e := range es {
		t := e.t
		if c.t[e.i] != t {
			continue
		}
		a := &to[e.i]
		if tl >= 0 && a.lvl == tl {
			key, joins := a.key, false
			switch {
			case tl > 0:
				joins = a.tk>>lv.shift == tk0>>lv.shift
			case a.tk == tk0:
				joins = true
			case a.tk-tk0 <= joinWindow:
				// Ahead of its deadline's slot: looked at from the
				// target's start, as place keys a timer it puts ahead.
				joins, key = true, w.tickStart(tk0)
			}
			if joins {
				keys[e.i], lo, hi = key, min(lo, key), max(hi, key)
				t.loc, t.slot = locSlot, slot
				matched++
				continue
			}
		}
		c.t[e.i] = nil
		t.ch = nil
		w.putLocated(t, a.lvl, a.tk, a.when, a.key)
	}
	if matched*2 < chunkLen {
		for i, t := range &c.t {
			if t != nil {
				c.t[i] = nil
				w.link(t, tl, tk0, keys[i])
			}
		}
		c.next = nil
		w.freeChunk(c)
		return
	}
	idx := lv.index(tk0)
	w.appendChunk(&lv.buckets[idx], c, int32(matched))
	w.noteSlot(tl, idx, lo, hi)
}

// joinWindow is how many ticks after the earliest slot a chunk's timers
// go to a timer may go and still move with the chunk to that slot (see
// spliceChunk): enough for an election timer whose timeout, drawn from
// [ET, 2ET), put its deadline before its SetMinReset promise (at most ET/3
// before it with heartbeats every ET/3); little enough that a periodic
// timer's chunk does not take along timers due much later.
const joinWindow = 64

// recoverTransit, deferred by walkTransit, recovers the panic of the
// callback walkTransit was running, if any, and ends its fire as a return
// would have. A panic outside a callback (no timer firing) is not the
// callback's: it goes on.
func (w *Wheel) recoverTransit(p *transitPass) {
	t := p.firing.t
	if t == nil {
		return
	}
	w.endPanicked(&p.firing, recover())
	t.endFire()
	w.queueFix(p, transitEntry{c: p.c, i: int32(p.i), t: t})
	p.i++
}

// giveBack ends the transit of a slot not due whole at entry i of chunk c,
// a timer not due yet, to be looked at again at look: the entries from
// there on become the slot's bucket again, followed by the timers placed
// in the slot meanwhile, and the chunks before c are freed (runTransit has
// unlinked their timers). It takes the lock.
func (w *Wheel) giveBack(c *chunk, i int, look int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lv := &w.levels[0]
	idx := lv.index(w.trStart)
	rest := bucket{head: c, pos: int32(i), tail: w.tr.tail, tn: w.tr.tn, gen: w.tr.gen}
	for h := w.tr.head; h != c; {
		next := h.next
		clear(h.t[:])
		w.freeChunk(h)
		h = next
	}
	w.tr = bucket{}
	for ch, k := c, i; ch != nil; ch, k = ch.next, 0 {
		n := chunkLen
		if ch == rest.tail {
			n = int(rest.tn)
		}
		for ; k < n; k++ {
			if ch.t[k] != nil {
				rest.live++
			} else {
				rest.dead++
			}
		}
	}
	// The slot's bookkeeping (slotMax, slotNext) counts what was placed
	// in it before and since it was taken.
	maxKey, nextKey := w.trMax, look
	if fresh := &lv.buckets[idx]; fresh.live > 0 {
		maxKey = max(maxKey, w.slotMax[idx])
		nextKey = min(nextKey, w.slotNext[idx])
		for t := w.front(fresh); t != nil; t = w.front(fresh) {
			fresh.consume(t)
			w.push(&rest, t)
		}
		w.freeBucket(fresh)
	}
	if rest.live == 0 {
		w.freeBucket(&rest)
		return
	}
	lv.buckets[idx] = rest
	lv.mark(idx)
	w.slotMax[idx], w.slotNext[idx] = maxKey, nextKey
}

// transitEntry is a timer of the slot in transit, looked at by the
// driver, to unlink (and re-place) under the lock.
type transitEntry struct {
	c    *chunk
	i    int32
	wait bool // due but not yet fireable: wait in slot trWait
	t    *Timer
	// period, if > 0: the timer fired and its NextFunc re-armed it with
	// this delay, and it is marked SetPeriodic: it goes to that period's
	// lane if it can (see join).
	period int64
}

// fixTransit unlinks timers of the slot in transit and places them where
// their deadlines now belong: a fired timer that its callback re-armed, a
// timer pushed later, one waiting out its epoch's slack. A timer unlinked
// since the driver looked at it has been dealt with by its unlinker. The
// timer's slot start stays published until place (or waitInSlot)
// publishes the new one and reads the deadline again: a lock-free Reset
// racing with this either lands before that read, and the timer is placed
// by its new deadline, or finds the new slot start (Timer.TryReset). It
// takes the lock.
func (w *Wheel) fixTransit(es []transitEntry, now int64) {
	w.mu.Lock()
	w.fixLocked(es, now)
	w.mu.Unlock()
}

// fixLocked is fixTransit with the lock held.
func (w *Wheel) fixLocked(es []transitEntry, now int64) {
	for _, e := range es {
		if e.c.t[e.i] == e.t {
			w.fixEntry(e, now)
		}
	}
}

// fixEntry unlinks e's timer, still in e's entry, from the slot in transit
// and places it (see fixTransit). mu held.
func (w *Wheel) fixEntry(e transitEntry, now int64) {
	t := e.t
	e.c.t[e.i] = nil
	t.ch, t.loc = nil, locNone
	switch {
	case w.stopped:
		t.slotStart.Store(-1)
	case e.wait:
		w.waitInSlot(t, w.trWait, now)
	case e.period > 0 && w.join(t, e.period):
	default:
		w.place(t)
	}
}

// transitAt returns the timer at entry i of chunk c, a chunk in transit
// with n entries, or of the next chunk if i >= n; nil if there is none.
func transitAt(c *chunk, i, n int) *Timer {
	if i >= n {
		if i -= chunkLen; i < 0 || c.next == nil {
			return nil
		}
		c = c.next
	}
	return c.load(i)
}

// fireAhead is how many entries ahead of the one it works on runTransit
// prefetches a timer and what its fire touches (see prefetchFire).
const fireAhead = 8

// prefetchFire hints the cache lines a fire of t touches: the timer and
// the 128 bytes after it (the embedding struct's fields, which a callback
// such as repeated's reads next).
func prefetchFire(t *Timer) {
	prefetch.Range(uintptr(unsafe.Pointer(t)), fireBytes)
}

// fireBytes is how many bytes from a Timer's start prefetchFire hints: the
// timer and the fields of the struct that embeds it that a callback such
// as repeated's reads next (a repeated.Timer is 128 bytes).
const fireBytes = 128

// waitInSlot links t, due within level-0 slot tk (the cursor's) or before
// but not yet fireable (not due yet, or inside its epoch's slack), into
// that slot, to be looked at again once it may be; a timer whose deadline
// moved meanwhile is placed as usual. mu held.
func (w *Wheel) waitInSlot(t *Timer, tk, now int64) {
	due := t.due.Load()
	start := w.tickStart(tk)
	t.slotStart.Store(start)
	if d := t.due.Load(); d != due || d <= 0 || (d-1)/w.tick > tk {
		w.place(t)
		return
	}
	// Look again once the epoch's slack has passed, within the slot, but
	// after now: at the slot's last nanosecond that is the slot's end, when
	// the slot is due whole (a look at now would find t not fireable again
	// and take the slot again at once, until the clock moved on).
	key := max(start, min(w.fireableAt(due-1, now), start+w.tick-1), now+1)
	w.link(t, 0, tk, key)
}
