package raftmix

import "sync"

// schedFlags say why a group is queued on a raftScheduler.
type schedFlags uint8

const (
	// schedQueued: the group is in the queue or being processed. A group
	// is in the queue at most once, so the queue never holds more entries
	// than there are groups.
	schedQueued  schedFlags = 1 << iota
	schedReady              // handle its Ready
	schedRequest            // step the messages in its inbox
	schedTick               // tick it, schedState.ticks times
)

// schedState is what a group is queued for. ticks > 0 iff
// flags&schedTick != 0.
type schedState struct {
	flags schedFlags
	ticks uint8
}

// enqueueChunk is how many groups enqueueN queues under one hold of the
// lock, so that workers are not kept waiting behind a long batch.
const enqueueChunk = 128

// raftScheduler is a worker pool in the manner of CockroachDB's raft
// scheduler (pkg/kv/kvserver/scheduler.go): a group is enqueued with
// flags (ready, request, tick) that accumulate while it waits; a worker
// pops it, clears its flags but leaves it marked queued, processes what
// the flags asked for outside the lock, and then either forgets it or, if
// it was enqueued again meanwhile, puts it back at the end of the queue.
// So a group is processed by one worker at a time (its processing is
// serialized, and needs no lock of its own), any number of groups are
// processed in parallel, and the queue is FIFO. Ticks are counted, up to
// maxTicks; a tick beyond that is dropped (counted in dropped), so that a
// scheduler that falls behind does not owe its groups a burst of ticks.
//
// Unlike CockroachDB's, its groups are dense indices [0, n), so their
// state is a slice and the queue a ring of n entries, and it has one
// shard (CockroachDB shards only beyond 16 workers).
type raftScheduler struct {
	workers  int
	maxTicks uint8
	process  func(w int, g int32, st schedState) // called by worker w, outside the lock, without schedQueued

	mu      sync.Mutex
	cond    sync.Cond // signalled when the queue gains a group or stopped is set
	queue   []int32   // a ring: n entries from head
	head, n int
	state   []schedState
	stopped bool
	dropped int64 // ticks dropped beyond maxTicks
	wg      sync.WaitGroup
}

// newRaftScheduler returns a scheduler of groups [0, groups) whose workers
// (not started) call process.
func newRaftScheduler(groups, workers, maxTicks int, process func(w int, g int32, st schedState)) *raftScheduler {
	s := &raftScheduler{
		workers:  workers,
		maxTicks: uint8(min(maxTicks, 255)),
		process:  process,
		queue:    make([]int32, groups),
		state:    make([]schedState, groups),
	}
	s.cond.L = &s.mu
	return s
}

// start starts the workers.
func (s *raftScheduler) start() {
	s.wg.Add(s.workers)
	for w := range s.workers {
		go s.work(w)
	}
}

// stop stops the workers, leaving what is queued, and waits for them to
// return.
func (s *raftScheduler) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cond.Broadcast()
	s.wg.Wait()
}

func (s *raftScheduler) work(w int) {
	defer s.wg.Done()
	s.mu.Lock()
	for {
		for s.n == 0 && !s.stopped {
			s.cond.Wait()
		}
		if s.stopped {
			s.mu.Unlock()
			return
		}
		g := s.queue[s.head]
		s.head, s.n = (s.head+1)%len(s.queue), s.n-1
		st := s.state[g]
		st.flags &^= schedQueued
		s.state[g] = schedState{flags: schedQueued}
		s.mu.Unlock()

		s.process(w, g, st)

		s.mu.Lock()
		if s.state[g].flags == schedQueued {
			s.state[g].flags = 0
		} else {
			// Enqueued while it was processed: the enqueuer did not push
			// it (it was marked queued) and signalled no one; this worker
			// goes on without sleeping, so no signal is owed either.
			s.push(g)
		}
	}
}

// push appends g to the queue; the lock is held.
func (s *raftScheduler) push(g int32) {
	if s.n == len(s.queue) {
		panic("raftmix: raftScheduler: queue full: a group was queued twice")
	}
	s.queue[(s.head+s.n)%len(s.queue)] = g
	s.n++
}

// enqueueLocked adds flags to g's state (and a tick if they include
// schedTick) and queues g unless it is queued already; it reports whether
// it queued g. The lock is held.
func (s *raftScheduler) enqueueLocked(add schedFlags, g int32) bool {
	st := &s.state[g]
	if add&schedTick != 0 {
		if st.ticks < s.maxTicks {
			st.ticks++
		} else {
			s.dropped++
		}
	} else if st.flags&add == add {
		return false
	}
	st.flags |= add
	if st.flags&schedQueued != 0 {
		return false
	}
	st.flags |= schedQueued
	s.push(g)
	return true
}

// enqueueN enqueues every group of gs with flags add, enqueueChunk at a
// time, and wakes as many workers as it queued groups.
func (s *raftScheduler) enqueueN(add schedFlags, gs []int32) {
	for len(gs) > 0 {
		chunk := gs[:min(len(gs), enqueueChunk)]
		gs = gs[len(chunk):]
		queued := 0
		s.mu.Lock()
		for _, g := range chunk {
			if s.enqueueLocked(add, g) {
				queued++
			}
		}
		s.mu.Unlock()
		s.signal(queued)
	}
}

// signal wakes up to n sleeping workers.
func (s *raftScheduler) signal(n int) {
	if n >= s.workers {
		s.cond.Broadcast()
		return
	}
	for range n {
		s.cond.Signal()
	}
}

// droppedTicks returns the ticks dropped so far.
func (s *raftScheduler) droppedTicks() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}
