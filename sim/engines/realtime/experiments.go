package realtime

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
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

// SplitVote is experiment.SplitVote's "cluster" model on Engine: Alive of
// Nodes election nodes (no pre-vote, no disk) start at once, and a trial
// reports whether the first leader was elected in term 1. The other
// servers are crashed before any of them acts.
type SplitVote struct {
	experiment.SplitVote
	Engine Engine
}

// Trial runs one election in real time.
func (sv SplitVote) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := sv.Validate(); err != nil {
		return sim.Outcome{}, err
	}
	r := sv.Range
	if r == 0 {
		r = 100 * time.Millisecond
	}
	lat := sv.Latency
	if lat == nil {
		lat = sim.Fixed(time.Duration(math.Round(sv.Fraction * float64(r))))
	}
	s := experiment.Setup{Nodes: sv.Nodes, TimeoutMin: r, TimeoutMax: 2 * r, Heartbeat: r / 2, Network: sim.Network{Latency: lat}}
	var term uint64
	c, err := sv.Engine.NewCluster(ctx, s, rng, experiment.Hooks{Trace: trace, Observer: func(e election.Event) {
		if e.Type == election.EventLeaderElected && term == 0 {
			term = e.Term
		}
	}})
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	for _, id := range c.IDs()[sv.Alive:] {
		c.Crash(id)
	}
	limit := 50 * 2 * r
	elected := c.Run(limit, func() bool { return term != 0 })
	if err := c.Err(); err != nil {
		return sim.Outcome{}, err
	}
	if !elected {
		return sim.Outcome{Time: limit, Terms: 1, Splits: 1, Messages: c.Sent()}, nil
	}
	o := sim.Outcome{Time: c.Now(), Terms: 1, Messages: c.Sent(), OK: true}
	if term > 1 {
		o.Splits = 1
	}
	return o, nil
}

// Result summarizes the elections (Model "raftick-realtime").
func (sv SplitVote) Result(outs []sim.Outcome) experiment.Result {
	r := sv.SplitVote.Result(outs)
	r.Model = Model
	return r
}
