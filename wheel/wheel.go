package wheel

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/raftick/raftick/internal/invariants"
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

	// mu guards the fields from cur to slotNext (closed is an atomic copy
	// of stopped, for the lock-free paths), and the placement of every
	// Timer bound to the wheel: its ch, slot, pos and loc fields (see
	// Timer). Lock order: a repeated.Timer's lock, then mu, then napMu;
	// Init takes the lock of the wheel it rebinds from. Callbacks run
	// without mu; the driver releases it around every batch of them.
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

	// Counters, atomic, written by any goroutine: those that Reset and
	// Stop write (and pending, which only a wheel with MaxPending counts),
	// then, on cache lines of their own, those the driver writes as it
	// fires, so that a fire and a Reset on another core do not pass a
	// line back and forth.
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
	precise    []*Timer    // SetPrecise's timers; under mu
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
	if invariants.Enabled {
		w.checkLocked()
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

// --- the data structure; all below with mu held ---

// schedule is the locked path of Timer.TryReset.
func (w *Wheel) schedule(t *Timer, when int64) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if invariants.Enabled {
		defer w.checkLocked()
	}
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

// Stopped reports whether Stop was called on w. Scheduling on a stopped
// wheel fails with ErrStopped, so code that creates long-lived timers (such
// as repeated.New) checks it to fail at construction rather than later.
// The Shared wheel is never stopped.
func (w *Wheel) Stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}
