package multiraft

import (
	"unsafe"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/prefetch"
)

// With many groups awake, a group's memory is cold when a batch reaches
// it: the group's index slot, the group and its node are cache misses
// one after another. A lookahead prefetches the index slot of the entry
// 3*lookDist ahead and resolves the group 2*lookDist ahead and prefetches
// it, and stepFast prefetches the node's line lookDist ahead, so that the
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

// resolve looks up entry j's group and prefetches what Step reads of it
// (id, voters and fast, which a group's size class may put across two
// lines).
func (l *lookahead) resolve(h *Host, j int) {
	g := h.groups.get(l.id(j))
	l.ring[j%lookRing] = g
	if g != nil {
		p := uintptr(unsafe.Pointer(g))
		prefetch.Line(p)
		prefetch.Line(p + groupHot - 1)
	}
}

// groupHot is how many bytes of a group Step's lock-free path reads.
const groupHot = unsafe.Offsetof(group{}.fast) + unsafe.Sizeof(group{}.fast)

// next returns entry i's group (nil if unknown), having prefetched the
// index slot of entry i+3*lookDist and resolved entry i+2*lookDist (its
// node is the caller's to prefetch, as it needs: see stepFast). Calls
// must come in order of i. h.gmu or h.mu is held.
func (l *lookahead) next(h *Host, i int) *group {
	if j := i + 3*lookDist; j < l.n {
		l.prefetchSlot(h, j)
	}
	if j := i + 2*lookDist; j < l.n {
		l.resolve(h, j)
	}
	return l.ring[i%lookRing]
}

// prefetchEntry prefetches the lines of n a coalesced entry touches when
// the node takes it lock-free: the first for a follower's heartbeat
// (election.Node.TryHeartbeat), and the second too for a leader's answer
// (TryHeartbeatResp). An entry the node must step misses on the rest.
func prefetchEntry(n *election.Node, heartbeat bool) {
	p := uintptr(unsafe.Pointer(n))
	prefetch.Line(p)
	if !heartbeat {
		prefetch.Line(p + lineSize)
	}
}

// prefetchNode prefetches the whole of n.
func prefetchNode(n *election.Node) {
	p := uintptr(unsafe.Pointer(n))
	for off := uintptr(0); off < nodeSize; off += lineSize {
		prefetch.Line(p + off)
	}
}

// prefetchNodes prefetches, in the sweep's pass down the awake nodes at
// index i, the first line of the node awakeDist before it: where
// election.Node.Leading and SuperviseContact read. Most awake nodes are
// followers that the passes only ask a question, so the iterations are
// short and the distance long.
func prefetchNodes(nodes []*election.Node, i int) {
	if j := i - awakeDist; j >= 0 {
		prefetch.Line(uintptr(unsafe.Pointer(nodes[j])))
	}
}

// awakeDist is prefetchNodes's distance.
const awakeDist = 8

// prefetchLeaders prefetches, in the tick's pass over its leaders at
// index i, the node leaderDist ahead, whose lines it prefetches all:
// LeaderTickTerm reads most of a node. The list holds the nodes (see
// leaderEntry), so nothing waits for a group to find one.
func prefetchLeaders(leaders []leaderEntry, i int) {
	if j := i + leaderDist; j < len(leaders) {
		prefetchNode(leaders[j].node)
	}
}

// leaderDist is prefetchLeaders's distance.
const leaderDist = 2 * lookDist
