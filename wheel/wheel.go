package wheel

import (
	"cmp"
	"math"
	"math/bits"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

const (
	// Level 0 has 1<<level0Bits slots of one tick (1.024s at the default
	// 1ms tick), so that Raft's timeouts (75ms to a few hundred ms) are
	// placed at their exact tick at once and touched again only when their
	// slot comes due, not re-bucketed from a coarser level first. Each
	// level above has 1<<slotBits slots.
	level0Bits = 10
	slotBits   = 6
	slotMask   = 1<<slotBits - 1
	// alignLead is how many ticks ahead a real-time timer must be for
	// place to put it in an earlier level-0 slot than its deadline's, and
	// alignLeadTime that lead as a time: a wheel with a tick coarser than
	// alignLeadTime/alignLead takes the lead in time (see Wheel.alignLead),
	// so that a Raft election timer (150ms and more) is far enough ahead
	// whatever the tick.
	alignLead     = 128
	alignLeadTime = 128 * time.Millisecond
	// maxBatchTick is the coarsest tick at which the real-time driver takes
	// a level-0 slot whole once it is due (see Wheel.batchSlots): a timer
	// then fires up to a tick late, which for a coarser tick is more than
	// its users expect; their timers due within the current tick go
	// through the ready heap instead, each at its deadline.
	maxBatchTick = 10 * time.Millisecond
	// minResetMargin is how many ticks short of a SetMinReset promise
	// place keeps a timer: the cursor may trail the clock by a tick, and a
	// Reset's deadline from the coarse clock be early by an epoch.
	minResetMargin = 3

	// maxWhen is the latest representable deadline; Timer.due stores
	// deadline+1, so one value is kept free.
	maxWhen = math.MaxInt64 - 1
	never   = int64(math.MaxInt64)

	// dueFiring is Timer.due while the real-time driver runs the timer's
	// callback: idle, but handed back to the driver by a lock-free Reset.
	dueFiring = int64(math.MinInt64)
)

// level is one ring of the hierarchy: slots (1024 at level 0, 64 above),
// each a bucket of timers (see bucket.go), and a bitmap of the non-empty
// slots.
type level struct {
	shift    uint // ticks are shifted right by this to index the level
	bits     uint // log2 of the number of slots
	occupied []uint64
	buckets  []bucket
}

func (lv *level) mark(idx int)       { lv.occupied[idx>>6] |= 1 << uint(idx&63) }
func (lv *level) unmark(idx int)     { lv.occupied[idx>>6] &^= 1 << uint(idx&63) }
func (lv *level) isSet(idx int) bool { return lv.occupied[idx>>6]&(1<<uint(idx&63)) != 0 }

// index returns tick tk's slot on this level.
func (lv *level) index(tk int64) int { return int((tk >> lv.shift) & (1<<lv.bits - 1)) }

// firstFrom returns the first occupied slot at or after idx, if any.
func (lv *level) firstFrom(idx int) (int, bool) {
	for k := idx >> 6; k < len(lv.occupied); k++ {
		b := lv.occupied[k]
		if k == idx>>6 {
			b &= ^uint64(0) << uint(idx&63)
		}
		if b != 0 {
			return k<<6 | bits.TrailingZeros64(b), true
		}
	}
	return 0, false
}

// newLevels returns enough levels to index any tick up to maxTick.
func newLevels(maxTick int64) []level {
	need := uint(bits.Len64(uint64(maxTick) + 1))
	var levels []level
	for shift := uint(0); shift < need || len(levels) == 0; {
		b := uint(slotBits)
		if len(levels) == 0 {
			b = level0Bits
		}
		n := 1 << b
		levels = append(levels, level{shift: shift, bits: b,
			occupied: make([]uint64, (n+63)/64), buckets: make([]bucket, n)})
		shift += b
	}
	return levels
}

// A Wheel is a hierarchical timing wheel. Create one with New (real time),
// NewVirtual (virtual time) or use Shared. All methods are safe for concurrent
// use.
//
// Internally time is counted in nanoseconds since the wheel's epoch and in
// ticks of Config.Tick. Level l holds timers whose deadline tick first
// differs from the cursor in bit group l (10 bits at level 0, 6 bits a
// level above), so the next occupied slot is found with a few bit scans per
// level and a timer is re-bucketed at most once per level. Timers due within the cursor's tick
// wait in a small min-heap ordered by (exact deadline, schedule sequence).
type Wheel struct {
	// Immutable after construction.
	tick        int64 // ns
	drainBudget int   // timers re-bucketed per lock hold by the driver; 0: all
	maxTick     int64
	virtual     bool
	batchSlots  bool  // real time, tick <= maxBatchTick: fire a level-0 slot whole once due
	alignLead   int32 // alignLead, or for a coarse tick alignLeadTime in ticks (batchSlots only)
	napMin      int   // batch size from which the driver sleeps on a timerfd (napMinBatch; tests: 0 always, -1 never)
	shared      bool
	maxPending  int64
	exec        Executor
	log         hclog.Logger
	epoch       time.Time

	vnow atomic.Int64 // virtual clock, ns

	// mu guards everything below it up to the counters, and every Timer's
	// next, prev, loc, lvl and idx fields.
	mu      sync.Mutex
	cur     int64 // cursor tick: timers due before it are in ready
	levels  []level
	ready   readyHeap
	drains  []int // slots being re-bucketed, lvl<<16|idx, in order
	stopped bool
	started bool // real-time driver running
	running bool // the driver is running a batch of callbacks (set and cleared under mu)
	// batch holds the timers the driver collected under mu and runs
	// without it; written by the driver under mu, read-only while running
	// (Stop claims what has not started).
	batch []firing
	// tr is the level-0 slot the driver took and runs without the lock
	// (see batchSlot, runTransit), trStart its tick; tr.head is nil when there is
	// none. Set and cleared by the driver under mu; its chunks, and no
	// other, have its gen meanwhile (see inTransit). gens counts the
	// generations given to buckets (see bucket.gen).
	tr      bucket
	gens    uint64
	trStart int64
	trWait  int64 // the tick of the slot where a timer not yet fireable waits
	trMax   int64 // the slot's slotMax when it was taken
	// freeChunks lists the chunks buckets may reuse (see bucket.go);
	// chunks counts the chunks the wheel holds, nfree those free.
	freeChunks    *chunk
	chunks, nfree int

	seq    uint64      // schedule sequence, guarded by mu
	closed atomic.Bool // stopped is set (for the lock-free paths)

	// slotMax is, per level-0 slot, the latest deadline placed in it since
	// it was last empty (see slotDue).
	slotMax []int64
	// slotNext is, per level-0 slot, the earliest time a timer in it may
	// be due: the earliest deadline placed in it since the driver last
	// looked, or when the driver last found the rest not due (batchSlot).
	slotNext []int64

	// Counters: those that Reset and Stop write (and pending, which only
	// a wheel with MaxPending counts), then, on cache lines of their own,
	// those the driver writes as it fires, so that a fire and a Reset on
	// another core do not pass a line back and forth (FireThroughput:
	// 2-4 % more fires a second).
	pending, scheduled, cancelled, rejected    atomic.Int64
	_                                          [64]byte
	fired, dropped, panics, lateFires, wakeups atomic.Int64
	maxLate                                    atomic.Int64
	_                                          [64]byte

	// Real-time driver.
	//
	// The coarse clock (see coarse.go): published by the driver, read by
	// Reset instead of the real clock. The epoch bookkeeping (slack,
	// epochSeq, openTag, openBase) belongs to the driver goroutine.
	coarse     atomic.Int64 // (epoch start &^ tagMask) | tag, or -1
	demand     atomic.Bool  // a timer was scheduled since the last epoch began
	slack      []slackEntry // per tag: longest recent epoch; nil on virtual wheels
	epochSeq   int64        // epochs published
	openTag    int64        // tag of the published epoch, 0 if none
	openBase   int64        // its start
	clockReads atomic.Int64 // Resets that read the clock since the driver last looked
	rateSince  int64        // when the driver last looked at clockReads
	tickUntil  int64        // keep the clock published until then (see planSleep)
	sleepUntil atomic.Int64 // ns; the driver's next planned wake-up
	wakeCh     chan struct{}
	napping    atomic.Bool // the driver waits, or is about to, on its timerfd (see kick)
	napMu      sync.Mutex  // guards napper, for kick
	napper     *napper     // the driver's timerfd while it runs (nap_linux.go)
	stopCh     chan struct{}
	doneCh     chan struct{}

	// lanes are the real-time wheel's lanes (see lane.go), created by the
	// driver under mu; their queues are the driver's (see lane). Last, so
	// as not to move the fields above across cache lines (the coarse
	// clock's line is read by every Reset).
	lanes []*lane
	// laneBase is the sentinel of the wheel's lane 0 (see laneSentinel).
	laneBase int64
	// epochSpan is the longest sleep the driver lets a published epoch
	// span but for a nap (see epochLimit), and how often it wakes to keep
	// the clock published for a stream of Resets (planSleep): maxEpoch,
	// or on a wheel that takes its level-0 slots whole (batchSlots) a
	// tick if that is longer. A Reset during such a sleep computes its
	// deadline from the planned wake-up (see sleepEpoch), so its timer
	// may fire up to the sleep later than asked; on such a wheel it may
	// fire a tick late anyway, and waking every millisecond at a 10ms
	// tick made five times the wake-ups the slots need. Immutable.
	epochSpan int64

	// reporter reports the wheel's metrics (metrics.go); nil if it does
	// not. Set by the constructor; Stop stops it.
	reporter *reporter
}

// firing is one due timer: on a virtual wheel claimed and about to run, in
// the real-time driver's batch collected and claimed just before it runs.
type firing struct {
	t    *Timer
	f    func()
	when int64
}

func newWheel(cfg Config, virtual bool) (*Wheel, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = DefaultLogger()
	}
	tick := int64(cfg.Tick)
	maxTick := maxWhen / tick
	w := &Wheel{
		tick:       tick,
		maxTick:    maxTick,
		virtual:    virtual,
		maxPending: int64(cfg.MaxPending),
		exec:       cfg.Executor,
		log:        log,
		epoch:      time.Now(),
		levels:     newLevels(maxTick),
		slotMax:    make([]int64, 1<<level0Bits),
		slotNext:   make([]int64, 1<<level0Bits),
		wakeCh:     make(chan struct{}, 1),
		stopCh:     make(chan struct{}),
		doneCh:     make(chan struct{}),
	}
	w.laneBase = laneMember - wheelSeq.Add(1)*maxLanes
	w.sleepUntil.Store(never)
	w.coarse.Store(-1)
	if !virtual {
		w.slack = make([]slackEntry, tagMask+1)
		w.drainBudget = 4096
		w.batchSlots = tick <= int64(maxBatchTick)
		w.alignLead = int32(min(alignLead, (int64(alignLeadTime)+tick-1)/tick))
		w.epochSpan = maxEpoch
		if w.batchSlots {
			w.epochSpan = max(maxEpoch, tick)
		}
		w.napMin = napMinBatch
	}
	w.startMetrics(cfg) // metrics.go
	return w, nil
}

