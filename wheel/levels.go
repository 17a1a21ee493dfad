package wheel

import (
	"math/bits"
)

// placeAhead is how many bucket entries ahead of the one it re-places the
// driver prefetches a timer when it re-buckets a slot (replace).
const placeAhead = 8

// level is one ring of the hierarchy: slots (1024 at level 0, 64 above),
// each a bucket of timers (see bucket.go), and a bitmap of the non-empty
// slots.
type level struct {
	shift    uint // ticks are shifted right by this to index the level
	bits     uint // log2 of the number of slots
	occupied []uint64
	buckets  []bucket
}

func (lv *level) mark(idx int)       { lv.occupied[idx>>6] |= 1 << uint(idx&63) }
func (lv *level) unmark(idx int)     { lv.occupied[idx>>6] &^= 1 << uint(idx&63) }
func (lv *level) isSet(idx int) bool { return lv.occupied[idx>>6]&(1<<uint(idx&63)) != 0 }

// index returns tick tk's slot on this level.
func (lv *level) index(tk int64) int { return int((tk >> lv.shift) & (1<<lv.bits - 1)) }

// firstFrom returns the first occupied slot at or after idx, if any.
func (lv *level) firstFrom(idx int) (int, bool) {
	for k := idx >> 6; k < len(lv.occupied); k++ {
		b := lv.occupied[k]
		if k == idx>>6 {
			b &= ^uint64(0) << uint(idx&63)
		}
		if b != 0 {
			return k<<6 | bits.TrailingZeros64(b), true
		}
	}
	return 0, false
}

// newLevels returns enough levels to index any tick up to maxTick.
func newLevels(maxTick int64) []level {
	need := uint(bits.Len64(uint64(maxTick) + 1))
	var levels []level
	for shift := uint(0); shift < need || len(levels) == 0; {
		b := uint(slotBits)
		if len(levels) == 0 {
			b = level0Bits
		}
		n := 1 << b
		levels = append(levels, level{shift: shift, bits: b,
			occupied: make([]uint64, (n+63)/64), buckets: make([]bucket, n)})
		shift += b
	}
	return levels
}

// tickEnd returns the first nanosecond of tick tk, saturating.
func (w *Wheel) tickStart(tk int64) int64 {
	if tk > w.maxTick {
		return never
	}
	return tk * w.tick
}

// place links a pending timer where its current deadline belongs, or drops
// it if it is no longer pending (see locate). mu held.
func (w *Wheel) place(t *Timer) {
	lvl, tk, when, key := w.locate(t)
	w.putLocated(t, lvl, tk, when, key)
}

// putLocated links t, not in a slot, where locate found it belongs. mu held.
func (w *Wheel) putLocated(t *Timer, lvl int, tk, when, key int64) {
	switch {
	case lvl == locatedIdle:
		t.loc = locNone
	case lvl < 0:
		t.loc = locReady
		w.ready.push(entry{t: t, when: when, key: when, seq: t.seq.Load()})
	default:
		w.link(t, lvl, tk, key)
	}
}

// locatedIdle is locate's level for a timer that is no longer pending.
const locatedIdle = -2

// locateIdleHook, nil outside tests, runs in locate when it finds the
// timer idle, before it publishes that the timer is unlinked.
var locateIdleHook func(*Timer)

// locate finds where t's current deadline when belongs, publishes it in
// t.slotStart, and returns it: level locatedIdle if t is no longer pending,
// -1 for the ready heap (key is then when), else the level and tick of
// its slot and the key link takes. The deadline is re-read after
// publishing the slot's start, so that a concurrent lock-free Reset either
// sees the new start or is seen here (see Timer.TryReset). mu held.
func (w *Wheel) locate(t *Timer) (lvl int, tk, when, key int64) {
	for {
		due := t.due.Load()
		if due <= 0 {
			if locateIdleHook != nil {
				locateIdleHook(t)
			}
			// An idle timer still linked where it was stopped may be
			// rescheduled in place without the lock (Timer.TryReset):
			// re-read the deadline after publishing that it is unlinked,
			// so that such a Reset is either seen here or sees -1 and
			// repairs under the lock.
			t.slotStart.Store(-1)
			if t.due.Load() > 0 {
				continue
			}
			return locatedIdle, 0, 0, 0
		}
		when = due - 1
		lvl, tk = w.slotFor(t, when)
		if lvl < 0 {
			t.slotStart.Store(-1)
			if t.due.Load() != due {
				continue
			}
			return lvl, tk, when, when
		}
		lv := &w.levels[lvl]
		key = w.tickStart((tk >> lv.shift) << lv.shift)
		t.slotStart.Store(key)
		if t.due.Load() != due {
			continue
		}
		if when < w.tickStart(tk+1) { // the deadline's tick is tk (tk is never after it)
			key = when
		}
		return lvl, tk, when, key
	}
}

