package repeated_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
)

// The model-based test: seeded random sequences of operations, some of them
// issued from inside the trigger, run against a Timer on a virtual wheel and
// against a small reference model of the state machine written from the
// package documentation. Trigger and hook times, and the observable state
// after every step, must match exactly.

type opKind int

const (
	opStart opKind = iota
	opStop
	opReset
	opResetTimeout
	opRestart
	opRunOnceNow
	opDestroy
	opAdvance // top level only
)

func (k opKind) String() string {
	return [...]string{"Start", "Stop", "Reset", "ResetTimeout", "Restart", "RunOnceNow", "Destroy", "Advance"}[k]
}

type op struct {
	kind opKind
	d    time.Duration // ResetTimeout's argument (may be invalid), Advance's step
}

func (o op) String() string {
	if o.kind == opResetTimeout || o.kind == opAdvance {
		return fmt.Sprintf("%v(%v)", o.kind, o.d)
	}
	return o.kind.String()
}

// script is one randomized run: top-level ops, the ops each trigger issues
// (by trigger number), and the jitter policy.
type script struct {
	top    []op
	inner  [][]op
	jitter repeated.Jitter
	base   time.Duration
}

func genOp(r *rand.Rand, top bool) op {
	// Weights: advancing dominates at top level; Destroy is rare so that
	// most runs exercise a live timer for long.
	w := []struct {
		k opKind
		n int
	}{{opStart, 10}, {opStop, 8}, {opReset, 12}, {opResetTimeout, 6}, {opRestart, 8}, {opRunOnceNow, 6}, {opDestroy, 1}}
	if top {
		w = append(w, struct {
			k opKind
			n int
		}{opAdvance, 60})
	}
	total := 0
	for _, x := range w {
		total += x.n
	}
	n := r.IntN(total)
	for _, x := range w {
		if n < x.n {
			o := op{kind: x.k}
			switch x.k {
			case opResetTimeout:
				o.d = time.Duration(r.IntN(120)) * ms // 0 is invalid on purpose
			case opAdvance:
				o.d = time.Duration(r.Int64N(int64(150 * ms)))
			}
			return o
		}
		n -= x.n
	}
	panic("unreachable")
}

// encodeState is a policy whose delay encodes the State, so a wrong
// First/Consecutive shows up as a wrong fire time.
func encodeState(b time.Duration, st repeated.State, r *rand.Rand) time.Duration {
	d := b + time.Duration(r.Int64N(int64(b)/2+1)) + time.Duration(st.Consecutive%7)*ms
	if st.First {
		d += 13 * time.Microsecond
	}
	return d
}

func genScript(seed uint64, steps int) script {
	r := seeded(seed)
	policies := []repeated.Jitter{
		repeated.None(), repeated.UniformExtra(40 * ms), repeated.Proportional(1),
		repeated.FirstOnly(), repeated.Backoff(3, 400*ms), repeated.Func(encodeState),
	}
	s := script{jitter: policies[r.IntN(len(policies))], base: time.Duration(5+r.IntN(100)) * ms}
	for range steps {
		s.top = append(s.top, genOp(r, true))
	}
	for range 4 * steps {
		var in []op
		for range r.IntN(4) { // 0..3 ops inside each trigger; most often 0 or 1
			if r.IntN(3) == 0 {
				in = append(in, genOp(r, false))
			}
		}
		s.inner = append(s.inner, in)
	}
	return s
}

// model is the reference state machine.
type model struct {
	s           *script
	rng         *rand.Rand
	now         time.Duration
	timeout     time.Duration
	running     bool
	armed       bool
	invoking    bool
	destroyed   bool
	hookDone    bool
	first       bool
	consecutive int
	deadline    time.Duration
	triggers    int
	schedules   int
	log         []string
}

func (m *model) arm() {
	d := m.s.jitter.Next(m.timeout, repeated.State{First: m.first, Consecutive: m.consecutive}, m.rng)
	m.first = false
	m.schedules++
	if d <= 0 {
		d = m.timeout
	}
	m.deadline, m.armed = m.now+d, true
}

func (m *model) start(force bool) {
	if m.destroyed || (m.running && !force) {
		return
	}
	m.running, m.first, m.consecutive = true, true, 0
	if !m.invoking {
		m.arm()
	}
}

func (m *model) apply(o op) {
	switch o.kind {
	case opStart:
		m.start(false)
	case opRestart:
		m.start(true)
	case opStop:
		if !m.destroyed && m.running {
			m.running, m.armed = false, false
		}
	case opReset:
		if m.running && !m.invoking {
			m.arm()
		}
	case opResetTimeout:
		if o.d <= 0 || m.destroyed {
			return
		}
		m.timeout = o.d
		if m.running && !m.invoking {
			m.arm()
		}
	case opRunOnceNow:
		if m.destroyed || !m.running || m.invoking {
			return
		}
		m.armed = false
		m.trigger()
	case opDestroy:
		if m.destroyed {
			return
		}
		m.destroyed, m.running, m.armed = true, false, false
		if !m.invoking {
			m.hook()
		}
	case opAdvance:
		to := m.now + o.d
		for m.armed && m.deadline <= to {
			m.now, m.armed = m.deadline, false
			m.trigger()
		}
		m.now = to
	}
}

