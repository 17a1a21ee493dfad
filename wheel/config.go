package wheel

import (
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/internal/logging"
)

// Errors returned by the wheel. Compare with errors.Is.
var (
	// ErrStopped is returned when scheduling on a wheel whose Stop was called.
	ErrStopped = errors.New("wheel: stopped")
	// ErrTooManyPending is returned when scheduling would exceed Config.MaxPending.
	ErrTooManyPending = errors.New("wheel: too many pending timers")
	// ErrNotInitialized is returned by Timer methods used before Timer.Init.
	ErrNotInitialized = errors.New("wheel: timer not initialized")
	// ErrNilCallback is returned when a nil callback is given.
	ErrNilCallback = errors.New("wheel: nil callback")
	// ErrNilWheel is returned by Timer.Init when given a nil wheel.
	ErrNilWheel = errors.New("wheel: nil wheel")
	// ErrTimerPending is returned by Timer.Init on a timer that is still pending.
	ErrTimerPending = errors.New("wheel: Init on a pending timer (Stop it first)")
)

// MaxTick is the largest accepted Config.Tick.
const MaxTick = time.Hour

// Config configures a Wheel. The zero value is not valid; start from
// DefaultConfig.
type Config struct {
	// Tick is the slot granularity of the wheel. It bounds how late a
	// real-time timer may fire when the driver has to wake for a slot, and
	// how finely timers are bucketed; deadlines themselves are kept exact
	// (a virtual wheel fires at exact deadlines, not rounded to ticks).
	// Up to 10ms the real-time driver takes a slot whole once it is due,
	// so a coarser tick means fewer wake-ups (about one per tick while
	// timers fire) and timers up to a tick late, or two for a timer Reset
	// while the driver sleeps; the CPU per fire stays about the same.
	// With a tick above 10ms the timers due within the current tick wait
	// in a heap and fire at their deadlines, one by one. Must be in
	// (0, MaxTick]. Default 1ms.
	Tick time.Duration

	// MaxPending limits the number of pending timers, like Netty's
	// maxPendingTimeouts. Scheduling beyond it returns ErrTooManyPending.
	// 0 means unlimited; negative values are invalid. Default 0.
	MaxPending int

	// Executor, if not nil, receives every due callback instead of the
	// driver running it. It must not block for long: on a real-time wheel it
	// is called from the driver goroutine, on a virtual wheel from the
	// goroutine that advances time. Default nil (callbacks run on the driver).
	Executor Executor

	// Logger receives panics recovered from callbacks (with their stack),
	// rejected Resets and driver events. nil means hclog's logger to
	// standard error, named raftick.wheel (DefaultLogger), as
	// hashicorp/raft does, so that a failure is never silent; pass
	// hclog.NewNullLogger() to turn logging off. Default nil.
	Logger hclog.Logger

	// Metrics receives the wheel's metrics (raftick.wheel.*, listed in the
	// package documentation). nil means go-metrics' global sink
	// (metrics.Default(), set up with metrics.NewGlobal), as hashicorp/raft
	// does; a *metrics.BlackholeSink turns them off. A real-time wheel
	// reports every MetricsInterval, from a runtime timer of its own (no
	// goroutine waits between reports) until the wheel is stopped; a
	// virtual wheel never reports.
	Metrics metrics.MetricSink
	// MetricsInterval is how often a real-time wheel reports its metrics;
	// >= 0, 0 means DefaultMetricsInterval.
	MetricsInterval time.Duration
}

// DefaultConfig returns the default configuration: a 1ms tick, no pending
// limit, callbacks on the driver goroutine, logging to standard error
// (DefaultLogger), metrics to go-metrics' global sink every
// DefaultMetricsInterval.
func DefaultConfig() Config {
	return Config{Tick: time.Millisecond}
}

// Validate reports the first invalid field of c as a *FieldError wrapping
// ErrInvalidConfig, or nil.
func (c Config) Validate() error {
	switch {
	case c.Tick <= 0:
		return fieldErr("Tick", c.Tick, "must be positive")
	case c.Tick > MaxTick:
		return fieldErr("Tick", c.Tick, "must be at most %v", MaxTick)
	case c.MaxPending < 0:
		return fieldErr("MaxPending", c.MaxPending, "must be >= 0 (0 means unlimited)")
	case c.MetricsInterval < 0:
		return fieldErr("MetricsInterval", c.MetricsInterval, "must be >= 0 (0 means %v)", DefaultMetricsInterval)
	}
	return nil
}

// DefaultLogger returns the logger of every wheel whose Config.Logger is
// nil: warnings and errors to standard error, named raftick.wheel, made
// once and shared (the module's one default, internal/logging).
func DefaultLogger() hclog.Logger { return defaultLogger() }

var defaultLogger = sync.OnceValue(func() hclog.Logger { return logging.Default("raftick.wheel") })

// An Executor runs due callbacks somewhere other than the driver goroutine,
// for example on a worker pool. It must eventually call task.Run exactly once.
type Executor func(task Task)

// A Task is one due callback handed to an Executor. Passing it around does not
// allocate.
type Task struct {
	w *Wheel
	f func()
	t *Timer // set if f is t's NextFunc
}

// Run runs the callback. A panic in the callback is recovered, logged and
// counted in Stats.Panics (a NextFunc's is handed back to it).
func (k Task) Run() {
	switch {
	case k.w == nil:
	case k.t != nil:
		k.w.callNext(asNext(k.f), k.t)
	default:
		k.w.run(k.f)
	}
}

// GoExecutor runs each callback on a new goroutine.
func GoExecutor(task Task) { go task.Run() }

// ErrInvalidConfig is wrapped by every error Config.Validate (and so New
// and NewVirtual) returns; the error is a *FieldError naming the field.
var ErrInvalidConfig = errors.New("wheel: invalid config")

// A FieldError reports one invalid Config field: its name (e.g. "Tick"),
// its value and why it is refused. It is the same type in every raftick
// package (election.FieldError, sim.FieldError), so one errors.As reads
// any of them.
type FieldError = cfgerr.FieldError

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}
