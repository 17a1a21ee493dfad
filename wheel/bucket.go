package wheel

import (
	"sync/atomic"
	"unsafe"

	"github.com/raftick/raftick/internal/prefetch"
)

// A slot's timers are kept in a bucket: a queue of fixed-size chunks of
// timer pointers, appended at the tail and consumed from the head, rather
// than a linked list through the timers.
//
// Why not a list: with 100k Raft groups almost every timer the driver
// visits is a cache miss. Walking a list, the address of the next timer is
// known only once the current one has arrived, so the misses queue one
// behind another; in a bucket the addresses lie in order in memory, and the
// driver prefetches timers several entries ahead of the one it works on.
// Appending writes only the bucket's tail chunk, not the timer that was
// last in the slot (another miss). Removing a timer (a Reset that moves it
// earlier, Init) leaves a nil entry, a tombstone; a bucket whose tombstones
// outnumber its timers by a chunk is compacted.
//
// Chunks come from the wheel's free list and go back to it when consumed,
// so that a wheel allocates only when it holds more timers than ever
// before: it keeps the chunks it needed at its busiest, about 8 bytes per
// timer then.

// chunkLen is the number of timers in a chunk: a chunk is 512 bytes.
const chunkLen = 62

type chunk struct {
	next *chunk
	// gen is the bucket's (bucket.gen) while the chunk is in one. When it
	// is the gen of the level-0 slot the driver runs without the lock
	// (Wheel.tr, see Wheel.inTransit), the chunk's entries are read by the
	// driver with atomic loads, and a timer unlinked from it (under the
	// lock) leaves its tombstone with an atomic store. mu held.
	gen uint64
	t   [chunkLen]*Timer
}

// load reads entry i of a chunk that may be in transit.
func (c *chunk) load(i int) *Timer {
	return (*Timer)(atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&c.t[i]))))
}

// bucket is the queue of one slot's timers. The entries of head before
// pos have been consumed; the tail holds tn entries; every chunk between
// is full. A bucket with live == 0 holds no chunk.
type bucket struct {
	head, tail *chunk
	// prev is the chunk before the tail, if known (nil: none, or not
	// known), for appendChunk.
	prev *chunk
	// gen tells this bucket's chunks from others' (chunk.gen): a number
	// the wheel gives each bucket when it takes its first chunk, unique
	// for the wheel's life. It is what batchSlot takes a slot's chunks
	// into transit by, without touching them.
	gen     uint64
	pos, tn int32
	live    int32 // timers in the bucket
	dead    int32 // tombstones among the entries not consumed
}

// newChunk returns an empty chunk from the free list. When the list is
// empty it allocates a slab of chunks, an eighth of what the wheel holds
// (at least one, at most 256), so that a wheel growing to a million
// timers makes a few hundred allocations, not one per chunk. mu held.
func (w *Wheel) newChunk() *chunk {
	if w.freeChunks == nil {
		slab := make([]chunk, min(max(1, w.chunks/8), 256))
		for i := range slab {
			w.freeChunk(&slab[i])
		}
		w.chunks += len(slab)
	}
	c := w.freeChunks
	w.freeChunks = c.next
	w.nfree--
	c.next = nil
	return c
}

// newGen returns a bucket generation not given before (see bucket.gen).
// mu held.
func (w *Wheel) newGen() uint64 {
	w.gens++
	return w.gens
}

// inTransit reports whether c is a chunk of the level-0 slot the driver
// runs without the lock (see Wheel.runTransit). mu held, or the driver.
func (w *Wheel) inTransit(c *chunk) bool { return c.gen == w.tr.gen && w.tr.gen != 0 }

// freeChunk returns a consumed chunk, whose entries are all nil, to the
// free list. mu held.
func (w *Wheel) freeChunk(c *chunk) {
	c.next = w.freeChunks
	w.freeChunks = c
	w.nfree++
}

// push appends t to b and records its place in t. mu held.
func (w *Wheel) push(b *bucket, t *Timer) {
	if b.tail == nil {
		c := w.newChunk()
		b.gen = w.newGen()
		c.gen = b.gen
		b.head, b.tail, b.pos, b.tn = c, c, 0, 0
	} else if b.tn == chunkLen {
		c := w.newChunk()
		c.gen = b.gen
		b.tail.next = c
		b.prev, b.tail, b.tn = b.tail, c, 0
	}
	b.tail.t[b.tn] = t
	t.ch, t.pos = b.tail, uint8(b.tn)
	b.tn++
	b.live++
}