// slotFor returns where place puts a timer with deadline when: the level
// and the tick whose slot it goes to, or level -1 for the ready heap (due
// before the cursor). mu held.
func (w *Wheel) slotFor(t *Timer, when int64) (lvl int, tk int64) {
	tk = when / w.tick
	if tk < w.cur {
		return -1, tk
	}
	// Level 0 takes every deadline less than its size ahead of the
	// cursor, also past the end of the cursor's window (its slots before
	// the cursor's hold the next window, see nextSlot): timers a step-down
	// period ahead must not pile up in a higher level at the end of every
	// window, to be re-bucketed all at once when the cursor crosses into
	// the next.
	if d := tk - w.cur; d >= 1<<level0Bits {
		return 1 + (bits.Len64(uint64(tk^w.cur))-1-level0Bits)/slotBits, tk
	} else if w.batchSlots && d >= int64(w.alignLead) {
		// A real-time timer far ahead sits in the slot halfway to its
		// deadline, so that Resets moving it earlier but not before that
		// (a heartbeat drawing a shorter timeout) stay lock-free; the
		// driver re-places it when that slot comes. With a SetMinReset
		// promise of m, it can sit as far as m ahead (less a margin for
		// the coarse clock and the cursor, which may trail real time):
		// every later Reset lands after that.
		ahead := d / 2
		if m := int64(t.minReset.Load()&minResetMax) - minResetMargin; m > ahead {
			ahead = min(m, d)
		}
		tk = w.cur + ahead
	}
	return 0, tk
}

// prefetchPlace hints the cache line that placing t will write besides
// t's own: the entry of the bucket it will be appended to, which is
// usually cold when the driver re-places timers into many slots. mu held.
func (w *Wheel) prefetchPlace(t *Timer) {
	due := t.due.Load()
	if due <= 0 {
		return
	}
	lvl, tk := w.slotFor(t, due-1)
	if lvl < 0 {
		return
	}
	lv := &w.levels[lvl]
	lv.buckets[lv.index(tk)].prefetchTail()
}

// link appends t to the bucket of the slot of tick tk on level lvl, whose
// start (or, for a timer spliceChunk moves ahead of its own slot, a later
// time) the caller has published in t.slotStart. On level 0, key is when
// the driver needs to look at t: its deadline if due in this slot, the
// slot's start if t sits ahead of its deadline (see place).
func (w *Wheel) link(t *Timer, lvl int, tk, key int64) {
	lv := &w.levels[lvl]
	idx := lv.index(tk)
	w.noteSlot(lvl, idx, key, key)
	w.push(&lv.buckets[idx], t)
	t.loc, t.slot = locSlot, uint16(lvl<<slotLevelShift|idx)
}

// noteSlot marks slot idx of level lvl occupied by timers with keys from
// lo to hi (see link). mu held.
func (w *Wheel) noteSlot(lvl, idx int, lo, hi int64) {
	lv := &w.levels[lvl]
	if lvl == 0 {
		// The slot is due once its latest key has passed (slotDue).
		if !lv.isSet(idx) {
			w.slotMax[idx], w.slotNext[idx] = hi, lo
		} else {
			w.slotMax[idx] = max(w.slotMax[idx], hi)
			w.slotNext[idx] = min(w.slotNext[idx], lo)
		}
	}
	lv.mark(idx)
}

// unlink removes t from its slot, if it is in one, and detaches it from
// any heap entry.
func (w *Wheel) unlink(t *Timer) {
	switch t.loc {
	case locSlot:
		lvl, idx := t.where()
		lv := &w.levels[lvl]
		if w.remove(&lv.buckets[idx], t) {
			lv.unmark(idx)
		}
	case locReady:
		// The heap entry is left behind and recognized as stale.
	case locLane:
		// So is the lane entry: the timer's slotStart is no longer the
		// lane's sentinel (see walkLane).
	}
	t.loc = locNone
	t.slotStart.Store(-1)
}

