package multiraft

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/raftick/raftick/election"
)

// Store persists the HardStates (term and vote) of a host's groups: a
// server implements it over its own storage engine, or uses
// multiraft/pebblestore. The Host calls it from one goroutine at a time,
// never with a lock of its own held.
type Store interface {
	// Save writes states atomically and durably, in one sync: when it
	// returns nil every state survives a crash; when it fails, the host
	// writes them again later (a state may then be durable or not).
	// A group appears at most once in states.
	Save(states []GroupState) error
	// Load returns a group's last saved HardState; the zero HardState
	// for a group never saved.
	Load(group GroupID) (election.HardState, error)
	// LoadAll calls fn with every saved group's HardState, for a server
	// that restarts and must know its groups; it stops at fn's first
	// error and returns it.
	LoadAll(fn func(GroupID, election.HardState) error) error
}

// GroupState is one group's HardState in a Store.
type GroupState struct {
	Group GroupID
	State election.HardState
}

// MemoryStore is a Store in memory: it survives a Host being stopped and
// replaced (pass it to the new Host), not a process restart. It is the
// Store of a Host whose Config.Store is nil. Safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[GroupID]election.HardState
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{m: make(map[GroupID]election.HardState)}
}

// Save stores states.
func (s *MemoryStore) Save(states []GroupState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gs := range states {
		s.m[gs.Group] = gs.State
	}
	return nil
}

// Load returns group's HardState.
func (s *MemoryStore) Load(group GroupID) (election.HardState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[group], nil
}

// LoadAll calls fn with every group's HardState, in group order.
func (s *MemoryStore) LoadAll(fn func(GroupID, election.HardState) error) error {
	s.mu.Lock()
	gs := make([]GroupState, 0, len(s.m))
	for g, hs := range s.m {
		gs = append(gs, GroupState{g, hs})
	}
	s.mu.Unlock()
	sort.Slice(gs, func(i, j int) bool { return gs[i].Group < gs[j].Group })
	for _, x := range gs {
		if err := fn(x.Group, x.State); err != nil {
			return err
		}
	}
	return nil
}

// Persistence. Every group's node is an election.NewDeferredNode whose
// DeferredStorage is a nodeStore: a changed HardState is recorded in the
// group (want, under pmu) and the group joins the dirty list; the node
// holds what it sends meanwhile. The persister takes the whole dirty list
// at once, writes it with one Store.Save (and the Saves of groups with a
// Storage of their own), records the states as durable and tells each
// node (Persisted), which releases its messages. While one write syncs,
// the next list gathers: group commit without a timer. On a real-time
// wheel the persister is a goroutine of the host's; on a virtual one a
// wheel timer (deterministic), a tick after the first change.
//
// Lock order: Host.mu -> election.Node's lock -> pmu -> (a wheel timer's
// lock); wmu is held by the persister alone while it writes, without any
// other lock.

// persistState is a group's persistence, guarded by Host.pmu.
type persistState struct {
	// durable is the group's last durable HardState, which a node of the
	// group starts from (or the bootstrap state, which a crash re-creates).
	durable election.HardState
	// slot is 1 + the index of the group's entry in Host.dirty, 0 if it
	// has none: what waits to be written.
	slot int32
}

// nodeStore is the election.DeferredStorage of one group's node.
type nodeStore struct {
	h *Host
	g *group
	a *awakeState    // the node's
	n *election.Node // set right after the node is made, before it starts
}

// Load returns the group's durable HardState.
func (s *nodeStore) Load() (election.HardState, error) {
	s.h.pmu.Lock()
	defer s.h.pmu.Unlock()
	return s.g.ps.durable, nil
}

// Defer queues hs for the persister. The node's lock is held.
func (s *nodeStore) Defer(hs election.HardState, seq uint64) {
	s.a.nodeTerm.Store(hs.Term)
	s.h.queueState(s.g, hs, seq, s.n)
}

// queueState records hs as g's state to write, for node n (nil: no node
// waits for it), and wakes the persister.
func (h *Host) queueState(g *group, hs election.HardState, seq uint64, n *election.Node) {
	h.pmu.Lock()
	h.queueLocked(pending{g, hs, seq, n})
	h.kickLocked()
	h.pmu.Unlock()
}

// queueLocked puts p in the dirty list, replacing its group's entry if it
// has one. pmu is held.
func (h *Host) queueLocked(p pending) {
	if i := p.g.ps.slot; i != 0 {
		h.dirty[i-1] = p
		return
	}
	h.dirty = append(h.dirty, p)
	p.g.ps.slot = int32(len(h.dirty))
}

// kickLocked wakes the persister. pmu is held.
func (h *Host) kickLocked() {
	if h.kick != nil {
		select {
		case h.kick <- struct{}{}:
		default:
		}
		return
	}
	if !h.persistArmed && !h.halted.Load() {
		h.persistArmed = true
		h.persistT.Reset(h.persistDelay)
	}
}

// maxSpare is the largest batch whose array the persister keeps for the
// next: a burst (a million groups bootstrapped) should not stay allocated.
const maxSpare = 4096

