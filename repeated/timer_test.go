package repeated_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// TestNewRejectsBadInput is the constructor-validation table: every
// invalid argument, including a jitter policy built with invalid
// parameters and a stopped wheel, is an error from New naming the timer
// and the parameter, not a timer that silently misbehaves.
func TestNewRejectsBadInput(t *testing.T) {
	v := newVirtual(t)
	stopped, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	stopped.Stop()
	nop := func() {}
	cases := []struct {
		name    string
		w       *wheel.Wheel
		f       func()
		timeout time.Duration
		jitter  repeated.Jitter
		want    error
		says    string // part of the message
	}{
		{"nil wheel", nil, nop, ms, nil, repeated.ErrNilWheel, "nil wheel"},
		{"nil trigger", v.Wheel, nil, ms, nil, repeated.ErrNilTrigger, "nil trigger"},
		{"zero timeout", v.Wheel, nop, 0, nil, repeated.ErrInvalidTimeout, "0s"},
		{"negative timeout", v.Wheel, nop, -ms, nil, repeated.ErrInvalidTimeout, "-1ms"},
		{"stopped wheel", stopped.Wheel, nop, ms, nil, wheel.ErrStopped, "stopped"},
		{"proportional negative", v.Wheel, nop, ms, repeated.Proportional(-1), repeated.ErrInvalidJitter, "Proportional(-1)"},
		{"proportional NaN", v.Wheel, nop, ms, repeated.Proportional(math.NaN()), repeated.ErrInvalidJitter, "Proportional(NaN)"},
		{"proportional +Inf", v.Wheel, nop, ms, repeated.Proportional(math.Inf(1)), repeated.ErrInvalidJitter, "Proportional(+Inf)"},
		{"uniform-extra negative", v.Wheel, nop, ms, repeated.UniformExtra(-time.Second), repeated.ErrInvalidJitter, "UniformExtra(-1s)"},
		{"backoff shift too big", v.Wheel, nop, ms, repeated.Backoff(100, 0), repeated.ErrInvalidJitter, "Backoff(100, 0s)"},
		{"backoff negative shift", v.Wheel, nop, ms, repeated.Backoff(-1, 0), repeated.ErrInvalidJitter, "maxShift"},
		{"backoff negative cap", v.Wheel, nop, ms, repeated.Backoff(3, -ms), repeated.ErrInvalidJitter, "cap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, err := repeated.New(c.w, "bad", c.timeout, c.f, repeated.WithJitter(c.jitter))
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), `"bad"`, "the error names the timer")
			require.Contains(t, err.Error(), c.says)
			require.Nil(t, tm)
		})
	}
	// The valid edges of the same policies are accepted.
	for _, j := range []repeated.Jitter{repeated.Proportional(0), repeated.UniformExtra(0),
		repeated.Backoff(0, 0), repeated.Backoff(62, time.Hour), repeated.FirstOnly(), repeated.None(), repeated.Func(nil)} {
		require.NoError(t, repeated.ValidateJitter(j), "%v", j)
		tm, err := repeated.New(v.Wheel, "edge", ms, nop, repeated.WithJitter(j))
		require.NoError(t, err, "%v", j)
		tm.Destroy()
	}
	require.NoError(t, repeated.ValidateJitter(nil))
	// nil options and nil option values fall back to the defaults.
	tm, err := repeated.New(v.Wheel, "ok", ms, nop, nil, repeated.WithJitter(nil),
		repeated.WithRand(nil), repeated.WithLogger(nil), repeated.WithOnDestroy(nil))
	require.NoError(t, err)
	require.Equal(t, ms, tm.Timeout())
	require.Equal(t, "ok", tm.Name())
	require.True(t, tm.IsStopped())
	tm.Destroy()
}

func TestTriggerPanicIsRecoveredAndTimerKeepsRunning(t *testing.T) {
	v := newVirtual(t)
	n := 0
	tm := mustNew(t, v.Wheel, "panicky", 10*ms, func() {
		n++
		panic("boom")
	}, repeated.WithOnDestroy(func() { panic("hook boom") }))
	tm.Start()
	v.AdvanceTo(30 * ms)
	require.Equal(t, 3, n)
	require.True(t, tm.IsRunning())
	require.False(t, tm.IsInvoking())
	tm.RunOnceNow()
	require.Equal(t, 4, n)
	require.NotPanics(t, tm.Destroy)
	require.EqualValues(t, 5, tm.Stats().Panics)
	require.Zero(t, v.Stats().Panics, "the wheel never sees the panic")
}

