package hashicorp

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/raftadapter"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// ErrInvalidConfig is wrapped by Check's errors.
var ErrInvalidConfig = errors.New("hashicorp engine: invalid config")

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Check reports whether the failover of s can run on hashicorp/raft
// nodes: at least 2 servers (one survivor), at most
// raftadapter.MaxClusterNodes, and timeouts drawn from [T, 2T) with T at
// least raftadapter.MinTimeout, hashicorp/raft's rule. Errors are
// *sim.FieldError values (Field "Nodes", "TimeoutMin" or "TimeoutMax")
// wrapping ErrInvalidConfig. Only the timeout, the number of servers,
// pre-vote and the latency of s reach the real nodes; they use in-memory
// stores (no disk) and hashicorp's own timers.
func Check(s experiment.Setup) error {
	switch {
	case s.Nodes < 2 || s.Nodes > raftadapter.MaxClusterNodes:
		return fieldErr("Nodes", s.Nodes, "must be in [2, %d] on hashicorp/raft nodes", raftadapter.MaxClusterNodes)
	case s.TimeoutMin < raftadapter.MinTimeout:
		return fieldErr("TimeoutMin", s.TimeoutMin, "must be at least %v on hashicorp/raft nodes", raftadapter.MinTimeout)
	case s.TimeoutMax != 2*s.TimeoutMin:
		return fieldErr("TimeoutMax", experiment.RangeLabel(s.TimeoutMin, s.TimeoutMax),
			"hashicorp/raft draws timeouts from [T, 2T) (its rule): give T-2T")
	case s.CandidateMin > 0 || s.CandidateBackoff:
		return fieldErr("CandidateMin", experiment.RangeLabel(s.CandidateMin, s.CandidateMax), "hashicorp/raft has no separate candidate timeout or backoff")
	case s.Crash > 1:
		return fieldErr("Crash", s.Crash, "the real-cluster harness crashes only the leader")
	case s.CrashAfterHeartbeat || s.TimersAtCrash || s.Until != experiment.UntilDefault:
		return fieldErr("Until", s.Until, "the real-cluster harness has its own crash and stopping point")
	}
	return nil
}

// Failover runs trials failovers of s on fresh hashicorp/raft clusters,
// one after another in real time (raftadapter.FailoverTrials), seeded
// from seed (hashicorp's own timers are not seeded). progress, if not
// nil, is called after each trial. On an interruption or a failed trial
// it returns the Result of the trials that finished and the error.
func Failover(ctx context.Context, s experiment.Setup, trials int, seed uint64, progress func(done, total int)) (experiment.Result, error) {
	if err := Check(s); err != nil {
		return experiment.Result{}, err
	}
	cfg := raftadapter.DefaultFailoverConfig()
	// Every trial kills a leader, which hashicorp/raft warns about: the
	// engine reports outcomes, not logs.
	cfg.Cluster.Logger = hclog.NewNullLogger()
	cfg.Trials = trials
	cfg.Cluster.Nodes = s.Nodes
	cfg.Cluster.Seed = seed
	if s.Latency != nil {
		cfg.Cluster.Latency = s.Latency
	}
	cfg.Cluster.Timing.ElectionTimeout = s.TimeoutMin
	cfg.Cluster.Timing.PreVote = s.PreVote
	if progress != nil {
		cfg.Progress = func(done, total int, _ raftadapter.Trial) { progress(done, total) }
	}
	ts, err := raftadapter.FailoverTrials(ctx, cfg)
	outs := make([]sim.Outcome, len(ts))
	for i, t := range ts {
		outs[i] = Outcome(t)
	}
	return Result(s, outs, seed), err
}

// Outcome maps one of raftadapter's failover trials onto the simulator's
// outcome: the failover time, and the terms it took (a split vote costs a
// term). A trial raftadapter returns always finished.
func Outcome(t raftadapter.Trial) sim.Outcome {
	terms := int(t.NewTerm - t.OldTerm)
	return sim.Outcome{Time: t.Failover, Terms: terms, Splits: max(terms-1, 0), OK: true}
}

// Result summarizes failovers on hashicorp/raft nodes, described as the
// real cluster ran: servers, timeout range, pre-vote and latency of s
// (Model "hashicorp-engine").
func Result(s experiment.Setup, outs []sim.Outcome, seed uint64) experiment.Result {
	real := experiment.Setup{Nodes: s.Nodes, TimeoutMin: s.TimeoutMin, TimeoutMax: s.TimeoutMax, PreVote: s.PreVote}
	real.Latency = s.Latency
	r := experiment.Failover{Setup: real}.Result(outs)
	r.Setup.Heartbeat = 0 // hashicorp's own: not a setting
	r.Model = "hashicorp-engine"
	r.Seed = seed
	return r
}
