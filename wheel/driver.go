package wheel

import (
	"math"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/raftick/raftick/internal/prefetch"
)

const (
	// maxBatch bounds the timers the real-time driver claims under one
	// hold of the wheel's lock.
	maxBatch = 1024
	// republishAfter is how old the published coarse clock may get during
	// a batch of callbacks before the driver publishes a fresh one.
	republishAfter = int64(100 * time.Microsecond)
)

// drive is the real-time driver goroutine. Each round it reads the clock
// once, ends the coarse clock's epoch, claims up to maxBatch due timers
// under the lock (a whole fine-grained slot at a time once the slot's end
// has passed, see collect), runs their callbacks without the lock, and
// sleeps until the next slot end or deadline, or until woken by a nearer
// timer.
func (w *Wheel) drive() {
	defer close(w.doneCh)
	sleep := time.NewTimer(time.Hour)
	sleep.Stop()
	var nap *napper
	if w.napMin >= 0 {
		nap = newNapper()
	}
	if nap != nil {
		w.napMu.Lock()
		w.napper = nap
		w.napMu.Unlock()
		defer w.dropNapper()
	}
	// lastBatch is how many timers the last round ran or looked at: the driver sleeps
	// on the timerfd only while batches are big (see napMinBatch).
	lastBatch := 0
	for {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
		now := w.republish()
		if n, stopped := w.runDue(now); n > 0 {
			lastBatch = n
			w.mu.Unlock()
			if stopped {
				return
			}
			continue
		}
		if len(w.drains) > 0 {
			// A big slot is being re-bucketed: let waiting Resets in,
			// then go on without sleeping.
			w.mu.Unlock()
			runtime.Gosched()
			continue
		}
		// Every slot that collect may process by now has been processed,
		// but for the head of a level-0 slot that is not due yet.
		if w.batchSlots {
			c := now / w.tick
			if lvl, _, start, ok := w.nextSlot(); ok && lvl == 0 && start < c {
				c = start
			}
			w.moveCursor(c)
		} else {
			w.moveCursor(now/w.tick + 1)
		}
		next := w.nextEvent()
		precise := nap != nil && lastBatch >= w.napMin
		if precise && next != never {
			next = w.napUntil(next)
		}
		next = min(next, w.laneWake(now))
		if next-now > w.epochLimit(precise) {
			// A long sleep: stop publishing, so that an epoch never spans
			// it; Resets read the clock until the driver wakes for a fire.
			// Wake-ups thus follow fires, not Resets, unless Resets are so
			// many that their clock reads cost more than waking once a
			// millisecond to keep the clock published (planSleep).
			next = w.planSleep(now, next)
		} else if next > now {
			w.sleepEpoch(next)
		}
		w.sleepUntil.Store(next)
		if precise {
			// Sleep on the timerfd (see nap_linux.go), armed under the
			// lock, so that a Reset that needs the driver sooner, or Stop,
			// either comes before (and is seen by the next round) or
			// re-arms it to expire at once (kick).
			d := never
			if next != never {
				d = next - int64(time.Since(w.epoch))
			}
			if d > 0 {
				nap.arm(d)
				w.napping.Store(true)
			}
			w.mu.Unlock()
			if d > 0 {
				ok := nap.wait()
				w.napping.Store(false)
				w.wakeups.Add(1)
				if !ok {
					// The timerfd failed: sleep with the runtime's timers
					// from now on.
					w.dropNapper()
					nap = nil
				}
			}
			continue
		}
		w.mu.Unlock()

		if next == never {
			select {
			case <-w.wakeCh:
			case <-w.stopCh:
				return
			}
			w.wakeups.Add(1)
		} else if d := next - int64(time.Since(w.epoch)); d > 0 {
			sleep.Reset(time.Duration(d))
			select {
			case <-sleep.C:
			case <-w.wakeCh:
				sleep.Stop()
			case <-w.stopCh:
				sleep.Stop()
				return
			}
			w.wakeups.Add(1)
		}
	}
}

