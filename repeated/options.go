package repeated

import (
	"math/rand/v2"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/internal/isnil"
	"github.com/raftick/raftick/internal/logging"
)

// Option configures a Timer at construction; see New.
type Option func(*options)

type options struct {
	jitter    Jitter
	rng       *rand.Rand
	seed      [2]uint64
	seeded    bool
	onDestroy func()
	logger    hclog.Logger
	keepDelay bool
}

// WithJitter sets the policy that turns the base timeout into the delay of
// each schedule. The default, and the meaning of a nil policy, is None.
func WithJitter(j Jitter) Option {
	return func(o *options) { o.jitter = j }
}

// WithRand sets the random source handed to the jitter policy. The timer
// uses it only while holding its own lock, so a source must not be shared
// with another timer (or anything else) that may run on another goroutine:
// *rand.Rand is not safe for concurrent use. Derive one source per timer
// from a parent, for example rand.New(rand.NewPCG(parent.Uint64(),
// parent.Uint64())).
//
// The default (and the meaning of nil) is a source of the timer's own,
// seeded from the operating system's entropy (crypto/rand): two timers
// never jitter alike, whatever their names, in one process or across
// restarts. Pass a seeded source, or use WithSeed, for reproducible runs
// (tests, simulation). A source given here makes every schedule take the
// timer's lock: prefer WithSeed for timers reset often.
func WithRand(r *rand.Rand) Option {
	return func(o *options) { o.rng = r }
}

// WithSeed makes the timer's jitter reproducible without a source of its
// own. The built-in uniform policies (None, Proportional, UniformExtra)
// then draw each schedule's delay from SplitMix64 seeded with a key made
// of (seed1, seed2), kept inside the timer, at an index that counts the
// timer's schedules: a draw needs no state but its index, so a Reset of an armed timer on a
// real-time wheel takes no lock, adds no allocation and reads no memory
// outside the timer (with many timers each pointer chase on the heartbeat
// path is a cache miss). Other policies draw from
// rand.New(rand.NewPCG(seed1, seed2)). On a virtual wheel the fire times
// are then a function of the seeds; on a real-time wheel the order of
// concurrent Resets is not, so neither are their draws. WithRand, if also
// given, wins.
func WithSeed(seed1, seed2 uint64) Option {
	return func(o *options) { o.seed, o.seeded = [2]uint64{seed1, seed2}, true }
}

// WithResetKeepsDelay makes Reset re-arm with the delay of the timer's
// last schedule instead of drawing a new one: Start, Restart,
// ResetTimeout and the re-arm after each trigger draw from the jitter
// policy, and the Resets in between restart the same countdown. This is
// etcd's randomized election timeout, drawn when a follower's term or
// role changes and restarted by every heartbeat; the default, a fresh
// draw on every Reset, is LogCabin's and SOFAJRaft's. Either way a
// timeout after the last Reset is distributed as the policy says.
//
// It also saves work on a real-time wheel: a Reset draws nothing, and the
// wheel, told that every Reset lands a whole drawn timeout ahead (see
// wheel.Timer.SetMinReset), looks at the timer about once per drawn
// timeout instead of once per base timeout (in bench/scalemix at 100k
// groups, a quarter fewer looks at election timers; the CPU saved was
// within the noise).
func WithResetKeepsDelay() Option {
	return func(o *options) { o.keepDelay = true }
}

// WithOnDestroy sets a hook run exactly once after Destroy, once no trigger
// of the timer is running: on the goroutine calling Destroy if no trigger
// is in flight, otherwise on the goroutine of the in-flight trigger right
// after it returns. A panic in the hook is recovered and logged.
func WithOnDestroy(f func()) Option {
	return func(o *options) { o.onDestroy = f }
}

// WithLogger sets the logger for recovered panics (with their stack),
// jitter results that had to be clamped, rejected arguments and
// scheduling failures. The default, and the meaning of nil (or of a nil
// pointer in the Logger interface), is DefaultLogger: hclog's logger to
// standard error, as hashicorp/raft
// does, so that a failure is never silent; pass hclog.NewNullLogger() to
// turn logging off.
func WithLogger(l hclog.Logger) Option {
	if isnil.Is(l) {
		l = nil // a typed nil is no logger: the default
	}
	return func(o *options) { o.logger = l }
}

// DefaultLogger returns the logger of every Timer made without
// WithLogger (or with WithLogger(nil)): warnings and errors to standard
// error, named raftick.repeated, made once and shared (the module's one
// default, internal/logging).
func DefaultLogger() hclog.Logger { return defaultLogger() }

var defaultLogger = sync.OnceValue(func() hclog.Logger { return logging.Default("raftick.repeated") })
