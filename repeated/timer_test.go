package repeated_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

func TestNewRejectsBadInput(t *testing.T) {
	v := newVirtual(t)
	nop := func() {}
	cases := []struct {
		name    string
		w       *wheel.Wheel
		f       func()
		timeout time.Duration
		want    error
	}{
		{"nil wheel", nil, nop, ms, repeated.ErrNilWheel},
		{"nil trigger", v.Wheel, nil, ms, repeated.ErrNilTrigger},
		{"zero timeout", v.Wheel, nop, 0, repeated.ErrInvalidTimeout},
		{"negative timeout", v.Wheel, nop, -ms, repeated.ErrInvalidTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm, err := repeated.New(c.w, "bad", c.timeout, c.f)
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), `"bad"`, "the error names the timer")
			require.Nil(t, tm)
		})
	}
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
	a.Start()
	b.Start()
	require.True(t, a.IsRunning())
	require.False(t, b.IsRunning(), "a refused schedule stops the timer")
	require.ErrorIs(t, b.Err(), wheel.ErrTooManyPending)
	require.EqualValues(t, 1, b.Stats().ScheduleErrors)
	a.Stop()
	b.Start()
	require.True(t, b.IsRunning())
	require.NoError(t, b.Err(), "a successful Start clears the error")

	v.Stop()
	b.Reset()
	require.ErrorIs(t, b.Err(), wheel.ErrStopped)
	require.False(t, b.IsRunning())
	require.NoError(t, b.TryResetTimeout(2*ms), "a stopped timer only records the timeout")
	b.Start()
	require.ErrorIs(t, b.Err(), wheel.ErrStopped)
	require.EqualValues(t, 3, b.Stats().ScheduleErrors)
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

func TestDefaultRandIsSeededFromName(t *testing.T) {
	v := newVirtual(t)
	deadline := func(name string) time.Duration {
		tm := mustNew(t, v.Wheel, name, time.Second, func() {}, repeated.WithJitter(repeated.Proportional(1)))
		tm.Start()
		d, _ := tm.Deadline()
		tm.Destroy()
		return d
	}
	require.Equal(t, deadline("election-1"), deadline("election-1"))
	require.NotEqual(t, deadline("election-1"), deadline("election-2"))
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