func (m *model) trigger() {
	k := m.triggers
	m.triggers++
	m.invoking = true
	m.consecutive++
	m.log = append(m.log, fmt.Sprintf("%v trigger#%d", m.now, k))
	if k < len(m.s.inner) {
		for _, o := range m.s.inner[k] {
			m.apply(o)
		}
	}
	m.invoking = false
	if m.destroyed {
		if !m.hookDone {
			m.hook()
		}
	} else if m.running && !m.armed {
		m.arm()
	}
}

func (m *model) hook() {
	m.hookDone = true
	m.log = append(m.log, fmt.Sprintf("%v hook", m.now))
}

// runReal runs the script on a Timer on a virtual wheel, checking it
// against the model after every top-level step.
func runModelSeed(t *testing.T, seed uint64, steps int) {
	s := genScript(seed, steps)
	repro := fmt.Sprintf("reproduce: go test ./repeated -run TestModelRandomized -seed=%d (jitter %v, base %v)", seed, s.jitter, s.base)

	v := newVirtual(t)
	var log []string
	triggers := 0
	var tm *repeated.Timer
	apply := func(o op) {
		switch o.kind {
		case opStart:
			tm.Start()
		case opStop:
			tm.Stop()
		case opReset:
			tm.Reset()
		case opResetTimeout:
			tm.ResetTimeout(o.d)
		case opRestart:
			tm.Restart()
		case opRunOnceNow:
			tm.RunOnceNow()
		case opDestroy:
			tm.Destroy()
		case opAdvance:
			v.AdvanceTo(v.Now() + o.d)
		}
	}
	tm = mustNew(t, v.Wheel, "model", s.base, func() {
		k := triggers
		triggers++
		log = append(log, fmt.Sprintf("%v trigger#%d", v.Now(), k))
		if !tm.IsInvoking() {
			t.Errorf("IsInvoking false inside trigger; %s", repro)
		}
		if k < len(s.inner) {
			for _, o := range s.inner[k] {
				apply(o)
			}
		}
	}, repeated.WithJitter(s.jitter), repeated.WithRand(seeded(seed+1)),
		repeated.WithOnDestroy(func() { log = append(log, fmt.Sprintf("%v hook", v.Now())) }))

	m := &model{s: &s, rng: seeded(seed + 1), timeout: s.base}
	for i, o := range s.top {
		apply(o)
		m.apply(o)
		where := fmt.Sprintf("after step %d (%v); %s", i, o, repro)
		require.Equal(t, m.log, log, "trigger/hook log differs %s", where)
		require.Equal(t, m.now, v.Now(), where)
		require.Equal(t, m.running, tm.IsRunning(), "IsRunning %s", where)
		require.Equal(t, m.destroyed, tm.IsDestroyed(), "IsDestroyed %s", where)
		require.False(t, tm.IsInvoking(), where)
		require.Equal(t, m.timeout, tm.Timeout(), "Timeout %s", where)
		d, ok := tm.Deadline()
		require.Equal(t, m.armed, ok, "armed %s", where)
		if ok {
			require.Equal(t, m.deadline, d, "deadline %s", where)
		}
		st := tm.Stats()
		require.EqualValues(t, m.schedules, st.Schedules, "schedules %s", where)
		require.EqualValues(t, m.triggers, st.Triggers, "triggers %s", where)
		pending := int64(0)
		if m.armed {
			pending = 1
		}
		require.Equal(t, pending, v.Stats().Pending, "wheel schedules alive %s", where)
	}
	tm.Destroy()
}

func TestModelRandomized(t *testing.T) {
	// -seed=N runs the one case N (the seed a failure prints); without it
	// the cases are base, base+1, ... from a fresh base seed.
	if s := testseed.Flag(); s != 0 {
		t.Logf("seed %d", s)
		runModelSeed(t, s, 300)
		return
	}
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	base := rand.Uint64() >> 1
	t.Logf("cases use seeds %d..%d; a failing case prints its own -seed", base, base+uint64(seeds)-1)
	for seed := base; seed < base+uint64(seeds); seed++ {
		ok := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runModelSeed(t, seed, 300) })
		if !ok {
			t.Fatalf("seed %d failed; reproduce: go test ./repeated -run '^TestModelRandomized$' -seed=%d", seed, seed)
		}
	}
}
