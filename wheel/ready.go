package wheel

// peek returns the earliest pending deadline if it is <= limit,
// re-bucketing only slots that start at or before limit. Keeping the cursor
// from running ahead of the clock matters: a timer due before the cursor
// lives in the ready heap, where Reset takes the locked path.
func (w *Wheel) peek(limit int64) (entry, bool) {
	for {
		if !w.drainSome() {
			return entry{}, false // the real-time driver yields the lock
		}
		top, haveTop := w.cleanTop()
		lvl, idx, start, ok := w.nextSlot()
		slotStart := never
		if ok {
			slotStart = w.tickStart(start)
		}
		if haveTop && top.key < slotStart {
			return top, top.key <= limit
		}
		if !ok || slotStart > limit {
			return entry{}, false
		}
		w.processSlot(lvl, idx, start)
	}
}

// nextEvent returns when the driver must next look: the earlier of the next
// occupied slot's start and the ready heap's top, without re-bucketing.
// When the driver batches fine-grained slots, a level-0 slot is due at its
// earliest deadline (see slotLook), a heap deadline at once.
func (w *Wheel) nextEvent() int64 {
	if len(w.drains) > 0 {
		return 0 // timers are still being re-bucketed: look again at once
	}
	next := never
	if top, ok := w.cleanTop(); ok {
		next = top.key
	}
	if lvl, _, start, ok := w.nextSlot(); ok {
		if lvl == 0 && w.batchSlots {
			next = min(next, w.slotLook(start))
		} else {
			next = min(next, w.tickStart(start))
		}
	}
	return next
}

// cleanTop drops stale heap entries and returns the valid top, if any.
func (w *Wheel) cleanTop() (entry, bool) {
	for len(w.ready) > 0 {
		e := w.ready[0]
		t := e.t
		if !t.boundTo(w) || t.loc != locReady || t.seq.Load() != e.seq {
			w.ready.pop() // superseded by a later schedule, or rebound
			continue
		}
		due := t.due.Load()
		if due == e.when+1 {
			return e, true
		}
		w.ready.pop()
		t.loc = locNone
		if due > 0 {
			w.place(t) // pushed later by a concurrent Reset
		}
	}
	return entry{}, false
}

// popDue claims the earliest pending timer if its deadline is <= target:
// the virtual wheel's step, in exact (deadline, schedule order) order.
func (w *Wheel) popDue(target int64) (firing, bool) {
	for {
		e, ok := w.peek(target)
		if !ok {
			return firing{}, false
		}
		w.ready.pop()
		t := e.t
		t.loc = locNone
		if !t.due.CompareAndSwap(e.when+1, 0) {
			if t.due.Load() > 0 {
				w.place(t)
			}
			continue
		}
		w.addPending(-1)
		w.fired.Add(1)
		return firing{t: t, f: t.f, when: e.when}, true
	}
}

// entry is a ready-heap element: a timer due before the cursor tick, with
// the deadline and sequence it had when pushed. An entry is stale (skipped)
// when the timer has moved since.
type entry struct {
	t    *Timer
	when int64 // the timer's deadline when pushed
	key  int64 // when it may fire: when, plus its epoch's slack on real time
	seq  uint64
}

func (a entry) less(b entry) bool {
	return a.key < b.key || (a.key == b.key && a.seq < b.seq)
}

// readyHeap is a binary min-heap of entries ordered by (when, seq).
type readyHeap []entry

func (h *readyHeap) push(e entry) {
	s := append(*h, e)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *readyHeap) pop() entry {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = entry{}
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