// New returns a real-time wheel. Its driver goroutine starts with the first
// scheduled timer, sleeps until the next occupied deadline (never once per
// tick when nothing is due) and is woken early when a nearer timer arrives.
// Stop the wheel to end the goroutine.
func New(cfg Config) (*Wheel, error) { return newWheel(cfg, false) }

var (
	sharedOnce  sync.Once
	sharedWheel *Wheel
)

// Shared returns the process-wide real-time wheel with DefaultConfig, created
// on first use; its driver goroutine starts with the first timer. Thousands
// of Raft groups can share it. Stop on the shared wheel is refused (it
// returns nil and logs a warning) so that one user cannot break the others.
func Shared() *Wheel {
	sharedOnce.Do(func() {
		w, err := newWheel(DefaultConfig(), false)
		if err != nil {
			panic("wheel: DefaultConfig is invalid: " + err.Error()) // unreachable
		}
		w.shared = true
		sharedWheel = w
	})
	return sharedWheel
}

// IsVirtual reports whether w runs on virtual time.
func (w *Wheel) IsVirtual() bool { return w.virtual }

// Tick returns the wheel's tick (Config.Tick).
func (w *Wheel) Tick() time.Duration { return time.Duration(w.tick) }

// Now returns the wheel's current time: the time since the wheel was created
// for a real-time wheel, the virtual clock for a virtual one. While a virtual
// wheel runs a callback, Now is that timer's exact deadline.
func (w *Wheel) Now() time.Duration { return time.Duration(w.nowNanos()) }

