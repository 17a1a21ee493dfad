package multiraft

import (
	"unsafe"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/prefetch"
)

// With many groups awake, a group's memory is cold when a batch reaches
// it: the group's index slot, the group, its awake state and its node are
// cache misses one after another. A lookahead prefetches the index slot
// of the entry 3*lookDist ahead, resolves the group 2*lookDist ahead and
// prefetches it, and prefetches the node lookDist ahead, so that the
// misses of several entries overlap instead of stalling in turn.

const (
	// lookDist is how many entries ahead a lookahead prefetches a node
	// (its group was prefetched lookDist entries before that).
	lookDist = 4
	// lookRing is the ring of resolved groups: at least 2*lookDist+1.
	lookRing = 16
	// nodeSize is how much of an election.Node to prefetch.
	nodeSize = unsafe.Sizeof(election.Node{})
	lineSize = 64
)

// lookahead resolves and prefetches the groups of one run of entries.
type lookahead struct {
	n    int
	id   func(i int) GroupID
	ring [lookRing]*group
}

// start begins a run of n entries whose group IDs id returns, resolving
// the first 2*lookDist. h.gmu or h.mu is held.
func (l *lookahead) start(h *Host, n int, id func(i int) GroupID) {
	l.n, l.id = n, id
	for j := range min(n, 3*lookDist) {
		l.prefetchSlot(h, j)
	}
	for j := range min(n, 2*lookDist) {
		l.resolve(h, j)
	}
}

// prefetchSlot prefetches entry j's slot in the group index.
func (l *lookahead) prefetchSlot(h *Host, j int) {
	if p := h.groups.slotAddr(l.id(j)); p != 0 {
		prefetch.Line(p)
	}
}

// resolve looks up entry j's group and prefetches it.
func (l *lookahead) resolve(h *Host, j int) {
	g := h.groups.get(l.id(j))
	l.ring[j%lookRing] = g
	if g != nil {
		prefetch.Line(uintptr(unsafe.Pointer(g)))
	}
}

// next returns entry i's group (nil if unknown), having prefetched the
// index slot of entry i+3*lookDist, resolved entry i+2*lookDist and
// prefetched the awake state of entry i+lookDist (its node is the
// caller's to prefetch, as it needs: see stepFast). Calls must come in
// order of i. h.gmu or h.mu is held.
func (l *lookahead) next(h *Host, i int) *group {
	if j := i + 3*lookDist; j < l.n {
		l.prefetchSlot(h, j)
	}
	if j := i + 2*lookDist; j < l.n {
		l.resolve(h, j)
	}
	if j := i + lookDist; j < l.n {
		if g := l.ring[j%lookRing]; g != nil {
			if a := g.fast.Load(); a != nil {
				p := uintptr(unsafe.Pointer(a))
				prefetch.Line(p)
				prefetch.Line(p + lineSize)
			}
		}
	}
	return l.ring[i%lookRing]
}

// hotSize is how much of an election.Node a follower's heartbeat
// touches: the node's first five lines (its lock, its hot fields and its
// election timer's; see election.Node's layout).
const hotSize = 5 * lineSize

// prefetchHot prefetches the lines of n a heartbeat touches.
func prefetchHot(n *election.Node) {
	p := uintptr(unsafe.Pointer(n))
	for off := uintptr(0); off < hotSize; off += lineSize {
		prefetch.Line(p + off)
	}
}

// prefetchNode prefetches the whole of n.
func prefetchNode(n *election.Node) {
	p := uintptr(unsafe.Pointer(n))
	for off := uintptr(0); off < nodeSize; off += lineSize {
		prefetch.Line(p + off)
	}
}

// prefetchAwake prefetches, in a pass over the awake groups at index i,
// the group awakeDist*2 ahead and the first line of the node (where
// election.Node.Leading reads) awakeDist ahead. Most awake groups are
// followers that the pass only asks whether they lead, so the
// iterations are short and the distances long.
func prefetchAwake(awake []*group, i int) {
	if j := i + 2*awakeDist; j < len(awake) {
		prefetch.Line(uintptr(unsafe.Pointer(awake[j])))
	}
	if j := i + awakeDist; j < len(awake) {
		prefetch.Line(uintptr(unsafe.Pointer(awake[j].node)))
	}
}

// awakeDist is prefetchAwake's distance.
const awakeDist = 8

// prefetchLeaders is prefetchAwake for the tick's list of leaders, whose
// nodes it prefetches whole: BroadcastHeartbeat reads most of a node.
func prefetchLeaders(leaders []*group, i int) {
	if j := i + 2*lookDist; j < len(leaders) {
		prefetch.Line(uintptr(unsafe.Pointer(leaders[j])))
	}
	if j := i + lookDist; j < len(leaders) {
		if n := leaders[j].node; n != nil {
			prefetchNode(n)
		}
	}
}