// runDue collects the timers due by now and runs them: the batch (see
// collect) and a level-0 slot taken whole (see runTransit). It returns how
// many timers it looked at (0: none was due) and whether the wheel was
// stopped meanwhile. mu held, released while callbacks run.
func (w *Wheel) runDue(now int64) (n int, stopped bool) {
	w.collect(now)
	lanes := w.lanesDue(now)
	if len(w.batch) == 0 && w.tr.head == nil && !lanes {
		return 0, false
	}
	n = len(w.batch) + int(w.tr.live)
	// Set under the lock, so that a Stop that finds it false knows the
	// driver will see stopped before starting any callback.
	w.running = true
	w.mu.Unlock()
	if len(w.batch) > 0 {
		w.runBatch(now)
	}
	if w.tr.head != nil {
		w.runTransit(now)
	}
	if lanes {
		n += w.runLanes(now)
	}
	w.mu.Lock()
	w.running = false
	clear(w.batch)
	w.batch = w.batch[:0]
	if w.tr.head != nil {
		w.freeBucket(&w.tr)
	}
	return n, w.stopped
}

// epochLimit returns the longest sleep the driver lets a published epoch
// span: epochSpan, or for a nap until a level-0 slot is due whole (see
// napUntil) a tick plus twice republishAfter, so that a busy driver, which
// finishes a slot and its successor's due front about republishAfter into
// a tick, naps to the end of that tick in one sleep. Capped at maxEpoch
// it would wake (to keep the clock published) just before the slot is
// due, and take the slot's front then, so that the slot's timers would go
// through the driver in several partial walks instead of one pass
// (runTransit).
func (w *Wheel) epochLimit(nap bool) int64 {
	if nap {
		return max(maxEpoch, w.tick+2*republishAfter)
	}
	return w.epochSpan
}

// napMinBatch is the least batch of timers after which the driver sleeps on
// its timerfd. A precise wake-up is worth its cost when many timers wait
// for it; with a few timers per wake-up the driver sleeps with the
// runtime's timers, whose wake-ups the runtime shares with the process's
// other sleeping goroutines (so a lightly loaded process wakes less), at
// the price of up to a millisecond of lateness.
const napMinBatch = 32

// dropNapper closes the driver's timerfd, if it has one.
func (w *Wheel) dropNapper() {
	w.napMu.Lock()
	defer w.napMu.Unlock()
	if w.napper != nil {
		w.napper.close()
		w.napper = nil
	}
}

// napUntil returns when a driver about to nap should wake, next being the
// earliest time something may be due. A wake-up costs tens of
// microseconds of CPU, so the driver naps until a level-0 slot is due
// whole (its latest deadline has passed), plus republishAfter, by which
// the slack of the epochs its deadlines came from has passed too; a timer
// then waits at most a tick (and the slack) for its fire, and the driver
// wakes at most about once a tick. Other events (a ready-heap deadline, a
// higher level's slot) wake it at once. mu held.
func (w *Wheel) napUntil(next int64) int64 {
	if !w.batchSlots {
		return next
	}
	if lvl, _, start, ok := w.nextSlot(); ok && lvl == 0 && w.slotLook(start) == next {
		if top, ok := w.cleanTop(); !ok || top.key > next {
			return max(next, w.slotDue(start)+republishAfter)
		}
	}
	return next
}

// collect moves up to maxBatch due timers into w.batch, without claiming
// them (runBatch does, just before each callback, so that a callback or
// Stop can still stop a timer of the same batch). Real time has no order
// among due timers: a level-0 slot whose end has passed is taken whole
// (batchSlot); due ready-heap entries are taken as found. mu held.
func (w *Wheel) collect(now int64) {
	for len(w.batch) < maxBatch {
		if !w.drainSome() {
			return // the driver yields the lock
		}
		if top, ok := w.cleanTop(); ok && top.key <= now {
			// A deadline from the coarse clock is due only once its
			// epoch's length has passed too.
			if look := w.look(top.when, now); look > top.key {
				w.ready.pop()
				top.key = look
				w.ready.push(top)
				continue
			}
			w.ready.pop()
			top.t.loc = locNone
			w.batch = append(w.batch, firing{t: top.t, f: top.t.f, when: top.when})
			continue
		}
		lvl, idx, start, ok := w.nextSlot()
		if !ok {
			return
		}
		if lvl == 0 && w.batchSlots {
			if w.slotLook(start) > now {
				return
			}
			w.batchSlot(idx, start, now)
			return // runDue runs the slot
		}
		if w.tickStart(start) > now {
			return
		}
		w.processSlot(lvl, idx, start)
		// A big slot takes a few hundred microseconds: keep the epoch
		// short (see readClock).
		w.readClock()
	}
}