func (w *Wheel) nowNanos() int64 {
	if w.virtual {
		return w.vnow.Load()
	}
	return int64(time.Since(w.epoch))
}

// deadline returns Now()+d, with d <= 0 meaning now, saturating at maxWhen.
func (w *Wheel) deadline(d time.Duration) int64 {
	return addDeadline(w.nowNanos(), d)
}

func addDeadline(now int64, d time.Duration) int64 {
	if d <= 0 {
		return now
	}
	if int64(d) > maxWhen-now {
		return maxWhen
	}
	return now + int64(d)
}

// AfterFunc schedules f to run once, d from now, and returns its Timer. It
// allocates the Timer; embed a Timer and use Init and Reset to avoid that.
// A d <= 0 makes the timer due at once.
func (w *Wheel) AfterFunc(d time.Duration, f func()) (*Timer, error) {
	if f == nil {
		return nil, ErrNilCallback
	}
	t := &Timer{w: w, f: f}
	t.slotStart.Store(-1)
	if _, err := t.TryReset(d); err != nil {
		return nil, err
	}
	return t, nil
}

// Stop stops the wheel and returns the timers that were pending, which will
// never fire, ordered by deadline. Later scheduling fails with ErrStopped.
// Stop is idempotent: later calls return nil. On a real-time wheel it waits
// for the driver goroutine to exit, unless the driver is running callbacks
// at that moment (for example, Stop called from a callback), in which case
// the driver exits as soon as the running callback returns and starts no
// other; Done reports the exit. Stop never waits for a callback that
// started after it. Stop on the Shared wheel is refused: it returns nil and
// logs a warning.
func (w *Wheel) Stop() []*Timer {
	if w.shared {
		w.log.Warn("Stop called on the shared wheel; ignored")
		return nil
	}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return nil
	}
	w.stopped = true
	w.closed.Store(true)
	type left struct {
		t        *Timer
		when     int64
		position uint64
	}
	var out []left
	claim := func(t *Timer) {
		if when, ok := t.claim(); ok {
			out = append(out, left{t, when, t.seq.Load()})
		}
	}
	for l := range w.levels {
		lv := &w.levels[l]
		for i := range lv.buckets {
			b := &lv.buckets[i]
			b.each(func(t *Timer) {
				t.ch, t.loc = nil, locNone
				t.slotStart.Store(-1)
				claim(t)
			})
			w.freeBucket(b)
		}
		clear(lv.occupied)
	}
	w.stopLanes(claim)
	// The slot the driver is running without the lock: claiming its
	// pending timers makes the driver skip them; the driver unlinks them
	// (and frees the chunks) when it next takes the lock.
	w.tr.each(claim)
	for _, e := range w.ready {
		if e.t.boundTo(w) && e.t.loc == locReady {
			e.t.loc = locNone
			claim(e.t)
		}
	}
	// Timers the driver collected but has not started, and fired ones
	// re-armed from their callbacks but not yet placed: claiming them here
	// makes the driver skip them. (A timer rebound to another wheel since
	// is that wheel's.)
	for _, f := range w.batch {
		if f.t.boundTo(w) && f.t.loc == locNone {
			claim(f.t)
		}
	}
	w.ready = nil
	w.drains = nil
	started := w.started
	// Read under mu, where the driver sets and clears it: if the driver is
	// not running callbacks now, it sees stopped before it starts another.
	waitDriver := started && !w.running
	w.mu.Unlock()

	w.dropped.Add(int64(len(out)))
	w.stopMetrics()
	if started {
		close(w.stopCh)
		w.kick()
		if waitDriver {
			<-w.doneCh
		}
	} else {
		close(w.doneCh)
	}
	slices.SortFunc(out, func(a, b left) int {
		if c := cmp.Compare(a.when, b.when); c != 0 {
			return c
		}
		return cmp.Compare(a.position, b.position)
	})
	timers := make([]*Timer, len(out))
	for i, o := range out {
		timers[i] = o.t
	}
	return timers
}

