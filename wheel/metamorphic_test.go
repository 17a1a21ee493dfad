package wheel

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
)

// The metamorphic test runs one seeded trace of operations on a virtual
// wheel and on real-time wheels (in synctest bubbles, where the real-time
// driver's clock is exact) of several configurations, and checks that they
// agree: the same number of fires per timer, the same results of every operation, the
// same timers returned by the wheel's Stop, no fire before its deadline and
// none later than the real-time lateness bound, and the Stats identities.
//
// Operations happen on a grid of steps G apart, and every deadline an
// operation asks for falls halfway between two steps, so that a real-time
// fire, late by at most the lateness bound (less than a fifth of G), comes
// before the next operation as the virtual wheel's exact fire does: the
// runs agree exactly, and any difference is a defect.
//
// Run more traces with -metamorphic.traces (the seed of trace i is the
// run's seed plus i; a failure prints its own seed, configuration, trace
// and the command that runs it alone).
var metaTraces = flag.Int("metamorphic.traces", 2, "traces TestMetamorphic runs per configuration")

// The timers of a trace: one-shot timers (Init; an arming may ask the
// callback to re-arm the timer once, G later), rate timers (InitNext,
// re-armed from the callback for the next half step: fixed rate, so that
// their fires stay halfway between steps however late each is) and lane
// timers (InitNext, re-armed with a fixed delay of G, SetPeriodic where
// lanes are on). A lane timer's fires drift by their lateness, so only
// bounds are checked for it: never early, at most the lateness bound late,
// no more fires than on the virtual wheel.
const (
	metaOneShots = 6
	metaRates    = 3
	metaLanes    = 3
	metaTimers   = metaOneShots + metaRates + metaLanes
	metaSteps    = 24
	// metaTail is how many steps after the last operation the run goes on
	// before the wheel is stopped (the longest delay is 4 steps, and a
	// re-arm from the callback one more).
	metaTail = 6
)

type metaKind uint8

const (
	metaReset     metaKind = iota // Reset(d): earlier or later than a pending deadline
	metaExtend                    // TryExtend(d), else Reset(d), as package repeated does
	metaStop                      // Timer.Stop
	metaMinReset                  // SetMinReset(units*G)
	metaPeriodic                  // SetPeriodic(on), lanes on only
	metaWheelStop                 // Wheel.Stop: later operations find it stopped
)

var metaKindNames = [...]string{"Reset", "TryExtend", "Stop", "SetMinReset", "SetPeriodic", "WheelStop"}

// metaOp is one operation at step step (time step*G; the steps of a trace
// start at 0, where every timer is armed).
type metaOp struct {
	step  int
	kind  metaKind
	timer int
	units int  // Reset, TryExtend: d = units*G + G/2; SetMinReset: units*G
	on    bool // SetPeriodic
	rearm bool // Reset, TryExtend of a one-shot timer: its callback re-arms it once, G later
}

func (o metaOp) String() string {
	s := fmt.Sprintf("step %2d: %s", o.step, metaKindNames[o.kind])
	if o.kind != metaWheelStop {
		s += fmt.Sprintf(" timer %d (%s)", o.timer, metaKindOf(o.timer))
	}
	switch o.kind {
	case metaReset, metaExtend:
		s += fmt.Sprintf(" d=%d.5G", o.units)
		if o.rearm {
			s += " re-arm once"
		}
	case metaMinReset:
		s += fmt.Sprintf(" %dG", o.units)
	case metaPeriodic:
		s += fmt.Sprintf(" %v", o.on)
	}
	return s
}

func metaKindOf(i int) string {
	switch {
	case i < metaOneShots:
		return "one-shot"
	case i < metaOneShots+metaRates:
		return "rate"
	}
	return "lane"
}

func metaIsLane(i int) bool { return i >= metaOneShots+metaRates }

