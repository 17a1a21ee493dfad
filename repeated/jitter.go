package repeated

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// maxDuration is the largest representable time.Duration.
const maxDuration = time.Duration(math.MaxInt64)

// State describes the schedule a Jitter policy is asked to randomize.
type State struct {
	// First is true for the first schedule after Start (from stopped) or
	// Restart, and false for every later schedule (after a trigger, Reset
	// or ResetTimeout).
	First bool
	// Consecutive is the number of triggers since the last Start (from
	// stopped) or Restart. Reset and ResetTimeout do not clear it.
	Consecutive int
}

// Jitter turns a timer's base timeout into the delay of one schedule: it is
// SOFAJRaft's adjustTimeout hook as a value. A Timer calls Next on every
// schedule, holding the timer's lock, with the random source given by
// WithRand; Next must not call methods of the timer.
//
// Next should return a positive delay. A Timer treats a result <= 0 as the
// base timeout (and counts it in Stats.Clamped), so a faulty policy cannot
// make a timer spin; a panic in Next is recovered, logged, counted in
// Stats.Panics and reported by Err, and that schedule takes the base
// timeout too. The policies of this package never panic: a nil rng,
// an empty range or a non-positive base give the base unchanged.
type Jitter interface {
	Next(base time.Duration, st State, rng *rand.Rand) time.Duration
}

// ErrInvalidJitter is returned, wrapped with the policy and the parameter at
// fault, by ValidateJitter, New and election.Config.Validate for a policy
// built with invalid parameters, such as Proportional(-1).
var ErrInvalidJitter = errors.New("repeated: invalid jitter")

// A Validator is a Jitter that can check the parameters it was built with.
// Every policy of this package is one. New refuses a policy whose Validate
// fails, so a mistyped parameter is an error where the timer is made
// instead of a timer that silently does not jitter.
type Validator interface {
	Validate() error
}

// ValidateJitter returns j.Validate() if j is a Validator, and nil
// otherwise. A nil j (which New reads as None) is valid.
func ValidateJitter(j Jitter) error {
	if v, ok := j.(Validator); ok && j != nil {
		return v.Validate()
	}
	return nil
}

// uniform returns a value drawn uniformly from [lo, lo+span), or lo when
// the range is empty or rng is nil. lo+span is clamped to maxDuration.
func uniform(lo, span time.Duration, rng *rand.Rand) time.Duration {
	if span = clampSpan(lo, span); span <= 0 || rng == nil {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(span)))
}

// clampSpan returns span, cut so that lo+span stays a time.Duration.
func clampSpan(lo, span time.Duration) time.Duration {
	if lo > 0 && span > maxDuration-lo {
		return maxDuration - lo
	}
	return span
}

type none struct{}

// None returns the policy that never randomizes: every schedule waits
// exactly the base timeout. It draws nothing from the random source.
func None() Jitter { return none{} }

func (none) Next(base time.Duration, _ State, _ *rand.Rand) time.Duration { return base }
func (none) String() string                                               { return "none" }

// Validate returns nil: None has no parameters.
func (none) Validate() error { return nil }

type uniformExtra struct{ max time.Duration }

// UniformExtra returns the policy that waits the base timeout T plus an
// extra delay drawn uniformly from [0, max): the result is in [T, T+max).
// This is SOFAJRaft's randomTimeout for its election and vote timers, with
// max playing the role of maxElectionDelayMs. max == 0 means no jitter; a
// negative max is invalid (see ValidateJitter), and New refuses it.
func UniformExtra(max time.Duration) Jitter { return uniformExtra{max: max} }

// Validate reports a negative max.
func (j uniformExtra) Validate() error {
	if j.max < 0 {
		return fmt.Errorf("%w: UniformExtra(%v): max must not be negative (0 means no jitter)", ErrInvalidJitter, j.max)
	}
	return nil
}

func (j uniformExtra) Next(base time.Duration, _ State, rng *rand.Rand) time.Duration {
	return uniform(base, j.max, rng)
}

func (j uniformExtra) String() string { return fmt.Sprintf("uniform-extra(%v)", j.max) }

type proportional struct{ f float64 }

// Proportional returns the policy that draws the delay uniformly from
// [T, T*(1+f)) for base timeout T. f = 1 gives [T, 2T), the election
// timeout of hashicorp/raft and etcd. f == 0 means no jitter; a negative,
// NaN or infinite f is invalid (see ValidateJitter), and New refuses it. An
// upper bound beyond the largest time.Duration is clamped.
func Proportional(f float64) Jitter { return proportional{f: f} }

// Validate reports a negative, NaN or infinite factor.
func (j proportional) Validate() error {
	if !(j.f >= 0) || math.IsInf(j.f, 1) {
		return fmt.Errorf("%w: Proportional(%v): the factor must be a finite number >= 0 (0 means no jitter)", ErrInvalidJitter, j.f)
	}
	return nil
}

func (j proportional) Next(base time.Duration, _ State, rng *rand.Rand) time.Duration {
	return uniform(base, j.span(base), rng)
}

// span returns the span of the uniform draw for base timeout base: base*f,
// or 0 (no jitter) for base <= 0 or f == 0.
func (j proportional) span(base time.Duration) time.Duration {
	if base <= 0 || !(j.f > 0) {
		return 0
	}
	extra := float64(base) * j.f
	if extra >= float64(maxDuration) {
		return maxDuration
	}
	return time.Duration(extra)
}