// Done returns a channel closed when the wheel is stopped and its driver
// goroutine (if any) has exited.
func (w *Wheel) Done() <-chan struct{} { return w.doneCh }

// run calls f, recovering and counting a panic.
func (w *Wheel) run(f func()) {
	defer func() {
		if r := recover(); r != nil {
			w.notePanic(r)
		}
	}()
	f()
}

// notePanic counts and logs a callback's panic, recovered as r.
func (w *Wheel) notePanic(r any) {
	w.panics.Add(1)
	w.log.Error("timer callback panicked", "panic", r, "stack", string(debug.Stack()))
}

// invoke runs the callback f of t, claimed and not pending, on the
// executor if any, else here (virtual wheel).
func (w *Wheel) invoke(t *Timer, f func()) {
	next := t.next()
	switch {
	case w.exec != nil:
		task := Task{w: w, f: f}
		if next != nil {
			task.t = t
		}
		w.exec(task)
	case next != nil:
		w.callNext(next, t)
	default:
		w.run(f)
	}
}

// --- the data structure; all below with mu held ---

// tickEnd returns the first nanosecond of tick tk, saturating.
func (w *Wheel) tickStart(tk int64) int64 {
	if tk > w.maxTick {
		return never
	}
	return tk * w.tick
}

// place links a pending timer where its current deadline belongs, or drops
// it if it is no longer pending (see aim). mu held.
func (w *Wheel) place(t *Timer) {
	lvl, tk, when, key := w.aim(t)
	w.put(t, lvl, tk, when, key)
}