func TestScheduleErrorStopsTimerAndIsReported(t *testing.T) {
	cfg := wheel.DefaultConfig()
	cfg.MaxPending = 1
	v, err := wheel.NewVirtual(cfg)
	require.NoError(t, err)
	a := mustNew(t, v.Wheel, "a", ms, func() {})
	b := mustNew(t, v.Wheel, "b", ms, func() {})
	require.NoError(t, a.Start())
	err = b.Start()
	require.ErrorIs(t, err, wheel.ErrTooManyPending, "Start says the timer cannot run")
	require.Contains(t, err.Error(), `"b"`)
	require.True(t, a.IsRunning())
	require.False(t, b.IsRunning(), "a refused schedule stops the timer")
	require.ErrorIs(t, b.Err(), wheel.ErrTooManyPending)
	require.EqualValues(t, 1, b.Stats().ScheduleErrors)
	require.ErrorIs(t, b.Reset(), repeated.ErrNotRunning, "Reset does not start a stopped timer, and says so")
	a.Stop()
	require.NoError(t, b.Start())
	require.True(t, b.IsRunning())
	require.NoError(t, b.Err(), "a successful Start clears the error")
	require.NoError(t, b.Reset(), "re-armed")
	require.NoError(t, b.Start(), "already running")

	v.Stop()
	require.ErrorIs(t, b.Reset(), wheel.ErrStopped, "Reset says it could not schedule")
	require.ErrorIs(t, b.Err(), wheel.ErrStopped)
	require.False(t, b.IsRunning())
	require.NoError(t, b.TryResetTimeout(2*ms), "a stopped timer only records the timeout")
	require.ErrorIs(t, b.Start(), wheel.ErrStopped)
	require.ErrorIs(t, b.Restart(), wheel.ErrStopped)
	require.ErrorIs(t, b.Err(), wheel.ErrStopped)
	require.EqualValues(t, 4, b.Stats().ScheduleErrors)
	b.Destroy()
	for _, f := range []func() error{b.Start, b.Restart, b.Reset} {
		require.ErrorIs(t, f(), repeated.ErrDestroyed)
	}
}

func TestNonPositiveJitterIsClampedToBase(t *testing.T) {
	v := newVirtual(t)
	var at []time.Duration
	tm := mustNew(t, v.Wheel, "clamp", 100*ms, func() { at = append(at, v.Now()) },
		repeated.WithJitter(repeated.Func(func(time.Duration, repeated.State, *rand.Rand) time.Duration { return -1 })))
	tm.Start()
	v.AdvanceTo(250 * ms)
	require.Equal(t, []time.Duration{100 * ms, 200 * ms}, at)
	require.EqualValues(t, 3, tm.Stats().Clamped)
	tm.Destroy()
}

// TestDefaultRandIsFreshPerTimer: without WithRand, two timers of the same
// name (two processes restarting the same node) must not jitter alike; a
// source seeded from the name made them identical.
func TestDefaultRandIsFreshPerTimer(t *testing.T) {
	v := newVirtual(t)
	deadlines := func(name string) []time.Duration {
		tm := mustNew(t, v.Wheel, name, time.Second, func() {}, repeated.WithJitter(repeated.Proportional(1)))
		var ds []time.Duration
		for range 4 {
			require.NoError(t, tm.Restart())
			d, _ := tm.Deadline()
			ds = append(ds, d)
		}
		tm.Destroy()
		return ds
	}
	require.NotEqual(t, deadlines("election-1"), deadlines("election-1"))
	// A seeded source stays reproducible.
	seededDeadline := func() time.Duration {
		tm := mustNew(t, v.Wheel, "e", time.Second, func() {}, repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(5)))
		require.NoError(t, tm.Start())
		d, _ := tm.Deadline()
		tm.Destroy()
		return d
	}
	require.Equal(t, seededDeadline(), seededDeadline())
}

func TestStringDescribesState(t *testing.T) {
	v := newVirtual(t)
	tm := mustNew(t, v.Wheel, "election-7", 150*ms, func() {}, repeated.WithJitter(repeated.UniformExtra(ms)))
	require.Equal(t, `repeated.Timer{name="election-7" timeout=150ms jitter=uniform-extra(1ms) state=stopped invoking=false next=none}`, tm.String())
	tm.Start()
	require.Contains(t, tm.String(), "state=running")
	require.Contains(t, tm.String(), "next=150.")
	tm.Destroy()
	require.True(t, strings.Contains(tm.String(), "state=destroyed"))
}

// TestInitEmbedded: a Timer embedded in a struct and made by Init behaves
// as one from New; a second Init, and the zero Timer's methods, are errors
// rather than panics.
func TestInitEmbedded(t *testing.T) {
	v := newVirtual(t)
	type group struct {
		election, stepDown repeated.Timer
		fired              int
	}
	groups := make([]group, 3)
	for i := range groups {
		g := &groups[i]
		require.NoError(t, g.election.Init(v.Wheel, "election", 10*ms, func() { g.fired++ },
			repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(uint64(i), 1)))
		require.NoError(t, g.election.Start())
	}
	err := groups[0].election.Init(v.Wheel, "again", ms, func() {})
	require.ErrorIs(t, err, repeated.ErrInitialized)
	require.Contains(t, err.Error(), `"election"`)

	v.AdvanceBy(20 * ms) // every timeout is in [10ms, 20ms)
	for i := range groups {
		require.Equal(t, 1, groups[i].fired, "group %d", i)
	}

	var zero repeated.Timer
	require.ErrorIs(t, zero.Start(), repeated.ErrNotInitialized)
	require.ErrorIs(t, zero.Restart(), repeated.ErrNotInitialized)
	require.ErrorIs(t, zero.Reset(), repeated.ErrNotRunning)
	require.ErrorIs(t, zero.TryResetTimeout(ms), repeated.ErrNotInitialized)
	zero.RunOnceNow()
	zero.Stop()
	zero.Destroy()
	require.False(t, zero.IsRunning())
}

