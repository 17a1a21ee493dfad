package multiraft

import "unsafe"

// groupIndex finds a host's groups by ID. Group IDs are often dense
// (allocated in sequence, as CockroachDB's range IDs and TiKV's region
// IDs are): those live in pages of a flat table, found with two loads and
// no hashing, at eight bytes per ID, and the slot of an ID is known
// before it is read, so that a batch's lookups can be prefetched ahead
// (see lookahead). IDs whose page would cost more than the groups on it
// justify (sparse IDs) go to a map instead.
type groupIndex struct {
	pages  [][]*group // by ID >> pageShift; nil: no page
	npages int        // pages allocated
	other  map[GroupID]*group
	n      int // groups indexed
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

// get returns the group with id, or nil.
func (x *groupIndex) get(id GroupID) *group {
	if id < maxDenseID {
		if p := id >> pageShift; p < GroupID(len(x.pages)) {
			if page := x.pages[p]; page != nil {
				if g := page[id&(pageLen-1)]; g != nil {
					return g
				}
			}
		}
	}
	if len(x.other) == 0 {
		return nil
	}
	return x.other[id]
}

// slot returns the address of id's slot in a page, or 0 if it has none:
// a prefetch hint only.
func (x *groupIndex) slot(id GroupID) uintptr {
	if id >= maxDenseID {
		return 0
	}
	p := id >> pageShift
	if p >= GroupID(len(x.pages)) || x.pages[p] == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(&x.pages[p][id&(pageLen-1)]))
}

// put indexes g under its ID, which is not indexed yet.
func (x *groupIndex) put(g *group) {
	x.n++
	id := g.id
	if id < maxDenseID {
		p := int(id >> pageShift)
		if p < len(x.pages) && x.pages[p] != nil {
			x.pages[p][id&(pageLen-1)] = g
			return
		}
		if (x.npages+1)*pageLen <= pageBudget*x.n+16*pageLen {
			for len(x.pages) <= p {
				x.pages = append(x.pages, nil)
			}
			x.pages[p] = make([]*group, pageLen)
			x.npages++
			x.pages[p][id&(pageLen-1)] = g
			return
		}
	}
	if x.other == nil {
		x.other = make(map[GroupID]*group)
	}
	x.other[id] = g
}

// del removes id from the index.
func (x *groupIndex) del(id GroupID) {
	if id < maxDenseID {
		if p := id >> pageShift; p < GroupID(len(x.pages)) && x.pages[p] != nil && x.pages[p][id&(pageLen-1)] != nil {
			x.pages[p][id&(pageLen-1)] = nil
			x.n--
			return
		}
	}
	if _, ok := x.other[id]; ok {
		delete(x.other, id)
		x.n--
	}
}