// put puts t, not in a slot, where aim found it belongs. mu held.
func (w *Wheel) put(t *Timer, lvl int, tk, when, key int64) {
	switch {
	case lvl == aimIdle:
		t.loc = locNone
	case lvl < 0:
		t.loc = locReady
		w.ready.push(entry{t: t, when: when, key: when, seq: t.seq.Load()})
	default:
		w.link(t, lvl, tk, key)
	}
}

// aimIdle is aim's level for a timer that is no longer pending.
const aimIdle = -2

// aim finds where t's current deadline when belongs, publishes it in
// t.slotStart, and returns it: level aimIdle if t is no longer pending,
// -1 for the ready heap (key is then when), else the level and tick of
// its slot and the key link takes. The deadline is re-read after
// publishing the slot's start, so that a concurrent lock-free Reset either
// sees the new start or is seen here (see Timer.TryReset). mu held.
func (w *Wheel) aim(t *Timer) (lvl int, tk, when, key int64) {
	for {
		due := t.due.Load()
		if due <= 0 {
			t.slotStart.Store(-1)
			return aimIdle, 0, 0, 0
		}
		when = due - 1
		lvl, tk = w.target(t, when)
		if lvl < 0 {
			t.slotStart.Store(-1)
			if t.due.Load() != due {
				continue
			}
			return lvl, tk, when, when
		}
		lv := &w.levels[lvl]
		key = w.tickStart((tk >> lv.shift) << lv.shift)
		t.slotStart.Store(key)
		if t.due.Load() != due {
			continue
		}
		if when < w.tickStart(tk+1) { // the deadline's tick is tk (tk is never after it)
			key = when
		}
		return lvl, tk, when, key
	}
}

