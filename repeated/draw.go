package repeated

import (
	"math"
	"math/bits"
	"runtime/debug"
	"time"

	"github.com/raftick/raftick/wheel"
)

// spanPolicy in Timer.span: schedules draw through the policy's Next.
// Below it, Timer.span holds a kept delay (see keptSpan).
const spanPolicy = -1

// keptSpan is what Timer.span holds for a WithResetKeepsDelay timer whose
// last schedule's delay is d > 0: -2-d, below spanPolicy, so that the
// lock-free Reset reads the delay where the others read their span.
func keptSpan(d time.Duration) int64 { return -2 - int64(d) }

// setTimeout sets the base timeout to d and how schedules draw their
// delay (Timer.span) for the timer's policy: the built-in policies that
// draw a uniform delay (Proportional, UniformExtra) are computed inline,
// from the timer's key; other policies, and any policy with a source of
// the caller's (WithRand), go through Next. A WithResetKeepsDelay
// timer's Resets take the lock until its next schedule draws (its kept
// delay is of the old timeout). mu held, or Init.
func (t *Timer) setTimeout(d time.Duration) {
	span := time.Duration(spanPolicy)
	if !t.cold.rngGiven {
		switch j := t.cold.jitter.(type) {
		case none:
			span = 0
		case proportional:
			span = clampSpan(d, j.span(d))
		case uniformExtra:
			span = clampSpan(d, j.max)
		}
	}
	t.timeout.Store(int64(d))
	if t.is(fKeepDelay) {
		c := t.cold
		c.span, c.kept = span, 0
		span = spanPolicy
	}
	t.span.Store(int64(span))
}

// drawSpan returns how a schedule draws its delay (see Timer.span). mu
// held, or Init.
func (t *Timer) drawSpan() time.Duration {
	if t.is(fKeepDelay) {
		return t.cold.span
	}
	return time.Duration(t.span.Load())
}

// uniformDraw returns the uniform draw from [0, n), n > 0, of the
// schedule with index i of a timer keyed by key: the i-th output of
// SplitMix64 seeded with key, reduced to [0, n) by multiplying and keeping
// the high word (Lemire's method), with rejection, so without bias. A
// draw is a function of (key, i): it needs no state but the index, so
// that the lock-free Reset can draw without a lock (see Reset).
// Schedules made under the lock and by the lock-free Reset take their
// indexes from two counters, in disjoint halves of the index space
// (lockedDraw sets the top bit).
func uniformDraw(key, i uint64, n int64) int64 {
	un := uint64(n)
	x := mix64(key + (i+1)*golden)
	hi, lo := bits.Mul64(x, un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			x = mix64(x + golden)
			hi, lo = bits.Mul64(x, un)
		}
	}
	return int64(hi)
}

// golden is SplitMix64's increment, 2^64 divided by the golden ratio.
const golden = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's output function (a bijection of the 64-bit words).
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// lockedDraw is the index bit of schedules made under the lock (see
// uniformDraw).
const lockedDraw = 1 << 63

// seedKey turns WithSeed's two words (or two from the operating system)
// into a timer's key.
func seedKey(seed [2]uint64) uint64 { return seed[0] ^ mix64(seed[1]+golden) }

// delayLocked draws the delay of the next schedule (> 0) and counts the
// schedule. mu held.
func (t *Timer) delayLocked() time.Duration {
	timeout := time.Duration(t.timeout.Load())
	d := timeout
	switch span := t.drawSpan(); {
	case span > 0:
		// The index is the low 32 bits of the count (the stream repeats
		// after 2^32 schedules): a draw reads nothing outside the timer.
		d += time.Duration(uniformDraw(t.key, lockedDraw|uint64(t.schedules), int64(span)))
	case span == spanPolicy:
		c := t.cold
		st := State{First: t.is(fFirst), Consecutive: int(min(join(t.consecutive, c.consecutiveHi), math.MaxInt))}
		d = t.policyNext(timeout, st)
	}
	t.flags &^= fFirst
	t.countSchedule()
	if d <= 0 {
		t.cold.stats.Clamped++
		if n := t.cold.stats.Clamped; n&(n-1) == 0 { // the 1st, 2nd, 4th, ... of the timer
			t.cold.logger.Warn("repeated: jitter returned a non-positive delay; using the base timeout",
				"timer", t.cold.name, "delay", d, "timeout", timeout, "clamped", n)
		}
		d = timeout
	}
	if t.is(fKeepDelay) {
		c := t.cold
		// Resets reuse d: tell the wheel that they land d ahead (a hint;
		// one that raced with this still works, see SetMinReset).
		c.kept = d
		t.wt.SetMinReset(d)
		if c.span != spanPolicy {
			t.span.Store(keptSpan(d))
		}
	}
	return d
}

// policyNext returns the delay the timer's policy draws for a schedule of
// base timeout timeout in state st. A panic of the policy is recovered,
// logged, counted and recorded for Err (notePanicLocked), and the
// schedule takes the base timeout: the timer's lock stays held by its
// holder, never by a panic on its way out. mu held.
func (t *Timer) policyNext(timeout time.Duration, st State) (d time.Duration) {
	c := t.cold
	defer func() {
		if r := recover(); r != nil {
			t.notePanicLocked("jitter", &wheel.PanicError{Value: r, Stack: debug.Stack()})
			d = timeout
		}
	}()
	return c.jitter.Next(timeout, st, c.rng)
}