func (j proportional) String() string { return fmt.Sprintf("proportional(%g)", j.f) }

type firstOnly struct{}

// FirstOnly returns the policy that randomizes only the first schedule
// after Start or Restart, drawing it uniformly from [T/2, T); later
// schedules wait exactly T. SOFAJRaft uses it for the snapshot timer so
// that the many Raft groups of one process, started together, do not all
// snapshot at the same moment. A base below 2ns is returned unchanged.
func FirstOnly() Jitter { return firstOnly{} }

func (firstOnly) Next(base time.Duration, st State, rng *rand.Rand) time.Duration {
	if !st.First || base <= 0 {
		return base
	}
	half := base / 2
	if half == 0 || rng == nil {
		return base
	}
	return uniform(half, base-half, rng)
}

func (firstOnly) String() string { return "first-only" }

// Validate returns nil: FirstOnly has no parameters.
func (firstOnly) Validate() error { return nil }

type backoff struct {
	maxShift int // clamped to [0, maxBackoffShift]
	asked    int // maxShift as given, for Validate
	cap      time.Duration
}

// maxBackoffShift bounds the exponent of Backoff; 2^62 ns is about 146 years.
const maxBackoffShift = 62

// Backoff returns binary exponential backoff after consecutive triggers
// (Howard's candidate backoff): with s = min(Consecutive, maxShift), the
// delay is drawn uniformly from [T, T + T*2^s). The first schedule after
// Start or Restart (s = 0) is therefore [T, 2T), like Proportional(1), and
// every trigger without an intervening Start (from stopped) or Restart
// doubles the width of the window, up to 2^maxShift times T. Reset does
// not clear the count: a timer that should back off only across failed
// attempts is restarted when an attempt succeeds.
//
// cap > 0 bounds the upper end of the window: the delay is drawn from
// [T, min(T + T*2^s, cap)), and is exactly T when cap <= T. cap <= 0 means no
// cap (the window is clamped only at the largest time.Duration). maxShift
// must be in [0, 62] and cap must not be negative: other values are
// invalid (see ValidateJitter), and New refuses them.
func Backoff(maxShift int, cap time.Duration) Jitter {
	return backoff{maxShift: max(0, min(maxShift, maxBackoffShift)), asked: maxShift, cap: cap}
}

// Validate reports a maxShift outside [0, 62] or a negative cap.
func (j backoff) Validate() error {
	switch {
	case j.asked < 0 || j.asked > maxBackoffShift:
		return fmt.Errorf("%w: Backoff(%d, %v): maxShift must be in [0, %d] (2^%d times the base is the widest window)",
			ErrInvalidJitter, j.asked, j.cap, maxBackoffShift, maxBackoffShift)
	case j.cap < 0:
		return fmt.Errorf("%w: Backoff(%d, %v): cap must not be negative (0 means no cap)", ErrInvalidJitter, j.asked, j.cap)
	}
	return nil
}

func (j backoff) Next(base time.Duration, st State, rng *rand.Rand) time.Duration {
	if base <= 0 {
		return base
	}
	s := max(0, min(st.Consecutive, j.maxShift))
	var window time.Duration
	if base > maxDuration>>s {
		window = maxDuration
	} else {
		window = base << s
	}
	hi := maxDuration
	if window < maxDuration-base {
		hi = base + window
	}
	if j.cap > 0 && hi > j.cap {
		hi = j.cap
	}
	if hi <= base {
		return base
	}
	return uniform(base, hi-base, rng)
}

func (j backoff) String() string {
	return fmt.Sprintf("backoff(maxShift=%d, cap=%v)", j.asked, j.cap)
}

// JitterFunc adapts a function to the Jitter interface; see Func.
type JitterFunc func(base time.Duration, st State, rng *rand.Rand) time.Duration

// Next calls f.
func (f JitterFunc) Next(base time.Duration, st State, rng *rand.Rand) time.Duration {
	return f(base, st, rng)
}

// Func returns a policy that calls f on every schedule. The rules of
// Jitter.Next apply to f. A nil f is the same as None.
func Func(f func(base time.Duration, st State, rng *rand.Rand) time.Duration) Jitter {
	if f == nil {
		return none{}
	}
	return JitterFunc(f)
}

// String returns "func".
func (JitterFunc) String() string { return "func" }

// minDelay returns the least delay that policy j can return for base
// timeout base, for the built-in policies, or 0 if unknown (a Func or a
// policy of the caller's). A timer passes it to its wheel timer
// (wheel.Timer.SetMinReset) so that the wheel can keep the timer where
// heartbeat Resets stay lock-free.
func minDelay(j Jitter, base time.Duration) time.Duration {
	switch j.(type) {
	case none, proportional, uniformExtra, backoff:
		return base
	case firstOnly:
		return base / 2
	}
	return 0
}

// fixedDelay reports whether j re-arms a timer with its base timeout after
// every trigger (None, and FirstOnly after the first schedule): such a
// timer is a fixed-delay periodic one, which the wheel queues with the
// others of its period (wheel.Timer.SetPeriodic).
func fixedDelay(j Jitter) bool {
	switch j.(type) {
	case none, firstOnly:
		return true
	}
	return false
}