// nextSlot finds the earliest occupied slot at or after the cursor.
// On levels above 0 the cursor's own slot has been drained (see
// moveCursor), so the search starts after it. Level 0 is a ring: a slot
// before the cursor's holds timers of the next 1<<level0Bits-tick window
// (see place), which come after every higher-level slot starting at that
// window's start or earlier (those are drained into level 0 first).
func (w *Wheel) nextSlot() (lvl, idx int, start int64, ok bool) {
	lv0 := &w.levels[0]
	pos := lv0.index(w.cur)
	base := w.cur >> level0Bits << level0Bits
	if i, found := lv0.firstFrom(pos); found {
		return 0, i, base | int64(i), true
	}
	for l := 1; l < len(w.levels); l++ {
		lv := &w.levels[l]
		p := lv.index(w.cur) + 1
		if p == 1<<lv.bits {
			continue
		}
		if i, found := lv.firstFrom(p); found {
			up := lv.shift + lv.bits
			lvl, idx, start, ok = l, i, (w.cur>>up)<<up|int64(i)<<lv.shift, true
			break
		}
	}
	if i, found := lv0.firstFrom(0); found && i < pos {
		if s := base + 1<<level0Bits | int64(i); !ok || s < start {
			return 0, i, s, true
		}
	}
	return lvl, idx, start, ok
}

// processSlot moves the cursor to a slot's start and re-buckets its timers:
// one level down, or into the ready heap when due within the cursor's tick.
func (w *Wheel) processSlot(lvl, idx int, start int64) {
	if lvl == 0 {
		lv := &w.levels[0]
		b := lv.buckets[idx]
		lv.buckets[idx] = bucket{}
		lv.unmark(idx)
		w.moveCursor(start + 1)
		w.replace(&b, nil)
		return
	}
	w.moveCursor(start) // queues this slot for draining
}

// replace re-places the timers of bucket b, up to *budget of them (nil:
// all), and reports whether b is empty then (and freed). Their slot starts stay
// published until place publishes the new ones: the old slot still starts
// no later than the new one, so a concurrent lock-free Reset stays correct
// (place re-reads the deadline after publishing).
func (w *Wheel) replace(b *bucket, budget *int) bool {
	for t := w.front(b); t != nil; t = w.front(b) {
		if budget != nil {
			if *budget <= 0 {
				return false
			}
			*budget--
		}
		b.prefetchAhead(placeAhead)
		b.consume(t)
		t.loc = locNone
		w.place(t)
	}
	w.freeBucket(b)
	return true
}

// moveCursor moves the cursor forward to tick c. Every slot starting before
// c must already be processed. Slots of higher levels that start exactly at
// c are queued for draining (see drainSome).
func (w *Wheel) moveCursor(c int64) {
	if c <= w.cur {
		return
	}
	w.cur = c
	for l := len(w.levels) - 1; l >= 1; l-- {
		lv := &w.levels[l]
		if idx := lv.index(c); lv.isSet(idx) {
			w.drains = append(w.drains, l<<16|idx)
		}
	}
}

// drainSome re-buckets the timers of the slots queued by moveCursor, at most
// drainBudget of them (0: all), and reports whether the queue is empty. A
// higher-level slot can hold hundreds of thousands of timers; the real-time
// driver drains it in chunks and releases the lock in between, so that
// locked Resets are not held up for milliseconds. While a slot drains it
// stays linked: the cursor sits at its start, so neither the slot search
// (strictly after the cursor on levels above 0) nor a new placement (which
// needs a later slot on that level) can reach it, and Reset, Stop and
// unlink work on its timers as usual.
func (w *Wheel) drainSome() bool {
	var budget *int
	if w.drainBudget > 0 {
		n := w.drainBudget
		budget = &n
	}
	for len(w.drains) > 0 {
		d := w.drains[0]
		lv := &w.levels[d>>16]
		idx := d & 0xffff
		if !w.replace(&lv.buckets[idx], budget) {
			return false
		}
		lv.unmark(idx)
		copy(w.drains, w.drains[1:])
		w.drains = w.drains[:len(w.drains)-1]
	}
	return true
}
