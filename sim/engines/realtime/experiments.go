package realtime

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// Model names the results of this engine (experiment.Result.Model).
const Model = "raftick-realtime"

// ErrInvalidConfig is wrapped by Check's errors.
var ErrInvalidConfig = errors.New("realtime engine: invalid config")

// Check reports whether s can run in real time. It refuses what models a
// real process's timer lateness rather than describing the cluster (the
// real timers have their own): TimerLateness and LatenessSpread.
// Errors are *sim.FieldError values wrapping ErrInvalidConfig.
func Check(s experiment.Setup) error {
	switch {
	case s.TimerLateness != nil:
		return cfgerr.New(ErrInvalidConfig, "TimerLateness", s.TimerLateness, "models a process's timer lateness; the real-time engine's timers have their own")
	case s.LatenessSpread > 0 || s.LatenessPerServer:
		return cfgerr.New(ErrInvalidConfig, "LatenessSpread", s.LatenessSpread, "models a process's timer lateness; the real-time engine's timers have their own")
	}
	return s.Validate()
}

// Failover is experiment.Failover on Engine.
type Failover struct {
	experiment.Setup
	Engine Engine
}

// Trial runs one failover in real time.
func (f Failover) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := Check(f.Setup); err != nil {
		return sim.Outcome{}, err
	}
	return experiment.RunFailover(ctx, f.Engine, f.Setup, rng, trace)
}

// Result summarizes failovers in real time (Model "raftick-realtime").
func (f Failover) Result(outs []sim.Outcome) experiment.Result {
	r := experiment.Failover{Setup: f.Setup}.Result(outs)
	r.Model = Model
	return r
}

// Bootstrap is experiment.Bootstrap on Engine.
type Bootstrap struct {
	experiment.Setup
	Engine Engine
}

// Trial runs one cold start in real time.
func (b Bootstrap) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := Check(b.Setup); err != nil {
		return sim.Outcome{}, err
	}
	return experiment.RunBootstrap(ctx, b.Engine, b.Setup, rng, trace)
}

// Result summarizes cold starts in real time (Model "raftick-realtime").
func (b Bootstrap) Result(outs []sim.Outcome) experiment.Result {
	r := experiment.Bootstrap{Setup: b.Setup}.Result(outs)
	r.Model = Model
	return r
}