// target returns where place puts a timer with deadline when: the level
// and the tick whose slot it goes to, or level -1 for the ready heap (due
// before the cursor). mu held.
func (w *Wheel) target(t *Timer, when int64) (lvl int, tk int64) {
	tk = when / w.tick
	if tk < w.cur {
		return -1, tk
	}
	// Level 0 takes every deadline less than its size ahead of the
	// cursor, also past the end of the cursor's window (its slots before
	// the cursor's hold the next window, see nextSlot): timers a step-down
	// period ahead must not pile up in a higher level at the end of every
	// window, to be re-bucketed all at once when the cursor crosses into
	// the next.
	if d := tk - w.cur; d >= 1<<level0Bits {
		return 1 + (bits.Len64(uint64(tk^w.cur))-1-level0Bits)/slotBits, tk
	} else if w.batchSlots && d >= int64(w.alignLead) {
		// A real-time timer far ahead sits in the slot halfway to its
		// deadline, so that Resets moving it earlier but not before that
		// (a heartbeat drawing a shorter timeout) stay lock-free; the
		// driver re-places it when that slot comes. With a SetMinReset
		// promise of m, it can sit as far as m ahead (less a margin for
		// the coarse clock and the cursor, which may trail real time):
		// every later Reset lands after that.
		ahead := d / 2
		if m := int64(t.minReset.Load()&minResetMax) - minResetMargin; m > ahead {
			ahead = min(m, d)
		}
		tk = w.cur + ahead
	}
	return 0, tk
}

// prefetchPlace hints the cache line that placing t will write besides
// t's own: the entry of the bucket it will be appended to, which is
// usually cold when the driver re-places timers into many slots. mu held.
func (w *Wheel) prefetchPlace(t *Timer) {
	due := t.due.Load()
	if due <= 0 {
		return
	}
	lvl, tk := w.target(t, due-1)
	if lvl < 0 {
		return
	}
	lv := &w.levels[lvl]
	lv.buckets[lv.index(tk)].prefetchTail()
}

// link appends t to the bucket of the slot of tick tk on level lvl, whose
// start (or, for a timer spliceChunk moves ahead of its own slot, a later
// time) the caller has published in t.slotStart. On level 0, key is when
// the driver needs to look at t: its deadline if due in this slot, the
// slot's start if t sits ahead of its deadline (see place).
func (w *Wheel) link(t *Timer, lvl int, tk, key int64) {
	lv := &w.levels[lvl]
	idx := lv.index(tk)
	w.noteSlot(lvl, idx, key, key)
	w.push(&lv.buckets[idx], t)
	t.loc, t.slot = locSlot, uint16(lvl<<slotLevelShift|idx)
}

// noteSlot marks slot idx of level lvl occupied by timers with keys from
// lo to hi (see link). mu held.
func (w *Wheel) noteSlot(lvl, idx int, lo, hi int64) {
	lv := &w.levels[lvl]
	if lvl == 0 {
		// The slot is due once its latest key has passed (slotDue).
		if !lv.isSet(idx) {
			w.slotMax[idx], w.slotNext[idx] = hi, lo
		} else {
			w.slotMax[idx] = max(w.slotMax[idx], hi)
			w.slotNext[idx] = min(w.slotNext[idx], lo)
		}
	}
	lv.mark(idx)
}

