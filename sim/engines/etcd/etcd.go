package etcd

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/etcdadapter"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// ErrInvalidConfig is wrapped by the errors of Check, Config.Validate,
// ClusterConfig.Validate and NewCluster about their input.
var ErrInvalidConfig = errors.New("etcd engine: invalid config")

// ErrNoNode is returned by Cluster.Start and Cluster.Restart for an ID
// outside 1..Nodes.
var ErrNoNode = errors.New("etcd engine: no such node")

// MaxNodes is the largest cluster the engine runs.
const MaxNodes = 1000

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Config holds the etcd settings that override what the engine derives
// from the Setup. Zero values mean "derive".
type Config struct {
	// Tick is etcd's tick (TickInterval; etcd's --heartbeat-interval is
	// HeartbeatTick ticks). 0: the Setup's Tick if set, else its heartbeat
	// interval (etcd's servers use a heartbeat of one tick).
	Tick time.Duration
	// ElectionTick and HeartbeatTick override raft.Config's; 0: the
	// Setup's TimeoutMin and heartbeat in ticks. ElectionTick must exceed
	// HeartbeatTick.
	ElectionTick, HeartbeatTick int
}

// Validate reports the first negative field of c.
func (c Config) Validate() error {
	switch {
	case c.Tick < 0:
		return fieldErr("Tick", c.Tick, "must be positive (0: derived from the setup)")
	case c.ElectionTick < 0:
		return fieldErr("ElectionTick", c.ElectionTick, "must be positive (0: derived from the setup)")
	case c.HeartbeatTick < 0:
		return fieldErr("HeartbeatTick", c.HeartbeatTick, "must be positive (0: derived from the setup)")
	}
	return nil
}

// heartbeatOf returns the effective heartbeat of s (0 meaning
// TimeoutMin/2), as the simulated engine uses it.
func heartbeatOf(s experiment.Setup) time.Duration {
	return experiment.Bootstrap{Setup: s}.Result(nil).Setup.Heartbeat
}

// ticks returns d in whole ticks, or an error for field.
func ticks(field string, d, tick time.Duration) (int, error) {
	if d%tick != 0 {
		return 0, fieldErr(field, d, "must be a whole number of etcd ticks of %v", tick)
	}
	return int(d / tick), nil
}

// NodeConfig returns the etcdadapter.Config that runs s's nodes under c:
// the tick, ElectionTick (TimeoutMin in ticks; s must draw from
// [TimeoutMin, 2 TimeoutMin), etcd's rule), HeartbeatTick (the heartbeat
// in ticks), PreVote and CheckQuorum of s. Errors are *sim.FieldError
// values (Field of s or of c) wrapping ErrInvalidConfig.
func NodeConfig(s experiment.Setup, c Config) (etcdadapter.Config, error) {
	nc := etcdadapter.DefaultConfig()
	// A simulated trial provokes what etcd raft warns about (lost leaders,
	// dropped messages) on purpose: the engine reports outcomes, not logs.
	nc.Logger = etcdadapter.NullLogger()
	if err := c.Validate(); err != nil {
		return nc, err
	}
	hb := heartbeatOf(s)
	tick := c.Tick
	switch {
	case tick > 0:
	case s.Tick > 0:
		tick = s.Tick
	default:
		tick = hb
	}
	if tick <= 0 {
		return nc, fieldErr("Tick", tick, "must be positive")
	}
	et, ht := c.ElectionTick, c.HeartbeatTick
	var err error
	if et == 0 {
		if s.TimeoutMax != 2*s.TimeoutMin {
			return nc, fieldErr("TimeoutMax", experiment.RangeLabel(s.TimeoutMin, s.TimeoutMax),
				"etcd draws election timeouts from [T, 2T) (ElectionTick): give T-2T")
		}
		if et, err = ticks("TimeoutMin", s.TimeoutMin, tick); err != nil {
			return nc, err
		}
	}
	if ht == 0 {
		if ht, err = ticks("Heartbeat", hb, tick); err != nil {
			return nc, err
		}
	}
	if et <= ht {
		return nc, fieldErr("ElectionTick", et, "must exceed the heartbeat tick %d (etcd's rule)", ht)
	}
	nc.TickInterval, nc.ElectionTick, nc.HeartbeatTick = tick, et, ht
	nc.PreVote, nc.CheckQuorum = s.PreVote, s.CheckQuorum
	return nc, nil
}