// pending is one state taken for a write.
type pending struct {
	g    *group
	hs   election.HardState
	seq  uint64
	node *election.Node
}

// startPersister starts the persister goroutine (real-time wheels).
func (h *Host) startPersister() {
	h.kick = make(chan struct{}, 1)
	h.quit = make(chan struct{})
	go func() {
		backoff := time.Duration(0)
		for {
			select {
			case <-h.quit:
				return
			case <-h.kick:
			}
			for {
				ok, more := h.persistOnce()
				if ok {
					backoff = 0
				} else {
					backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
					select {
					case <-h.quit:
						return
					case <-time.After(backoff):
					}
				}
				if !more {
					break
				}
			}
		}
	}()
}

// onPersistTimer is the persister on a virtual wheel.
func (h *Host) onPersistTimer() {
	h.pmu.Lock()
	h.persistArmed = false
	h.pmu.Unlock()
	if ok, _ := h.persistOnce(); !ok {
		h.pmu.Lock()
		if !h.halted.Load() {
			h.persistArmed = true
			h.persistT.Reset(max(h.persistDelay, 10*time.Millisecond))
		}
		h.pmu.Unlock()
	}
}

// persistOnce writes the dirty groups' states, then releases what their
// nodes held. It reports whether the write succeeded (or there was none),
// and whether more groups are dirty now.
func (h *Host) persistOnce() (ok, more bool) {
	h.wmu.Lock()
	if h.wstopped {
		h.wmu.Unlock()
		return true, false
	}
	h.pmu.Lock()
	batch := h.dirty
	h.dirty = h.batchSpare[:0]
	h.batchSpare = nil
	for i := range batch {
		batch[i].g.ps.slot = 0
	}
	h.pmu.Unlock()
	if len(batch) == 0 {
		h.wmu.Unlock()
		return true, false
	}
	failed := h.write(batch)
	h.wmu.Unlock()

	h.pmu.Lock()
	for i := range batch {
		p := &batch[i]
		if failed != nil && failed[i] {
			// Written again with the next write, unless a newer state of
			// the group replaced it meanwhile (whose write releases
			// everything the node holds).
			if p.g.ps.slot == 0 {
				h.queueLocked(*p)
			}
			continue
		}
		p.g.ps.durable = p.hs
	}
	more = len(h.dirty) > 0
	h.pmu.Unlock()
	ok = true
	for i := range batch {
		if failed != nil && failed[i] {
			ok = false
		} else if p := &batch[i]; p.node != nil {
			p.node.Persisted(p.seq)
		}
	}
	if cap(batch) <= maxSpare {
		clear(batch)
		h.pmu.Lock()
		h.batchSpare = batch[:0]
		h.pmu.Unlock()
	}
	// The first heartbeats of the leaders just released wait in the
	// outboxes as loose entries: they leave now, not a window later.
	h.flushLoose()
	return ok, more
}

// write writes batch: one Store.Save for the groups without a Storage of
// their own, and one Save each for the others. It returns which entries
// failed, nil if none did. wmu is held.
func (h *Host) write(batch []pending) (failed []bool) {
	states := h.statesSpare[:0]
	for i := range batch {
		if batch[i].g.st == nil {
			states = append(states, GroupState{batch[i].g.id, batch[i].hs})
		}
	}
	fail := func(i int) {
		if failed == nil {
			failed = make([]bool, len(batch))
		}
		failed[i] = true
	}
	var errs []error
	if len(states) > 0 {
		h.syncs.Add(1)
		if err := h.store.Save(states); err != nil {
			errs = append(errs, err)
			for i := range batch {
				if batch[i].g.st == nil {
					fail(i)
				}
			}
		} else {
			h.saves.Add(int64(len(states)))
		}
	}
	clear(states)
	h.statesSpare = states[:0]
	for i := range batch {
		if st := batch[i].g.st; st != nil {
			h.syncs.Add(1)
			if err := st.Save(batch[i].hs); err != nil {
				errs = append(errs, fmt.Errorf("group %d: %w", batch[i].g.id, err))
				fail(i)
			} else {
				h.saves.Add(1)
			}
		}
	}
	if len(errs) > 0 {
		h.saveErrors.Add(int64(len(errs)))
		h.logger.Error("cannot save hard states; retrying (held messages stay held)", "error", errors.Join(errs...))
	}
	return failed
}

// flushLoose sends the outboxes' loose entries (see takeLoose). No lock of
// the host is held.
func (h *Host) flushLoose() {
	if !h.cfg.Coalesce || h.halted.Load() {
		return
	}
	h.outMu.Lock()
	batches := h.takeLoose(nil)
	h.outMu.Unlock()
	h.sendAll(batches)
}

// stopPersister ends the persister: it waits for a write in progress,
// and no write starts after it returns. The states not written are lost,
// as in a crash.
func (h *Host) stopPersister() {
	h.wmu.Lock()
	h.wstopped = true
	h.wmu.Unlock()
	h.pmu.Lock()
	h.persistT.Stop()
	h.persistArmed = false
	h.pmu.Unlock()
	if h.quit != nil {
		close(h.quit)
	}
}
