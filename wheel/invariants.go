package wheel

import (
	"fmt"
	"sync/atomic"
)

// The wheel's rules, checked in code when built with the invariants tag
// (go test -tags invariants), as pebble does: the wheel then checks
// itself under its lock at every step of a virtual wheel, at every round
// of the real-time driver and when it is stopped, and panics naming the
// rule that does not hold. Without the tag the checks compile away.

// invariantChecks counts the checks made, so that a big wheel is checked
// on a sample of them (see checkLocked).
var invariantChecks atomic.Int64

// checkLocked checks the wheel's rules, mu held, and panics with the
// first that does not hold. On a wheel holding more than bigWheelChunks
// chunks it checks one call in 64, so that a test with a million timers
// stays affordable.
func (w *Wheel) checkLocked() {
	const bigWheelChunks = 4096
	if n := invariantChecks.Add(1); w.chunks > bigWheelChunks && n%64 != 0 {
		return
	}
	fail := func(format string, args ...any) {
		panic(fmt.Sprintf("wheel invariant: "+format, args...))
	}
	for l := range w.levels {
		lv := &w.levels[l]
		for i := range lv.buckets {
			b := &lv.buckets[i]
			live, dead := w.checkBucket(b, l, i, fail)
			if live != b.live || dead != b.dead {
				fail("level %d slot %d holds %d timers and %d tombstones, its bucket counts %d and %d", l, i, live, dead, b.live, b.dead)
			}
			if lv.isSet(i) != (b.live > 0) {
				fail("level %d slot %d: occupied bit %v, %d timers", l, i, lv.isSet(i), b.live)
			}
		}
	}
	for k := 1; k < len(w.ready); k++ {
		if w.ready[k].less(w.ready[(k-1)/2]) {
			fail("ready heap entry %d is less than its parent", k)
		}
	}
	free := 0
	for c := w.freeChunks; c != nil; c = c.next {
		free++
	}
	if free != w.nfree || w.nfree > w.chunks {
		fail("%d chunks on the free list, nfree %d, chunks %d", free, w.nfree, w.chunks)
	}
	if !w.running && w.tr.head != nil {
		fail("a slot is in transit while the driver runs no callbacks")
	}
}

// checkBucket checks the timers of bucket b, slot i of level l: each is
// where it says it is (chunk, entry, slot), bound to w and linked in a
// slot, and each chunk carries the bucket's generation. It returns the
// timers and tombstones it found.
func (w *Wheel) checkBucket(b *bucket, l, i int, fail func(string, ...any)) (live, dead int32) {
	if b.head == nil {
		return 0, 0
	}
	slot := uint16(l<<slotLevelShift | i)
	for c, k := b.head, b.pos; c != nil; c, k = c.next, 0 {
		if c.gen != b.gen {
			fail("level %d slot %d: a chunk of generation %d in a bucket of %d", l, i, c.gen, b.gen)
		}
		n := int32(chunkLen)
		if c == b.tail {
			n = b.tn
		}
		for ; k < n; k++ {
			t := c.t[k]
			switch {
			case t == nil:
				dead++
				continue
			case !t.boundTo(w):
				fail("level %d slot %d: a timer bound to another wheel", l, i)
			case t.loc != locSlot || t.slot != slot:
				fail("level %d slot %d: a timer that says it is at loc %d slot %#x", l, i, t.loc, t.slot)
			case t.ch != c || int32(t.pos) != k:
				fail("level %d slot %d: a timer at entry %d that says it is at entry %d of another chunk", l, i, k, t.pos)
			}
			live++
		}
		if c == b.tail {
			break
		}
	}
	return live, dead
}