// Check reports whether s can run on etcd nodes under c: at most MaxNodes
// servers (failover: at least 2), the timing NodeConfig accepts (and
// etcdadapter.Config.ValidateTiming, its fields mapped back to s's and
// c's, so a tick count beyond etcdadapter's limit is refused here rather
// than failing every trial), and none of the options of other
// implementations that etcd does not have. Errors are *sim.FieldError
// values naming the refused field of s (or c), wrapping ErrInvalidConfig.
func Check(s experiment.Setup, c Config, failover bool) error {
	if err := s.Validate(); err != nil {
		return err
	}
	lo := 1
	if failover {
		lo = 2
	}
	if s.Nodes < lo || s.Nodes > MaxNodes {
		return fieldErr("Nodes", s.Nodes, "must be in [%d, %d] on etcd nodes", lo, MaxNodes)
	}
	nc, err := NodeConfig(s, c)
	if err != nil {
		return err
	}
	if err := nc.ValidateTiming(); err != nil {
		return adapterErr(err)
	}
	for _, o := range []struct {
		field string
		set   bool
		why   string
	}{
		{"CandidatesWait", s.CandidatesWait, "etcd's candidates step down on a majority of rejections"},
		{"KeepTimer", s.KeepTimer, "etcd re-draws the timeout of a deposed candidate"},
		{"DiskBlocks", s.DiskBlocks, "etcd's nodes keep working while they write"},
		{"LeaderWrite", s.LeaderWrite, "an etcd leader sends its first append while it writes"},
		{"Granularity", s.Granularity != 0, "etcd's timeouts are whole ticks"},
		{"TimerLateness", s.TimerLateness != nil, "etcd's timeouts are whole ticks"},
		{"HeartbeatJitter", s.HeartbeatJitter, "etcd heartbeats every HeartbeatTick ticks"},
		{"HeartbeatPerPeer", s.HeartbeatPerPeer, "etcd heartbeats every follower at once"},
		{"Detection", s.Detection != election.ResetOnHeartbeat, "etcd restarts its count on every heartbeat"},
		{"Stickiness", s.Stickiness != election.StickyByContact, "etcd's lease is ElectionTick ticks since the last contact"},
		{"LeaderStickiness", s.LeaderStickiness != s.CheckQuorum, "etcd ignores votes within its lease exactly when CheckQuorum is on"},
		{"Settle", s.Settle != 0, "the etcd engine crashes the leader right after a heartbeat broadcast"},
		{"GroupCommit", s.GroupCommit, "not an etcd option"},
	} {
		if o.set {
			return fieldErr(o.field, o.set, "not available on etcd nodes: %s", o.why)
		}
	}
	return nil
}

// adapterErr returns an etcdadapter.Config validation error as this
// package's: the field of s or c that set the refused etcdadapter field
// (TickInterval is Tick, ElectionTick and HeartbeatTick are c's).
func adapterErr(err error) error {
	var fe *etcdadapter.FieldError
	if !errors.As(err, &fe) || !errors.Is(err, etcdadapter.ErrInvalidConfig) {
		return err
	}
	field, reason := fe.Field, fe.Reason
	switch field {
	case "TickInterval":
		field = "Tick"
	case "ElectionTick", "HeartbeatTick":
		reason = "etcd's " + field + " (in ticks) " + reason
	}
	return &sim.FieldError{Field: field, Value: fe.Value, Reason: reason, Err: ErrInvalidConfig, Cause: err}
}

// Failover is the failover experiment (experiment.RunFailover) on etcd
// nodes.
type Failover struct {
	experiment.Setup
	Config Config
}

// Bootstrap is the cold-start experiment (experiment.RunBootstrap) on
// etcd nodes. They start with equal, empty logs: Setup.ShortLogs does not
// apply and the trials and Result run with 0.
type Bootstrap struct {
	experiment.Setup
	Config Config
}

// Check reports whether f can run (see the package's Check).
func (f Failover) Check() error { return Check(f.Setup, f.Config, true) }

// Check reports whether b can run (see the package's Check).
func (b Bootstrap) Check() error { return Check(b.Setup, b.Config, false) }

// Trial runs one failover on a fresh etcd cluster; it is a function of f,
// and rng's state.
func (f Failover) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := f.Check(); err != nil {
		return sim.Outcome{}, err
	}
	e, err := newEngine(f.Setup, f.Config)
	if err != nil {
		return sim.Outcome{}, err
	}
	return experiment.RunFailover(ctx, e, effective(f.Setup, f.Config), rng, trace)
}

// Trial runs one cold start of a fresh etcd cluster.
func (b Bootstrap) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := b.Check(); err != nil {
		return sim.Outcome{}, err
	}
	e, err := newEngine(b.Setup, b.Config)
	if err != nil {
		return sim.Outcome{}, err
	}
	return experiment.RunBootstrap(ctx, e, equalLogs(effective(b.Setup, b.Config)), rng, trace)
}

// Result summarizes failovers on etcd nodes (Model "etcd-engine"),
// described with the ticks and timeouts that ran.
func (f Failover) Result(outs []sim.Outcome) experiment.Result {
	return result(experiment.Failover{Setup: effective(f.Setup, f.Config)}.Result(outs))
}

// Result summarizes cold starts on etcd nodes (Model "etcd-engine").
func (b Bootstrap) Result(outs []sim.Outcome) experiment.Result {
	return result(experiment.Bootstrap{Setup: equalLogs(effective(b.Setup, b.Config))}.Result(outs))
}

// equalLogs returns s without short logs, as etcd nodes start.
func equalLogs(s experiment.Setup) experiment.Setup {
	s.ShortLogs = 0
	return s
}

// effective returns s with c's overrides: the tick, timeouts and
// heartbeat the etcd nodes run (s itself if it cannot run).
func effective(s experiment.Setup, c Config) experiment.Setup {
	nc, err := NodeConfig(s, c)
	if err != nil {
		return s
	}
	s.Tick = nc.TickInterval
	s.TimeoutMin, s.TimeoutMax = nc.ElectionRange()
	s.Heartbeat = nc.HeartbeatInterval()
	return s
}

func result(r experiment.Result) experiment.Result {
	r.Model = "etcd-engine"
	return r
}