// TestWithSeedIsReproducible: a seeded timer draws the same deadlines in
// every run, and another seed draws others; each schedule is within
// [timeout, timeout+span) for spans where the draw masks (powers of two),
// rejects often (3<<61: a quarter of the draws) or rarely.
func TestWithSeedIsReproducible(t *testing.T) {
	for _, span := range []time.Duration{1, 7, 1 << 20, 150 * ms, 3 << 61} {
		deadlines := func(seed uint64) []time.Duration {
			v := newVirtual(t)
			tm, err := repeated.New(v.Wheel, "e", time.Nanosecond, func() {},
				repeated.WithJitter(repeated.UniformExtra(span)), repeated.WithSeed(seed, 5))
			require.NoError(t, err)
			require.NoError(t, tm.Start())
			var out []time.Duration
			for range 500 {
				require.NoError(t, tm.Reset())
				d, ok := tm.Deadline()
				require.True(t, ok)
				require.GreaterOrEqual(t, d, v.Now()+time.Nanosecond, "span %v", span)
				require.Less(t, d, v.Now()+time.Nanosecond+span, "span %v", span)
				out = append(out, d)
			}
			return out
		}
		a := deadlines(3)
		require.Equal(t, a, deadlines(3), "span %v: the same seed must draw the same", span)
		if span > 1<<10 {
			require.NotEqual(t, a, deadlines(4), "span %v: another seed must draw otherwise", span)
		}
	}
}

// TestWithResetKeepsDelay: a timer made WithResetKeepsDelay restarts the
// same countdown on every Reset, and draws a new delay only where the
// others draw too: Start, Restart, ResetTimeout and the re-arm after a
// trigger. Each is still a schedule (Stats). Without the option the
// Resets draw afresh.
func TestWithResetKeepsDelay(t *testing.T) {
	v := newVirtual(t)
	fired := 0
	tm, err := repeated.New(v.Wheel, "e", 150*ms, func() { fired++ },
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(1, 2), repeated.WithResetKeepsDelay())
	require.NoError(t, err)
	left := func() time.Duration {
		t.Helper()
		d, ok := tm.Deadline()
		require.True(t, ok)
		return d - v.Now()
	}
	resets := func(want time.Duration) {
		t.Helper()
		for range 5 {
			v.AdvanceBy(20 * ms)
			require.NoError(t, tm.Reset())
			require.Equal(t, want, left(), "a Reset must restart the same countdown")
		}
	}
	inRange := func(d, lo time.Duration) {
		t.Helper()
		require.GreaterOrEqual(t, d, lo)
		require.Less(t, d, 2*lo)
	}

	require.NoError(t, tm.Start())
	d0 := left()
	inRange(d0, 150*ms)
	resets(d0)

	v.AdvanceBy(d0) // no Reset: it fires, and the re-arm draws
	require.Equal(t, 1, fired)
	d1 := left()
	inRange(d1, 150*ms)
	resets(d1)

	var draws []time.Duration
	for range 8 {
		require.NoError(t, tm.Restart())
		d := left()
		inRange(d, 150*ms)
		resets(d)
		draws = append(draws, d)
	}
	require.NotEqual(t, slices.Min(draws), slices.Max(draws), "Restart must draw afresh")

	require.NoError(t, tm.TryResetTimeout(time.Second))
	d3 := left()
	inRange(d3, time.Second)
	resets(d3)
	// Start, 5 Resets, the re-arm, 5 Resets, 8 x (Restart, 5 Resets),
	// ResetTimeout, 5 Resets.
	require.EqualValues(t, 1+5+1+5+8*6+1+5, tm.Stats().Schedules)

	// A policy with a source of the caller's keeps its delay too (under
	// the lock).
	pol, err := repeated.New(v.Wheel, "p", 150*ms, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithRand(seeded(3)), repeated.WithResetKeepsDelay())
	require.NoError(t, err)
	require.NoError(t, pol.Start())
	pd, _ := pol.Deadline()
	pd -= v.Now()
	for range 5 {
		v.AdvanceBy(20 * ms)
		require.NoError(t, pol.Reset())
		d, _ := pol.Deadline()
		require.Equal(t, pd, d-v.Now())
	}

	// The default draws on every Reset.
	other, err := repeated.New(v.Wheel, "d", 150*ms, func() {},
		repeated.WithJitter(repeated.Proportional(1)), repeated.WithSeed(1, 2))
	require.NoError(t, err)
	require.NoError(t, other.Start())
	seen := map[time.Duration]bool{}
	for range 5 {
		require.NoError(t, other.Reset())
		d, _ := other.Deadline()
		seen[d-v.Now()] = true
	}
	require.Greater(t, len(seen), 1, "without the option a Reset draws afresh")
}