// appendChunk moves c, a full chunk of live timers and tombstones, into
// b: the timers keep their entries (Timer.ch, Timer.pos). So that every
// chunk but the tail stays full, c goes in before b's tail unless that is
// full: its timers come after those appended to b before, but for those
// in a tail with free entries. (Appending c after such a tail instead,
// whose free entries would become tombstones, left buckets full of them
// and cost more than it saved; inserting c after the head cost lateness,
// as the driver stops walking a slot it takes early at the first timer not
// due yet, see walkTransit.) mu held.
func (w *Wheel) appendChunk(b *bucket, c *chunk, live int32) {
	switch {
	case b.tail == nil:
		c.next = nil
		b.head, b.tail, b.pos, b.tn = c, c, 0, chunkLen
		b.gen = w.newGen()
	case b.tn == chunkLen:
		c.next = nil
		b.tail.next = c
		b.prev, b.tail = b.tail, c
	case b.head == b.tail:
		// The head's entries before pos are consumed, and nil: they
		// become tombstones.
		c.next = b.head
		b.head, b.prev = c, c
		b.dead, b.pos = b.dead+b.pos, 0
	default:
		if b.prev == nil {
			// Not known since the bucket was put together (giveBack)
			// or its chunk before the tail consumed: found once.
			p := b.head
			for p.next != b.tail {
				p = p.next
			}
			b.prev = p
		}
		c.next = b.tail
		b.prev.next = c
		b.prev = c
	}
	c.gen = b.gen
	b.live += live
	b.dead += chunkLen - live
}

// remove takes t, which is in b, out of it, leaving a tombstone, and frees
// or compacts the bucket if it is then empty or mostly tombstones. It
// reports whether b is now empty. mu held.
func (w *Wheel) remove(b *bucket, t *Timer) bool {
	if c := t.ch; w.inTransit(c) {
		// The driver is reading the chunk without the lock; the bucket
		// it belonged to is the driver's (see Wheel.runTransit).
		atomic.StorePointer((*unsafe.Pointer)(unsafe.Pointer(&c.t[t.pos])), nil)
		t.ch = nil
		return false
	}
	t.ch.t[t.pos] = nil
	t.ch = nil
	b.live--
	b.dead++
	if b.live == 0 {
		w.freeBucket(b)
		return true
	}
	if b.dead > b.live+chunkLen {
		w.compact(b)
	}
	return false
}

// front returns the first timer of b not consumed, skipping tombstones and
// freeing the chunks it passes, or nil if there is none. mu held.
func (w *Wheel) front(b *bucket) *Timer {
	for c := b.head; c != nil; c = b.head {
		n := int32(chunkLen)
		if c == b.tail {
			n = b.tn
		}
		for ; b.pos < n; b.pos++ {
			if t := c.t[b.pos]; t != nil {
				return t
			}
			b.dead--
		}
		if c == b.tail {
			return nil
		}
		b.head, b.pos = c.next, 0
		if c == b.prev {
			b.prev = nil
		}
		w.freeChunk(c)
	}
	return nil
}

// consume takes t, just returned by front(b), out of b. mu held.
func (b *bucket) consume(t *Timer) {
	b.head.t[b.pos] = nil
	b.pos++
	b.live--
	t.ch = nil
}

// prefetchAhead hints the timer k entries after b's front (tombstones
// count as entries), if there is one. mu held.
func (b *bucket) prefetchAhead(k int32) {
	c, i := b.head, b.pos+k
	if c == nil {
		return
	}
	if i >= chunkLen {
		if c = c.next; c == nil {
			return
		}
		i -= chunkLen
	}
	if c == b.tail && i >= b.tn {
		return
	}
	if t := c.t[i]; t != nil {
		prefetchTimer(t)
	}
}

// prefetchTail hints the entry that the next push to b writes. mu held.
func (b *bucket) prefetchTail() {
	if c := b.tail; c != nil && b.tn < chunkLen {
		prefetch.Line(uintptr(unsafe.Pointer(&c.t[b.tn])))
	}
}

// freeBucket frees every chunk of b and empties it; its entries must all
// be nil or stale. mu held.
func (w *Wheel) freeBucket(b *bucket) {
	for c := b.head; c != nil; {
		next := c.next
		clear(c.t[:])
		w.freeChunk(c)
		c = next
	}
	*b = bucket{}
}

// compact rewrites b without its tombstones. mu held.
func (w *Wheel) compact(b *bucket) {
	old := *b
	*b = bucket{}
	for t := w.front(&old); t != nil; t = w.front(&old) {
		old.consume(t)
		w.push(b, t)
	}
	w.freeBucket(&old)
}

// each calls f for every timer in b, without consuming them. mu held.
func (b *bucket) each(f func(*Timer)) {
	for c, i := b.head, b.pos; c != nil; c, i = c.next, 0 {
		n := int32(chunkLen)
		if c == b.tail {
			n = b.tn
		}
		for ; i < n; i++ {
			if t := c.t[i]; t != nil {
				f(t)
			}
		}
	}
}