// metaTrace generates the trace of seed.
func metaTrace(seed uint64) []metaOp {
	rng := rand.New(rand.NewPCG(seed, 0x3e7a))
	var ops []metaOp
	for i := range metaTimers { // every timer starts at step 0
		ops = append(ops, metaOp{kind: metaReset, timer: i, units: rng.IntN(3)})
	}
	stopAt := -1
	if rng.IntN(3) == 0 {
		stopAt = metaSteps/2 + rng.IntN(metaSteps/2)
	}
	for step := 1; step <= metaSteps; step++ {
		for range 1 + rng.IntN(3) {
			op := metaOp{step: step, timer: rng.IntN(metaTimers)}
			switch r := rng.IntN(16); {
			case r < 7:
				op.kind = metaReset
			case r < 10:
				op.kind = metaExtend
			case r < 13:
				op.kind = metaStop
			case r < 14:
				op.kind = metaMinReset
			default:
				op.kind = metaPeriodic
			}
			op.units = rng.IntN(5)
			op.on = rng.IntN(2) == 0
			op.rearm = op.timer < metaOneShots && rng.IntN(3) == 0
			ops = append(ops, op)
		}
		if step == stopAt {
			ops = append(ops, metaOp{step: step, kind: metaWheelStop})
		}
	}
	return ops
}

// metaConfig is a wheel configuration the trace runs on.
type metaConfig struct {
	tick       time.Duration
	lanes      bool
	maxPending int
}

func (c metaConfig) String() string {
	lanes := "off"
	if c.lanes {
		lanes = "on"
	}
	return fmt.Sprintf("tick=%v/lanes=%s/maxpending=%d", c.tick, lanes, c.maxPending)
}

// metaBound is the lateness a real-time wheel of tick tick promises in a
// bubble (see rtLatenessBound), and metaGrid the step: five bounds, whole
// milliseconds, so that a deadline half a step from every operation stays
// more than two bounds from it (a one-shot re-armed from its late callback
// is late twice).
func metaBound(tick time.Duration) time.Duration {
	w := &Wheel{tick: int64(tick), epochSpan: maxEpoch}
	if tick <= maxBatchTick {
		w.epochSpan = max(maxEpoch, int64(tick))
	}
	return rtLatenessBound(w)
}

func metaGrid(tick time.Duration) time.Duration {
	return (5*metaBound(tick) + time.Millisecond - 1).Truncate(time.Millisecond)
}

// metaFire is one fire: when, and the deadline its arming asked for.
type metaFire struct{ at, asked time.Duration }

// metaRun is what a run of a trace saw.
type metaRun struct {
	fires   [metaTimers][]metaFire
	results []string // per operation
	left    []int    // timers the wheel's Stop returned, sorted
	stats   Stats
}

// metaHarness runs a trace on one wheel: arm and observe its timers.
type metaHarness struct {
	w     *Wheel
	g     time.Duration
	lanes bool

	mu     sync.Mutex // the fields below; callbacks and operations may overlap
	timers [metaTimers]Timer
	asked  [metaTimers]time.Duration // the deadline of the timer's latest arming
	rearm  [metaTimers]bool          // one-shot: its callback re-arms it once
	run    metaRun
}

func newMetaHarness(w *Wheel, g time.Duration, lanes bool) *metaHarness {
	h := &metaHarness{w: w, g: g, lanes: lanes}
	for i := range h.timers {
		tm := &h.timers[i]
		var err error
		switch {
		case i < metaOneShots:
			err = tm.Init(w, func() { h.fireOneShot(i) })
		case !metaIsLane(i):
			err = tm.InitNext(w, func(_ *Timer, err error) time.Duration {
				if err != nil {
					return 0
				}
				now := h.fired(i)
				next := (now/g+1)*g + g/2 // the next half step
				h.setAsked(i, next)
				return next - now
			})
		default:
			err = tm.InitNext(w, func(_ *Timer, err error) time.Duration {
				if err != nil {
					return 0
				}
				h.setAsked(i, h.fired(i)+g)
				return g
			})
			if err == nil && lanes {
				err = tm.SetPeriodic(true)
			}
		}
		if err != nil {
			panic(err)
		}
	}
	return h
}

// fired records a fire of timer i and returns its time.
func (h *metaHarness) fired(i int) time.Duration {
	now := h.w.Now()
	h.mu.Lock()
	h.run.fires[i] = append(h.run.fires[i], metaFire{at: now, asked: h.asked[i]})
	h.mu.Unlock()
	return now
}

func (h *metaHarness) setAsked(i int, at time.Duration) {
	h.mu.Lock()
	h.asked[i] = at
	h.mu.Unlock()
}