// slotDue returns when the real-time driver takes level-0 slot start (a
// tick) whole: once the latest deadline placed in it has passed, by the
// slot's end at the latest.
func (w *Wheel) slotDue(start int64) int64 {
	end := w.tickStart(start + 1)
	if end == never {
		return never
	}
	return min(end, w.slotMax[start&(1<<level0Bits-1)]+1)
}

// slotLook returns when the real-time driver should next look at level-0
// slot start: once the earliest deadline in it (slotNext) may have passed,
// and at the latest when the slot is due whole (slotDue). (A timer waiting
// out a long epoch slack (a stalled driver) may put slotNext well past the
// slot's end; the slot is still taken whole at its due time, the timer
// moved on to wait in the next slot, so that the slots behind it are not
// held up.)
func (w *Wheel) slotLook(start int64) int64 {
	return min(w.slotNext[start&(1<<level0Bits-1)], w.slotDue(start))
}

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
				if look := w.look(when, p.now); look > p.now {
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
// in transit, and disposes of c. Each timer is aimed where its deadline
// now belongs (aim publishes it as place does). The earliest level-0 slot
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
// A timer moved ahead keeps the later slot start aim published: a
// lock-free Reset needs a deadline at or after that start, which is
// stricter than needed, never looser.
func (w *Wheel) spliceChunk(c *chunk, es []transitEntry, now int64) {
	// Where each timer goes (aim publishes it), and the target: the
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
		a.lvl, a.tk, a.when, a.key = w.aim(t)
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
		w.put(t, a.lvl, a.tk, a.when, a.key)
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

// readClock reads the clock for the driver while it re-buckets a slot or
// runs callbacks, and publishes a fresh epoch if the published one is
// republishAfter old: every epoch's length becomes the slack of all
// deadlines with its tag for a while (see slackFor), so epochs are kept
// short while Resets use them. Driver goroutine only.
func (w *Wheel) readClock() int64 {
	now := int64(time.Since(w.epoch))
	if w.openTag != 0 && now-w.openBase >= republishAfter {
		w.republish()
	}
	return now
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

// placeAhead is how many bucket entries ahead of the one it re-places the
// driver prefetches a timer when it re-buckets a slot (replace).
const placeAhead = 8

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
	key := max(start, min(w.look(due-1, now), start+w.tick-1), now+1)
	w.link(t, 0, tk, key)
}

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

// firingNow is the fire a driver's walk is in, for its recover: the timer
// whose callback runs (nil: none) and, if the callback is a NextFunc, the
// callback.
type firingNow struct {
	t    *Timer
	next NextFunc
}

// fireClaimed runs the callback f of timer t, which the driver just
// claimed, late by late: on the Executor if there is one, else here,
// without a recover of its own (the driver's walk recovers a panic, see
// transitPass), recording the fire in fs meanwhile. A NextFunc's delay
// re-arms t (rearmNext). The fire is counted before the callback starts:
// Stats.Fired counts callbacks started, and a callback that reads Stats
// does not find its own timer pending.
//
// If a NextFunc re-armed t and t is marked SetPeriodic, fireClaimed returns
// the delay (period, ns) and the deadline it re-armed t with, for the
// driver to queue t in the lane of that period; else 0 and -1.
func (w *Wheel) fireClaimed(fs *firingNow, t *Timer, f func(), late int64) (period, when int64) {
	w.addPending(-1)
	w.fired.Add(1)
	w.noteLateness(late)
	if w.exec != nil {
		w.invoke(t, f)
		return 0, -1
	}
	fs.t = t
	when = -1
	if kind := t.minReset.Load(); kind&kindNext != 0 {
		next := asNext(f)
		fs.next = next
		if d := next(t, nil); d > 0 {
			if when = w.rearmNext(next, t, d); when >= 0 && kind&kindPeriodic != 0 {
				period = int64(d)
			} else {
				when = -1
			}
		}
	} else {
		f()
	}
	*fs = firingNow{}
	return period, when
}

// rearmNext re-arms t, whose NextFunc next returned d > 0 from the fire
// the driver is ending (t's due is still dueFiring unless t was Reset or
// rebound meanwhile), as a Reset from the callback would (see
// Timer.TryReset), and tells next if the wheel refuses. It returns the
// deadline it re-armed t with as a schedule handed to the driver, or -1
// (not re-armed, or re-armed through the lock).
func (w *Wheel) rearmNext(next NextFunc, t *Timer, d time.Duration) int64 {
	if w.maxPending == 0 {
		// TryReset's hand-off to the driver, written out again: a shared
		// function is not inlined, and the call cost 2 % of a fire
		// (DriverPeriodic). It differs in taking only a timer still
		// firing.
		when, ok := w.coarseDeadline(d)
		if !ok {
			when = w.scheduleDeadline(d)
		}
		if !t.due.CompareAndSwap(dueFiring, when+1) {
			return -1 // Reset or rebound during the callback: that stands
		}
		w.scheduled.Add(1)
		if w.closed.Load() {
			if _, err := w.unschedule(t, when); err != nil {
				w.tellNext(next, t, err)
			}
			return -1
		}
		return when
	}
	// A MaxPending wheel counts the schedule under its lock.
	if t.due.CompareAndSwap(dueFiring, 0) {
		if _, err := t.TryReset(d); err != nil {
			w.tellNext(next, t, err)
		}
	}
	return -1
}

// endPanicked ends a fire whose callback panicked with r, recovered by a
// driver's walk: a NextFunc hears of it, any other panic is logged and
// counted. r is nil for runtime.Goexit.
func (w *Wheel) endPanicked(fs *firingNow, r any) {
	t, next := fs.t, fs.next
	*fs = firingNow{}
	switch {
	case r == nil:
	case next != nil:
		w.tellNext(next, t, &PanicError{Value: r, Stack: debug.Stack()})
	default:
		w.notePanic(r)
	}
}

// tellNext calls NextFunc next of t with err (see NextFunc), recovering,
// logging and counting a panic of that call.
func (w *Wheel) tellNext(next NextFunc, t *Timer, err error) {
	defer func() {
		if r := recover(); r != nil {
			w.notePanic(r)
		}
	}()
	next(t, err)
}

// callNext runs the fire of t through its NextFunc next off the driver's
// walks (on a virtual wheel, or as an Executor's Task), t claimed and not
// pending: the delay next returns re-arms t unless t is pending by then or
// was rebound.
func (w *Wheel) callNext(next NextFunc, t *Timer) {
	d, perr := w.runNext(next, t)
	if perr != nil {
		w.tellNext(next, t, perr)
		return
	}
	if d > 0 && t.boundTo(w) && !t.Pending() {
		if _, err := t.TryReset(d); err != nil {
			w.tellNext(next, t, err)
		}
	}
}

// runNext calls next(t, nil), recovering a panic as a *PanicError.
func (w *Wheel) runNext(next NextFunc, t *Timer) (d time.Duration, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			d, perr = 0, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return next(t, nil), nil
}

// noteLateness records how late a real-time fire was.
func (w *Wheel) noteLateness(late int64) {
	if late > w.tick {
		w.lateFires.Add(1)
	}
	for {
		m := w.maxLate.Load()
		if late <= m || w.maxLate.CompareAndSwap(m, late) {
			return
		}
	}
}