// unlink removes t from its slot, if it is in one, and detaches it from
// any heap entry.
func (w *Wheel) unlink(t *Timer) {
	switch t.loc {
	case locSlot:
		lvl, idx := t.where()
		lv := &w.levels[lvl]
		if w.remove(&lv.buckets[idx], t) {
			lv.unmark(idx)
		}
	case locReady:
		// The heap entry is left behind and recognized as stale.
	case locLane:
		// So is the lane entry: the timer's slotStart is no longer the
		// lane's sentinel (see walkLane).
	}
	t.loc = locNone
	t.slotStart.Store(-1)
}

// nextSlot finds the earliest occupied slot at or after the cursor.
// On levels above 0 the cursor's own slot has been drained (see
// moveCursor), so the search starts after it. Level 0 is a ring: a slot
// before the cursor's holds timers of the next 1<<level0Bits-tick window
// (see place), which come after every higher-level slot starting at that
// window's start or earlier (those are drained into level 0 first).
func (w *Wheel) nextSlot() (lvl, idx int, start int64, ok bool) {
	lv0 := &w.levels[0]
	pos := lv0.index(w.cur)
	base := w.cur >> level0Bits << level0Bits
	if i, found := lv0.firstFrom(pos); found {
		return 0, i, base | int64(i), true
	}
	for l := 1; l < len(w.levels); l++ {
		lv := &w.levels[l]
		p := lv.index(w.cur) + 1
		if p == 1<<lv.bits {
			continue
		}
		if i, found := lv.firstFrom(p); found {
			up := lv.shift + lv.bits
			lvl, idx, start, ok = l, i, (w.cur>>up)<<up|int64(i)<<lv.shift, true
			break
		}
	}
	if i, found := lv0.firstFrom(0); found && i < pos {
		if s := base + 1<<level0Bits | int64(i); !ok || s < start {
			return 0, i, s, true
		}
	}
	return lvl, idx, start, ok
}

// processSlot moves the cursor to a slot's start and re-buckets its timers:
// one level down, or into the ready heap when due within the cursor's tick.
func (w *Wheel) processSlot(lvl, idx int, start int64) {
	if lvl == 0 {
		lv := &w.levels[0]
		b := lv.buckets[idx]
		lv.buckets[idx] = bucket{}
		lv.unmark(idx)
		w.moveCursor(start + 1)
		w.replace(&b, nil)
		return
	}
	w.moveCursor(start) // queues this slot for draining
}

// replace re-places the timers of bucket b, up to *budget of them (nil:
// all), and reports whether b is empty then (and freed). Their slot starts stay
// published until place publishes the new ones: the old slot still starts
// no later than the new one, so a concurrent lock-free Reset stays correct
// (place re-reads the deadline after publishing).
func (w *Wheel) replace(b *bucket, budget *int) bool {
	for t := w.front(b); t != nil; t = w.front(b) {
		if budget != nil {
			if *budget <= 0 {
				return false
			}
			*budget--
		}
		b.prefetchAhead(placeAhead)
		b.consume(t)
		t.loc = locNone
		w.place(t)
	}
	w.freeBucket(b)
	return true
}

// moveCursor moves the cursor forward to tick c. Every slot starting before
// c must already be processed. Slots of higher levels that start exactly at
// c are queued for draining (see drainSome).
func (w *Wheel) moveCursor(c int64) {
	if c <= w.cur {
		return
	}
	w.cur = c
	for l := len(w.levels) - 1; l >= 1; l-- {
		lv := &w.levels[l]
		if idx := lv.index(c); lv.isSet(idx) {
			w.drains = append(w.drains, l<<16|idx)
		}
	}
}

