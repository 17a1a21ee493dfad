package etcdadapter

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"unsafe"

	"go.etcd.io/raft/v3"
)

// This file is the one place that reaches into go.etcd.io/raft/v3's
// unexported state. Why and how is explained in doc.go ("Determinism");
// in short:
//
// etcd draws a node's randomized election timeout in raft.reset, which
// every becomeFollower, becomeCandidate and becomeLeader calls, from a
// package-global crypto/rand source that cannot be injected. The timeout
// is stored in the unexported field raft.randomizedElectionTimeout and read
// only by pastElectionTimeout, which tickElection evaluates once per Tick,
// before anything in that Tick could reset it. reset also always replaces
// the unexported pointer raft.readOnly with a fresh allocation, and nothing
// else assigns that field after construction.
//
// So after every call into a RawNode the adapter compares readOnly with
// the pointer it saw last: if it changed, etcd has drawn a new timeout
// during the call (and has not used it yet), and the adapter overwrites it
// with a draw from the node's own seeded source. Keeping the previous
// pointer referenced rules out address reuse. The result is exact: every
// value etcd compares against comes from the adapter's source, in the same
// distribution, at the same moments etcd would have drawn.

// layout locates the fields the timeout hook uses, found by name and
// checked by kind once per process.
type layout struct {
	raft        uintptr // RawNode.raft (*raft)
	randomized  uintptr // raft.randomizedElectionTimeout (int)
	electionTmo uintptr // raft.electionTimeout (int)
	elapsed     uintptr // raft.electionElapsed (int), read only
	readOnly    uintptr // raft.readOnly (*readOnly)
	err         error
}

var raftLayout = sync.OnceValue(probeLayout)

func probeLayout() layout {
	var l layout
	fail := func(format string, args ...any) layout {
		return layout{err: fmt.Errorf("%w: "+format, append([]any{ErrUnsupportedRaft}, args...)...)}
	}
	rn := reflect.TypeFor[raft.RawNode]()
	f, ok := rn.FieldByName("raft")
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct {
		return fail("RawNode has no field raft of pointer-to-struct type")
	}
	l.raft = f.Offset
	r := f.Type.Elem()
	intField := func(name string) (uintptr, bool) {
		f, ok := r.FieldByName(name)
		return f.Offset, ok && f.Type.Kind() == reflect.Int && len(f.Index) == 1
	}
	if l.randomized, ok = intField("randomizedElectionTimeout"); !ok {
		return fail("raft has no int field randomizedElectionTimeout")
	}
	if l.electionTmo, ok = intField("electionTimeout"); !ok {
		return fail("raft has no int field electionTimeout")
	}
	if l.elapsed, ok = intField("electionElapsed"); !ok {
		return fail("raft has no int field electionElapsed")
	}
	ro, ok := r.FieldByName("readOnly")
	if !ok || ro.Type.Kind() != reflect.Pointer || len(ro.Index) != 1 {
		return fail("raft has no pointer field readOnly")
	}
	l.readOnly = ro.Offset
	return l
}

// timeoutHook owns one RawNode's randomized election timeout.
type timeoutHook struct {
	randomized *int            // the RawNode's raft.randomizedElectionTimeout
	elapsed    *int            // the RawNode's raft.electionElapsed (read only)
	readOnly   *unsafe.Pointer // the RawNode's raft.readOnly
	last       unsafe.Pointer  // readOnly as of the last sync (kept alive)
	et         int
	rng        *rand.Rand // nil: only observe etcd's draws
	draws      int64
}

// newTimeoutHook attaches to rn, whose ElectionTick is et. With a nil rng
// it only observes (Timeout reports etcd's own draws).
func newTimeoutHook(rn *raft.RawNode, et int, rng *rand.Rand) (*timeoutHook, error) {
	l := raftLayout()
	if l.err != nil {
		return nil, l.err
	}
	base := unsafe.Pointer(rn)
	r := *(*unsafe.Pointer)(unsafe.Add(base, l.raft))
	if r == nil {
		return nil, fmt.Errorf("%w: RawNode.raft is nil", ErrUnsupportedRaft)
	}
	h := &timeoutHook{
		randomized: (*int)(unsafe.Add(r, l.randomized)),
		elapsed:    (*int)(unsafe.Add(r, l.elapsed)),
		readOnly:   (*unsafe.Pointer)(unsafe.Add(r, l.readOnly)),
		et:         et,
		rng:        rng,
	}
	// The fields must hold what they are named for: etcd's own first draw
	// lies in [et, 2et) and electionTimeout is et.
	if got := *(*int)(unsafe.Add(r, l.electionTmo)); got != et {
		return nil, fmt.Errorf("%w: raft.electionTimeout reads %d, want ElectionTick %d", ErrUnsupportedRaft, got, et)
	}
	if v := *h.randomized; v < et || v >= 2*et {
		return nil, fmt.Errorf("%w: raft.randomizedElectionTimeout reads %d, outside [%d, %d)", ErrUnsupportedRaft, v, et, 2*et)
	}
	if *h.readOnly == nil {
		return nil, fmt.Errorf("%w: raft.readOnly is nil", ErrUnsupportedRaft)
	}
	h.last = *h.readOnly
	h.draws = 1 // newRaft's becomeFollower drew the first timeout
	if rng != nil {
		h.replace()
	}
	return h, nil
}

// sync must be called after every call into the RawNode: it reports
// whether etcd drew a new timeout during the call and, with a source,
// replaces that draw.
func (h *timeoutHook) sync() bool {
	ro := *h.readOnly
	if ro == h.last {
		return false
	}
	h.last = ro
	h.draws++
	if h.rng != nil {
		h.replace()
	}
	return true
}

// replace overwrites etcd's draw with one from the node's source, in the
// same distribution: the integers [et, 2et-1].
func (h *timeoutHook) replace() {
	*h.randomized = h.et + h.rng.IntN(h.et)
}

// timeout returns the current randomized election timeout in ticks.
func (h *timeoutHook) timeout() int { return *h.randomized }

// elapsedTicks returns raft.electionElapsed: ticks since the last reset,
// leader contact or granted vote (0 right after a timeout fired).
func (h *timeoutHook) elapsedTicks() int { return *h.elapsed }