func (h *metaHarness) fireOneShot(i int) {
	now := h.fired(i)
	h.mu.Lock()
	again := h.rearm[i]
	h.rearm[i] = false
	if again {
		h.asked[i] = now + h.g
	}
	h.mu.Unlock()
	if again {
		h.timers[i].Reset(h.g)
	}
}

// apply performs op at the current step and records its result.
func (h *metaHarness) apply(op metaOp) {
	tm := &h.timers[op.timer]
	var res string
	switch op.kind {
	case metaReset, metaExtend:
		d := time.Duration(op.units)*h.g + h.g/2
		h.mu.Lock()
		h.asked[op.timer] = h.w.Now() + d
		h.rearm[op.timer] = op.rearm
		h.mu.Unlock()
		if op.kind == metaExtend && tm.TryExtend(d) {
			// Only a pending timer extends: what Reset would report.
			res = "pending=true err=<nil>"
			break
		}
		pending, err := tm.TryReset(d)
		res = fmt.Sprintf("pending=%v err=%v", pending, err)
	case metaStop:
		res = fmt.Sprintf("stopped=%v", tm.Stop())
	case metaMinReset:
		res = fmt.Sprint(tm.SetMinReset(time.Duration(op.units) * h.g))
	case metaPeriodic:
		if h.lanes && metaIsLane(op.timer) {
			res = fmt.Sprint(tm.SetPeriodic(op.on))
		}
	case metaWheelStop:
		h.stopWheel()
		res = fmt.Sprint(h.run.left)
	}
	if metaIsLane(op.timer) && op.kind != metaWheelStop {
		// A lane timer's fires drift: whether it is pending at a step is
		// not the virtual wheel's.
		res = "-"
	}
	h.mu.Lock()
	h.run.results = append(h.run.results, res)
	h.mu.Unlock()
}

// stopWheel stops the wheel, if not yet, and records what it returned.
func (h *metaHarness) stopWheel() {
	left := h.w.Stop()
	if left == nil {
		return
	}
	var ids []int
	for _, tm := range left {
		for i := range h.timers {
			if &h.timers[i] == tm && !metaIsLane(i) {
				ids = append(ids, i)
			}
		}
	}
	slices.Sort(ids)
	h.mu.Lock()
	h.run.left = ids
	h.mu.Unlock()
}

// finish stops the wheel (if the trace did not) and returns the run.
func (h *metaHarness) finish() *metaRun {
	h.stopWheel()
	<-h.w.Done()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.run.stats = h.w.Stats()
	r := h.run
	return &r
}

// metaCfg is the wheel configuration of c, quiet.
func metaCfg(c metaConfig) Config {
	cfg := DefaultConfig()
	cfg.Tick = c.tick
	cfg.MaxPending = c.maxPending
	cfg.Logger = hclog.NewNullLogger()
	cfg.Metrics = &metrics.BlackholeSink{}
	return cfg
}

// runMetaVirtual runs ops on a virtual wheel.
func runMetaVirtual(c metaConfig, ops []metaOp) *metaRun {
	v, err := NewVirtual(metaCfg(c))
	if err != nil {
		panic(err)
	}
	g := metaGrid(c.tick)
	h := newMetaHarness(v.Wheel, g, c.lanes)
	for _, op := range ops {
		v.AdvanceTo(time.Duration(op.step) * g)
		h.apply(op)
	}
	v.AdvanceTo(time.Duration(metaSteps+metaTail) * g)
	return h.finish()
}

// runMetaRealtime runs ops on a real-time wheel; call it in a bubble.
func runMetaRealtime(c metaConfig, ops []metaOp) *metaRun {
	w, err := New(metaCfg(c))
	if err != nil {
		panic(err)
	}
	w.napMin = -1 // see newBubbleWheel
	start := time.Now()
	g := metaGrid(c.tick)
	h := newMetaHarness(w, g, c.lanes)
	sleepTo := func(at time.Duration) { time.Sleep(time.Until(start.Add(at))) }
	for _, op := range ops {
		sleepTo(time.Duration(op.step) * g)
		h.apply(op)
	}
	sleepTo(time.Duration(metaSteps+metaTail) * g)
	return h.finish()
}

