package multiraft

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// groupIndex finds a host's groups by ID, and holds each group's touch
// word (see touchWord) in its slot. Group IDs are often dense (allocated
// in sequence, as CockroachDB's range IDs and TiKV's region IDs are):
// those live in pages of a flat table, found with two loads and no
// hashing, at sixteen bytes per ID (nineteen with a page's alignment),
// and the slot of an ID is known before it is read, so that a batch's
// lookups can be prefetched ahead (see lookahead). IDs whose page would
// cost more than the groups on it justify (sparse IDs) go to a map of
// slots instead.
//
// Its groups are set with Host.mu and Host.gmu held and read with
// either, so that under either a slot's touch word is its group's; the
// touch words are atomic, and Touch writes them under gmu's read lock.
// A slot is never moved while its group is indexed.
type groupIndex struct {
	pages  []*page // by ID >> pageShift; nil: no page
	npages int     // pages allocated
	other  map[GroupID]*slot
	n      int // groups indexed
}

// page holds the slots of pageLen consecutive IDs, aligned to a cache
// line (see newPage), so that no slot straddles one.
type page [pageLen]slot

// newPage returns a zeroed page aligned to a cache line. A page holds
// pointers, and the runtime puts a header before such an object when it
// is large (Go's allocation headers, over 512 bytes), which misaligns
// it: a page is cut, at its first aligned slot, from a larger allocation,
// shifted by 8 bytes if its slots do not start on a 16-byte boundary
// (they do with the runtime's 8-byte header).
func newPage() *page {
	const spare = lineSize/slotSize - 1
	var s []slot
	if a := new(struct {
		_ uint64
		s [pageLen + spare]slot
	}); uintptr(unsafe.Pointer(&a.s))%slotSize == 0 {
		s = a.s[:]
	} else {
		s = new([pageLen + spare]slot)[:]
	}
	k := (lineSize - uintptr(unsafe.Pointer(&s[0]))%lineSize) % lineSize / slotSize
	return (*page)(s[k : k+pageLen])
}

// slotSize is the size of a slot, which divides lineSize.
const slotSize = unsafe.Sizeof(slot{})

// slot is an ID's entry in the index: its group (nil: none) and the
// group's touch word, side by side, so that a Touch of an awake group
// reads and writes one cache line.
type slot struct {
	g     *group
	touch touchWord
}

// touchWord holds a group's last Touch time and its awake bit in one
// word: (wheel time of the last Touch + 1) << 1 | awake. 0: never
// touched, asleep. It is read and written without Host.mu.
//
// The awake bit mirrors group.node != nil for Touch: set when the group
// wakes (startNode), cleared before it hibernates. Touch sets the time
// and reads the bit in one atomic step (touch), and hibernate clears the
// bit and reads the time in one (sleep), so either the touch comes first
// and hibernate sees it (and refuses, setting the bit again) or the clear
// comes first and Touch sees the group asleep (and wakes it under mu).
// The bit is set and cleared only with Host.mu held: by startNode and
// hibernate, and by put and del, which zero the word of a slot they give
// a group or take one from.
type touchWord struct{ v atomic.Uint64 }

const awakeBit = 1

// touch records a Touch at now and reports whether the group was awake
// at that instant. A word that holds a Touch at now or later already is
// only read: a group touched all the time keeps its line shared.
func (w *touchWord) touch(now time.Duration) (awake bool) {
	t := uint64(now+1) << 1
	for {
		old := w.v.Load()
		if old&^awakeBit >= t {
			return old&awakeBit != 0
		}
		if w.v.CompareAndSwap(old, t|old&awakeBit) {
			return old&awakeBit != 0
		}
	}
}

// last returns the wheel time of the last Touch and whether there was
// one.
func (w *touchWord) last() (time.Duration, bool) {
	return unpackTouch(w.v.Load())
}

// awake reports the awake bit.
func (w *touchWord) awake() bool { return w.v.Load()&awakeBit != 0 }

// setAwake sets the awake bit.
func (w *touchWord) setAwake() { w.v.Or(awakeBit) }

// sleep clears the awake bit and returns, of the same instant, the last
// Touch as last does.
func (w *touchWord) sleep() (time.Duration, bool) {
	return unpackTouch(w.v.And(^uint64(awakeBit)))
}

func unpackTouch(v uint64) (time.Duration, bool) {
	t := v >> 1
	return time.Duration(t) - 1, t != 0
}

const (
	pageShift = 8
	pageLen   = 1 << pageShift
	// maxDenseID bounds the IDs that may live in pages (the table of
	// pages grows to at most maxDenseID/pageLen entries, 2 MiB).
	maxDenseID = 1 << 26
	// pageBudget is how many table slots per indexed group pages may
	// hold (beyond the first few pages): with dense IDs about one.
	pageBudget = 4
)

// find returns the slot of the group with id, or nil.
func (x *groupIndex) find(id GroupID) *slot {
	if id < maxDenseID {
		if p := id >> pageShift; p < GroupID(len(x.pages)) {
			if page := x.pages[p]; page != nil {
				if s := &page[id&(pageLen-1)]; s.g != nil {
					return s
				}
			}
		}
	}
	if len(x.other) == 0 {
		return nil
	}
	return x.other[id]
}

// get returns the group with id, or nil.
func (x *groupIndex) get(id GroupID) *group {
	if s := x.find(id); s != nil {
		return s.g
	}
	return nil
}

// word returns the touch word of g, which is indexed. Host.mu is held.
func (x *groupIndex) word(g *group) *touchWord {
	return &x.find(g.id).touch
}

// slotAddr returns the address of id's slot in a page, or 0 if it has
// none: a prefetch hint only.
func (x *groupIndex) slotAddr(id GroupID) uintptr {
	if id >= maxDenseID {
		return 0
	}
	p := id >> pageShift
	if p >= GroupID(len(x.pages)) || x.pages[p] == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(&x.pages[p][id&(pageLen-1)]))
}

// put indexes g under its ID, which is not indexed yet, with a touch
// word of zero (never touched, asleep).
func (x *groupIndex) put(g *group) {
	x.n++
	id := g.id
	if id < maxDenseID {
		p := int(id >> pageShift)
		if p < len(x.pages) && x.pages[p] != nil {
			x.pages[p][id&(pageLen-1)].set(g)
			return
		}
		if (x.npages+1)*pageLen <= pageBudget*x.n+16*pageLen {
			for len(x.pages) <= p {
				x.pages = append(x.pages, nil)
			}
			x.pages[p] = newPage()
			x.npages++
			x.pages[p][id&(pageLen-1)].set(g)
			return
		}
	}
	if x.other == nil {
		x.other = make(map[GroupID]*slot)
	}
	x.other[id] = &slot{g: g}
}

// set makes g the slot's group, with a touch word of zero.
func (s *slot) set(g *group) {
	s.g = g
	s.touch.v.Store(0)
}

// del removes id from the index.
func (x *groupIndex) del(id GroupID) {
	if id < maxDenseID {
		if p := id >> pageShift; p < GroupID(len(x.pages)) && x.pages[p] != nil && x.pages[p][id&(pageLen-1)].g != nil {
			x.pages[p][id&(pageLen-1)].set(nil)
			x.n--
			return
		}
	}
	if _, ok := x.other[id]; ok {
		delete(x.other, id)
		x.n--
	}
}