// drainSome re-buckets the timers of the slots queued by moveCursor, at most
// drainBudget of them (0: all), and reports whether the queue is empty. A
// higher-level slot can hold hundreds of thousands of timers; the real-time
// driver drains it in chunks and releases the lock in between, so that
// locked Resets are not held up for milliseconds. While a slot drains it
// stays linked: the cursor sits at its start, so neither the slot search
// (strictly after the cursor on levels above 0) nor a new placement (which
// needs a later slot on that level) can reach it, and Reset, Stop and
// unlink work on its timers as usual.
func (w *Wheel) drainSome() bool {
	var budget *int
	if w.drainBudget > 0 {
		n := w.drainBudget
		budget = &n
	}
	for len(w.drains) > 0 {
		d := w.drains[0]
		lv := &w.levels[d>>16]
		idx := d & 0xffff
		if !w.replace(&lv.buckets[idx], budget) {
			return false
		}
		lv.unmark(idx)
		copy(w.drains, w.drains[1:])
		w.drains = w.drains[:len(w.drains)-1]
	}
	return true
}

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

// schedule is the locked path of Timer.TryReset.
func (w *Wheel) schedule(t *Timer, when int64) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		w.rejected.Add(1)
		return false, ErrStopped
	}
	w.seq++
	seq := w.seq
	for {
		old := t.due.Load()
		if old > 0 {
			if s := t.slotStart.Load(); extendOK(s, when, old) {
				// Later than the slot's start (or in a lane, than the
				// deadline): stay, to be re-bucketed when it comes due.
				t.seq.Store(seq)
				if t.due.CompareAndSwap(old, when+1) {
					return true, nil
				}
				continue
			}
			w.unlink(t)
			t.seq.Store(seq)
			if !t.due.CompareAndSwap(old, when+1) {
				continue
			}
			w.place(t)
			w.wake(when)
			return true, nil
		}
		if w.maxPending > 0 && w.pending.Load() >= w.maxPending {
			w.rejected.Add(1)
			return false, ErrTooManyPending
		}
		w.unlink(t)
		t.seq.Store(seq)
		if !t.due.CompareAndSwap(old, when+1) { // old is 0 or dueFiring
			continue
		}
		w.addPending(1)
		w.scheduled.Add(1)
		w.place(t)
		if !w.virtual && !w.started {
			w.started = true
			go w.drive()
		}
		w.wake(when)
		return false, nil
	}
}

// fixup re-places a timer whose lock-free Reset raced with re-bucketing.
func (w *Wheel) fixup(t *Timer) {
	w.mu.Lock()
	if t.due.Load() > 0 && !w.stopped {
		w.unlink(t)
		w.place(t)
		if due := t.due.Load(); due > 0 {
			w.wake(due - 1)
		}
	}
	w.mu.Unlock()
}

// unschedule takes back a schedule that a lock-free Reset handed to the
// driver as the wheel was being stopped: unless Stop has claimed it (and
// returned it as pending), the Reset fails with ErrStopped.
func (w *Wheel) unschedule(t *Timer, when int64) (bool, error) {
	if t.due.CompareAndSwap(when+1, 0) {
		w.addPending(-1)
		w.scheduled.Add(-1)
		w.rejected.Add(1)
		return false, ErrStopped
	}
	return false, nil
}

// wake wakes the real-time driver if a timer due at when needs it before
// its planned wake-up.
func (w *Wheel) wake(when int64) {
	if w.virtual {
		return
	}
	if when >= w.sleepUntil.Load() {
		return
	}
	w.sleepUntil.Store(when)
	w.kick()
}

// kick wakes the driver: out of a nap, or out of its sleep on wakeCh (a
// token there makes its next sleep return at once).
func (w *Wheel) kick() {
	if w.napping.CompareAndSwap(true, false) {
		w.napMu.Lock()
		if w.napper != nil {
			w.napper.arm(0)
		}
		w.napMu.Unlock()
		return
	}
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}