// checkMeta compares a real-time run with the virtual one and checks
// each against the rules; it returns what is wrong.
func checkMeta(c metaConfig, virt, real *metaRun) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	bound := metaBound(c.tick)
	for name, r := range map[string]*metaRun{"virtual": virt, "real-time": real} {
		s := r.stats
		if s.Scheduled != s.Fired+s.Cancelled+s.Dropped+s.Pending || s.Pending != 0 {
			badf("%s: stats do not add up after Stop: %+v", name, s)
		}
		for i, fs := range r.fires {
			for n, f := range fs {
				switch {
				case f.at < f.asked:
					badf("%s: timer %d fire %d at %v, before its deadline %v", name, i, n, f.at, f.asked)
				case name == "virtual" && f.at != f.asked:
					badf("virtual: timer %d fire %d at %v, not at its deadline %v", i, n, f.at, f.asked)
				case f.at > f.asked+bound:
					badf("%s: timer %d fire %d at %v, %v after its deadline %v (bound %v)", name, i, n, f.at, f.at-f.asked, f.asked, bound)
				}
			}
		}
	}
	if real.stats.MaxLateness > bound {
		badf("real-time: Stats.MaxLateness %v above the bound %v", real.stats.MaxLateness, bound)
	}
	for i := range metaTimers {
		nv, nr := len(virt.fires[i]), len(real.fires[i])
		switch {
		case metaIsLane(i) && nr > nv:
			badf("lane timer %d fired %d times, the virtual wheel %d", i, nr, nv)
		case !metaIsLane(i) && nr != nv:
			badf("timer %d (%s) fired %d times, on the virtual wheel %d", i, metaKindOf(i), nr, nv)
		}
	}
	for k := range virt.results {
		if virt.results[k] != real.results[k] {
			badf("operation %d: %s on the virtual wheel, %s in real time", k, virt.results[k], real.results[k])
		}
	}
	if !slices.Equal(virt.left, real.left) {
		badf("the wheel's Stop returned timers %v, on the virtual wheel %v", real.left, virt.left)
	}
	return bad
}

var metaConfigs = func() []metaConfig {
	var cs []metaConfig
	for _, tick := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond} {
		for _, lanes := range []bool{false, true} {
			for _, mp := range []int{0, metaTimers - 4} { // N below the timers, so that schedules are refused
				cs = append(cs, metaConfig{tick: tick, lanes: lanes, maxPending: mp})
			}
		}
	}
	return cs
}()

func TestMetamorphic(t *testing.T) {
	seed := testseed.Seed(t, "-metamorphic.traces=1", "-v")
	for _, c := range metaConfigs {
		t.Run(c.String(), func(t *testing.T) {
			for k := range *metaTraces {
				ts := seed + uint64(k)
				ops := metaTrace(ts)
				virt := runMetaVirtual(c, ops)
				var real *metaRun
				inBubble(t, func(t *testing.T) { real = runMetaRealtime(c, ops) })
				if bad := checkMeta(c, virt, real); len(bad) > 0 {
					var trace strings.Builder
					for _, op := range ops {
						fmt.Fprintln(&trace, "  ", op)
					}
					t.Fatalf("trace seed %d, %v:\n%s\ntrace:\n%s\nreproduce: go test ./wheel -run '^TestMetamorphic$/^%s$' -seed=%d -metamorphic.traces=1 -v",
						ts, c, strings.Join(bad, "\n"), trace.String(), c, ts)
				}
				if k == 0 {
					t.Logf("trace seed %d: %d operations; real time: %+v", ts, len(ops), real.stats)
				}
			}
		})
	}
}

// TestMetamorphicCatchesEarlyFires: the checks see a fire before its
// deadline and a difference in fire counts (a test of the test).
func TestMetamorphicCatchesEarlyFires(t *testing.T) {
	c := metaConfigs[0]
	ops := metaTrace(1)
	virt := runMetaVirtual(c, ops)
	real := runMetaVirtual(c, ops)
	require.Empty(t, checkMeta(c, virt, real))
	for i := range real.fires {
		if len(real.fires[i]) > 0 {
			real.fires[i][0].at -= time.Nanosecond
			real.fires[i] = append(real.fires[i], real.fires[i][0])
			break
		}
	}
	bad := checkMeta(c, virt, real)
	require.NotEmpty(t, bad)
	require.Contains(t, strings.Join(bad, "\n"), "before its deadline")
	require.Contains(t, strings.Join(bad, "\n"), "fired")
}
