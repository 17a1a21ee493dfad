package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
)

// Setup describes a simulated cluster for the failover, bootstrap and
// stability experiments (and sweeps and searches over them): the servers,
// their election timing and the network (sim.Network, embedded). Each
// trial builds its sim.Config from it.
type Setup struct {
	// Nodes is the number of servers; in [1, 1000]. The paper uses 5.
	Nodes int
	// TimeoutMin and TimeoutMax bound the election timeout: every timeout
	// (follower's election timer, candidate's vote timer) is drawn
	// uniformly from [TimeoutMin, TimeoutMax), or is exactly TimeoutMin
	// when they are equal. 0 < TimeoutMin <= TimeoutMax.
	TimeoutMin, TimeoutMax time.Duration
	// Heartbeat is the leader's heartbeat interval; 0 means TimeoutMin/2,
	// the paper's setting. Must be below TimeoutMin.
	Heartbeat time.Duration
	// HeartbeatJitter draws every heartbeat period uniformly from
	// [Heartbeat, 2 Heartbeat) instead of exactly Heartbeat
	// (election.Config.HeartbeatJitter = repeated.Proportional(1));
	// hashicorp/raft waits [HT/10, HT/5).
	HeartbeatJitter bool
	// HeartbeatPerPeer gives the leader one heartbeat timer per follower
	// (election.Config.Emulate.HeartbeatPerPeer), as hashicorp/raft runs one
	// heartbeat goroutine per follower.
	HeartbeatPerPeer bool
	// Network is the message and disk model: Latency (one-way delay, nil
	// for none), Disk (the time to persist term and vote, nil for
	// instantaneous), DiskBlocks, GroupCommit, LeaderWrite, and Loss and
	// Duplicate (per-message probabilities; Loss must be below 1).
	sim.Network
	// CandidatesWait: candidates ignore rejections and wait for their vote
	// timeout, as the Raft paper's, LogCabin's and hashicorp/raft's do
	// (election.Config.Emulate.WaitForVoteTimeout). Otherwise a candidate
	// steps down as soon as a majority rejected it (etcd).
	CandidatesWait bool
	// KeepTimer: a candidate that steps down keeps its round's deadline for
	// its election timer, as LogCabin's single timer does
	// (election.Config.Emulate.KeepTimerOnStepDown). Otherwise it draws a
	// fresh timeout (etcd, hashicorp/raft).
	KeepTimer bool
	// Granularity, if positive, rounds every drawn timeout to a multiple
	// of it before TimerLateness is added: LogCabin, the paper's
	// implementation, draws timeouts in whole milliseconds
	// (lround(uniform(min, max)) ms), so narrow ranges produce exact ties.
	// 0 means continuous (nanosecond) timeouts.
	Granularity time.Duration
	// TimerLateness is added to every election and vote timeout: how late
	// a server's timer thread wakes up and acts after its deadline (timer
	// slack, scheduling, taking the lock). A server re-arms from the
	// instant it acted, so lateness accumulates from round to round and
	// only its spread between servers separates their phases (LogCabin:
	// the timer thread waits with condition_variable::wait_until and
	// setElectionTimer counts from Clock::now()). nil means none.
	TimerLateness sim.Latency
	// CandidateMin and CandidateMax bound a candidate's round timeout (its
	// vote timer), drawn like the election timeout (Granularity,
	// TimerLateness) but separately from it, as in Howard et al.'s "Raft
	// Refloated" experiments. 0 and 0 mean the election timeout range.
	// Otherwise 0 < CandidateMin <= CandidateMax.
	CandidateMin, CandidateMax time.Duration
	// CandidateBackoff doubles both bounds of a candidate's round timeout
	// after each failed round, up to 2^MaxBackoffShift times, until the
	// node knows a leader again (it wins, or accepts a leader's
	// heartbeat): binary exponential backoff (Howard et al.).
	CandidateBackoff bool
	// Crash is the number of servers Failover crashes at the same instant:
	// the leader and Crash-1 others chosen at random (the short logs are
	// then among the survivors). 0 means 1. A majority must survive:
	// Crash <= Nodes - (Nodes/2+1).
	Crash int
	// CrashAfterHeartbeat makes Failover crash right after the leader's
	// synchronized heartbeat broadcast (as AvailSim, Ongaro's thesis
	// §9.4) instead of at a uniform point of the heartbeat interval (the
	// paper). Not with Settle.
	CrashAfterHeartbeat bool
	// TimersAtCrash starts every survivor's election timer at the crash
	// instant, with a fresh draw, and drops the crashed leader's messages
	// still in flight (Failover only): the model of AvailSim, the
	// simulator of Ongaro's thesis (§9.4), where the clock and the
	// followers' timers start together. Otherwise a follower's timer runs
	// from the last heartbeat it received, before or just after the crash
	// (the paper's cluster). Needs an engine whose clusters implement
	// TimerStarter (Raftick).
	TimersAtCrash bool `param:"omitzero"`
	// GrantOnlyAsFollower and BackoffOnRejections set the election
	// package's options of these names: a candidate deposed by a
	// higher-term vote request refuses it; the candidate backoff counts a
	// round only after a round half the others rejected, and restarts at
	// any step-down (Howard et al.'s ocaml-raft).
	GrantOnlyAsFollower bool `param:"omitzero"`
	BackoffOnRejections bool `param:"omitzero"`
	// HeartbeatOffset makes Bootstrap measure from a uniform point of the
	// first heartbeat interval, [0, heartbeat) after the start, instead of
	// from the start: a cold start then stands for a failover whose
	// survivors' timers all started at the leader's last heartbeat, with
	// the crash at a uniform point after it, as Howard et al.'s runs do
	// (they subtract that draw from the time to the first leader).
	// Bootstrap only.
	HeartbeatOffset bool `param:"omitzero"`
	// ClockRate, if positive, gives each server a timer rate drawn per
	// trial uniformly from [1-ClockRate, 1+ClockRate]: every election and
	// vote timeout the server draws is multiplied by it, as if its clock
	// ran fast or slow (or its timer thread had a bias of its own). In
	// [0, 0.5]; not with Tick. 0 means every server's timers run at the
	// same rate.
	ClockRate float64 `param:"omitzero"`
	// LatenessSpread, if positive, scales the TimerLateness of a trial by
	// a factor drawn uniformly from [1-LatenessSpread, 1+LatenessSpread]:
	// machines whose timer threads wake more or less promptly from one
	// run to the next (load, cores, the log that every lock's invariant
	// check walks). One factor for every server of the trial, or one per
	// server with LatenessPerServer. In [0, 1]; needs a TimerLateness. 0
	// means every trial draws the same lateness.
	LatenessSpread float64 `param:"omitzero"`
	// LatenessPerServer draws LatenessSpread's factor for each server.
	LatenessPerServer bool `param:"omitzero"`
	// Until is where Failover and Bootstrap stop the clock: the zero
	// value UntilDefault is each experiment's own (failover: every
	// survivor accepted the new leader, the paper's; bootstrap: a majority
	// knows it).
	Until Until
	// PreVote, CheckQuorum and LeaderStickiness enable the election
	// package's options.
	PreVote, CheckQuorum, LeaderStickiness bool
	// Stickiness is how long a follower stays loyal to a known leader
	// (election.Config.Stickiness): the zero value StickyByContact, or
	// StickyUntilTimeout (hashicorp/raft).
	Stickiness election.StickinessMode
	// ShortLogs is the number of servers whose logs are shorter than the
	// others', so they cannot win (as long as they are fewer than a
	// majority, whose votes a short log would need): survivors of the
	// crash for Failover, servers chosen at random before the start for
	// Bootstrap; in [0, Nodes-2]. The paper uses 2 of the 4 survivors.
	ShortLogs int
	// Detection is how followers detect a dead leader (the election
	// package's modes); the zero value is ResetOnHeartbeat, the paper's.
	Detection election.DetectionMode
	// Settle, if positive, changes how Failover crashes the leader to what
	// raftadapter's real-cluster harness does: the servers start as
	// followers and elect a leader on their own (nobody campaigns at
	// once), and once every server follows it the leader runs for Settle
	// plus a uniform draw from [0, TimeoutMin/5), then crashes, at a random
	// point of its (unsynchronized) heartbeats and of the followers'
	// timers. 0 means the paper's procedure: server 1 campaigns at once,
	// and the crash comes at a uniform point of the heartbeat interval
	// after a heartbeat broadcast. Must not be negative.
	Settle time.Duration
	// Tick, if positive, drives every server by a ticker of this period with
	// its own random phase, as etcd raft counts everything in calls of Tick
	// (election.Config.Emulate.Tick): timeouts are drawn in whole ticks from
	// [TimeoutMin, TimeoutMax), every timer fires on a tick and the lease
	// counts ticks; with CheckQuorum the leader checks its quorum every
	// TimeoutMin with a lease of TimeoutMin (etcd's checkQuorum).
	// TimeoutMin, TimeoutMax and the heartbeat must be multiples of it,
	// Granularity and TimerLateness unset. 0 means continuous timers.
	Tick time.Duration
	// RestartTimerOnFollow and StepDownOnVoteTimeout set the election
	// package's RestartTimerOnFollow and StepDownWhenVoteTimedOut (etcd:
	// any higher term restarts a follower's timer; a candidate whose round
	// timed out goes back to pre-vote).
	RestartTimerOnFollow, StepDownOnVoteTimeout bool
	// MaxTime bounds one trial's measured interval in virtual time; a trial
	// that reaches it counts as timed out at MaxTime. 0 means 60s. The
	// latency, disk and timer-noise models must not exceed it (see
	// sim.Typical): a message slower than the whole trial measures
	// nothing.
	MaxTime time.Duration
}

// ErrInvalidConfig is wrapped by the errors of every Validate of this
// package, of Setup.Set and SplitVote.Set, ParseAxis and ParseRange. They
// are *sim.FieldError values whose Err is ErrInvalidConfig.
var ErrInvalidConfig = errors.New("experiment: invalid config")

// fieldErr returns a *sim.FieldError of this package.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// rewrap returns err (a *sim.FieldError of another package) as a field
// error of this package, keeping field, value and reason.
func rewrap(field string, err error) error {
	var fe *sim.FieldError
	if errors.As(err, &fe) {
		f := fe.Field
		if field != "" {
			f = field
		}
		return &sim.FieldError{Field: f, Value: fe.Value, Reason: fe.Reason, Err: ErrInvalidConfig}
	}
	return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
}

// heartbeat returns the effective heartbeat interval.
func (s Setup) heartbeat() time.Duration {
	if s.Heartbeat > 0 {
		return s.Heartbeat
	}
	return s.TimeoutMin / 2
}

// DefaultMaxTime bounds a trial's measured interval in virtual time when
// Setup.MaxTime is 0.
const DefaultMaxTime = 60 * time.Second

// maxTime is the time limit of a trial of s.
func (s Setup) maxTime() time.Duration {
	if s.MaxTime > 0 {
		return s.MaxTime
	}
	return DefaultMaxTime
}

// shortLogsFit reports whether ShortLogs survivors of a failover may miss
// the last log entry: none always fits; otherwise the crashed leader and
// at least one more survivor need full logs.
func (s Setup) shortLogsFit() bool {
	return s.ShortLogs == 0 || (s.ShortLogs > 0 && s.ShortLogs <= s.Nodes-2)
}

// Validate reports the first invalid field of s, or nil: a
// *sim.FieldError wrapping ErrInvalidConfig, whose Field is the Go name
// of the field ("Nodes", "TimeoutMin", "Latency").
func (s Setup) Validate() error {
	switch {
	case s.Nodes < 1 || s.Nodes > sim.MaxNodes:
		return fieldErr("Nodes", s.Nodes, "must be in [1, %d]", sim.MaxNodes)
	case s.TimeoutMin <= 0:
		return fieldErr("TimeoutMin", s.TimeoutMin, "must be positive")
	case s.TimeoutMin < election.MinElectionTimeout:
		return fieldErr("TimeoutMin", s.TimeoutMin, "is below the election package's floor of %v (time.Duration counts nanoseconds: did you forget a unit?)", election.MinElectionTimeout)
	case s.TimeoutMax < s.TimeoutMin:
		return fieldErr("TimeoutMax", s.TimeoutMax, "must not be below the minimum timeout %v", s.TimeoutMin)
	case s.Heartbeat < 0:
		return fieldErr("Heartbeat", s.Heartbeat, "must not be negative (0 means half the minimum timeout)")
	case s.heartbeat() <= 0:
		return fieldErr("TimeoutMin", s.TimeoutMin, "is too small for a heartbeat of half of it")
	case s.heartbeat() < election.MinPeriod:
		return fieldErr("Heartbeat", s.heartbeat(), "is below the election package's floor of %v", election.MinPeriod)
	case s.heartbeat() >= s.TimeoutMin:
		return fieldErr("Heartbeat", s.heartbeat(), "must be below the minimum election timeout %v", s.TimeoutMin)
	case math.IsNaN(s.Loss) || s.Loss < 0 || s.Loss >= 1:
		return fieldErr("Loss", s.Loss, "must be a probability in [0, 1)")
	case !s.shortLogsFit():
		return fieldErr("ShortLogs", s.ShortLogs, "must be in [0, servers-2] (a leader and one more survivor need full logs)")
	case s.Granularity < 0:
		return fieldErr("Granularity", s.Granularity, "must not be negative (0 means continuous)")
	case s.Settle < 0:
		return fieldErr("Settle", s.Settle, "must not be negative (0 means crash right after a heartbeat broadcast)")
	case s.Stickiness > election.StickyUntilTimeout:
		return fieldErr("Stickiness", s.Stickiness, "is not a known mode")
	case s.MaxTime < 0:
		return fieldErr("MaxTime", s.MaxTime, "must not be negative (0 means 60s)")
	case s.CandidateMin < 0 || (s.CandidateMin == 0) != (s.CandidateMax == 0):
		return fieldErr("CandidateMin", RangeLabel(s.CandidateMin, s.CandidateMax), "must be a positive range, or 0 for the election timeout range")
	case s.CandidateMin > 0 && s.CandidateMin < election.MinElectionTimeout:
		return fieldErr("CandidateMin", RangeLabel(s.CandidateMin, s.CandidateMax), "is below the election package's floor of %v", election.MinElectionTimeout)
	case s.CandidateMax < s.CandidateMin:
		return fieldErr("CandidateMax", RangeLabel(s.CandidateMin, s.CandidateMax), "upper bound is below the lower bound")
	case s.Crash < 0 || s.Crash > quorum.Majority(s.Nodes).Spare() && s.Crash > 1:
		return fieldErr("Crash", s.Crash, "must be in [1, %d]: a majority of the %d servers must survive", max(quorum.Majority(s.Nodes).Spare(), 1), s.Nodes)
	case s.ShortLogs > 0 && s.ShortLogs > s.Nodes-max(s.Crash, 1)-1:
		return fieldErr("ShortLogs", s.ShortLogs, "must be at most %d: a survivor with a full log is needed when %d servers crash", s.Nodes-max(s.Crash, 1)-1, max(s.Crash, 1))
	case s.CrashAfterHeartbeat && s.Settle > 0:
		return fieldErr("CrashAfterHeartbeat", s.CrashAfterHeartbeat, "does not apply with Settle (the harness's crash)")
	case s.TimersAtCrash && s.Settle > 0:
		return fieldErr("TimersAtCrash", s.TimersAtCrash, "does not apply with Settle (the harness's crash)")
	case math.IsNaN(s.ClockRate) || s.ClockRate < 0 || s.ClockRate > 0.5:
		return fieldErr("ClockRate", s.ClockRate, "must be in [0, 0.5] (0: every server's timers run at the same rate)")
	case math.IsNaN(s.LatenessSpread) || s.LatenessSpread < 0 || s.LatenessSpread > 1:
		return fieldErr("LatenessSpread", s.LatenessSpread, "must be in [0, 1] (0: every server draws the same lateness)")
	case s.LatenessSpread > 0 && s.TimerLateness == nil:
		return fieldErr("LatenessSpread", s.LatenessSpread, "needs a timer lateness to scale (--lateness)")
	case s.LatenessPerServer && s.LatenessSpread == 0:
		return fieldErr("LatenessPerServer", s.LatenessPerServer, "needs a lateness spread to draw (--lateness-spread)")
	case s.ClockRate > 0 && s.Tick > 0:
		return fieldErr("ClockRate", s.ClockRate, "does not apply with ticks (timeouts are whole ticks)")
	case s.Until > UntilAll:
		return fieldErr("Until", s.Until, "is not a known stopping point")
	}
	if err := s.validateTick(); err != nil {
		return err
	}
	if err := s.Network.Validate(); err != nil {
		return rewrap("", err)
	}
	for _, m := range []struct {
		field string
		l     sim.Latency
	}{{"Latency", s.Latency}, {"Disk", s.Disk}, {"TimerLateness", s.TimerLateness}} {
		if d, ok := typical(m.l); ok && d > s.maxTime() {
			return fieldErr(m.field, m.l, "exceeds the trial's time limit %v", s.maxTime())
		}
	}
	return nil
}

// typical is sim.Typical(l), or false for a nil l or a model whose
// Sample panics (a broken model fails its first trial, reported with the
// trial's seed, rather than Validate).
func typical(l sim.Latency) (d time.Duration, ok bool) {
	if l == nil {
		return 0, false
	}
	defer func() {
		if recover() != nil {
			d, ok = 0, false
		}
	}()
	return sim.Typical(l), true
}

// timeoutJitter returns the election package jitter that draws timeouts
// from [lo, hi) (in multiples of gran, if positive; in whole ticks of a
// per-node grid if tick is positive) plus the timer lateness noise; with
// backoff, the drawn timeout (not the lateness) is doubled for each
// consecutive failed round (State.Consecutive, up to MaxBackoffShift).
func timeoutJitter(lo, hi, gran, tick time.Duration, noise sim.Latency, backoff bool) repeated.Jitter {
	span := hi - lo
	if tick > 0 {
		j := tickJitter(span, tick)
		if !backoff {
			return j
		}
		return repeated.Func(func(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
			d := math.Ldexp(float64(j.Next(base, st, rng)), min(max(st.Consecutive, 0), MaxBackoffShift))
			return time.Duration(min(d, math.MaxInt64/4))
		})
	}
	if gran <= 0 && noise == nil && !backoff {
		if span <= 0 {
			return repeated.None()
		}
		return repeated.UniformExtra(span)
	}
	return repeated.Func(func(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
		d := float64(base)
		if gran > 0 {
			d = math.Round((d+rng.Float64()*float64(span))/float64(gran)) * float64(gran)
		} else if span > 0 {
			d += float64(rng.Int64N(int64(span)))
		}
		if backoff {
			d = math.Ldexp(d, min(max(st.Consecutive, 0), MaxBackoffShift))
		}
		d = min(d, math.MaxInt64/4)
		if noise != nil {
			d += float64(min(noise.Sample(rng), math.MaxInt64/4))
		}
		return time.Duration(d)
	})
}

// Config returns the engine's configuration of a cluster of s drawing
// from rng: the servers, every node's election.Config (timeouts, jitter,
// heartbeat and options of s) and the network. Observers, tracing and a
// context are the caller's to add.
func (s Setup) Config(rng *rand.Rand) sim.Config {
	c := sim.Config{Nodes: s.Nodes, Election: s.electionConfig(), Network: s.Network, Rand: rng}
	var hooks []func(election.ID, *election.Config)
	if s.LatenessSpread > 0 {
		hooks = append(hooks, latenessScales(s, rng))
	}
	if s.ClockRate > 0 {
		hooks = append(hooks, clockRates(s.Nodes, s.ClockRate, rng))
	}
	if len(hooks) > 0 {
		c.PerNode = func(id election.ID, ec *election.Config) {
			for _, h := range hooks {
				h(id, ec)
			}
		}
	}
	return c
}

// clusterConfig is the cluster of one trial of s: every event goes to the
// tracker and, if tracing, to the trace, then to then (which may be nil).
func (s Setup) clusterConfig(ctx context.Context, rng *rand.Rand, trace func(string), tr *tracker, then func(election.Event)) sim.Config {
	c := s.Config(rng)
	c.Context = ctx
	c.Trace = tracerFor(trace)
	c.Observer = func(e election.Event) {
		tr.observe(e)
		if trace != nil && e.Type != election.EventIgnored {
			trace(sim.FormatEvent(e.At, e.Node, sim.EventText(e)))
		}
		if then != nil {
			then(e)
		}
	}
	return c
}

// electionConfig returns the election.Config template for s.
func (s Setup) electionConfig() election.Config {
	ec := election.DefaultConfig()
	s.setTimeouts(&ec, s.TimerLateness)
	ec.HeartbeatInterval = s.heartbeat()
	ec.StepDownInterval = 0
	ec.PreVote = s.PreVote
	ec.CheckQuorum = s.CheckQuorum
	ec.LeaderStickiness = s.LeaderStickiness
	ec.Stickiness = s.Stickiness
	ec.Detection = s.Detection
	ec.Emulate.WaitForVoteTimeout = s.CandidatesWait
	ec.Emulate.KeepTimerOnStepDown = s.KeepTimer
	ec.Emulate.HeartbeatPerPeer = s.HeartbeatPerPeer
	ec.Emulate.GrantOnlyAsFollower = s.GrantOnlyAsFollower
	ec.Emulate.BackoffOnRejections = s.BackoffOnRejections
	if s.HeartbeatJitter {
		ec.HeartbeatJitter = repeated.Proportional(1)
	}
	s.tickConfig(&ec)
	return ec
}

// setTimeouts sets the election and vote timeouts of ec and their
// jitter, with lateness as the timer lateness.
func (s Setup) setTimeouts(ec *election.Config, lateness sim.Latency) {
	ec.ElectionTimeout = s.TimeoutMin
	ec.ElectionJitter = timeoutJitter(s.TimeoutMin, s.TimeoutMax, s.Granularity, s.Tick, lateness, false)
	ec.VoteTimeout = s.TimeoutMin
	ec.VoteJitter = ec.ElectionJitter
	if s.CandidateMin > 0 || s.CandidateBackoff {
		lo, hi := s.TimeoutMin, s.TimeoutMax
		if s.CandidateMin > 0 {
			lo, hi = s.CandidateMin, s.CandidateMax
		}
		ec.VoteTimeout = lo
		ec.VoteJitter = timeoutJitter(lo, hi, s.Granularity, s.Tick, lateness, s.CandidateBackoff)
	}
}

// result returns the description of an experiment on s: its name, the
// range label, and s with the heartbeat made explicit.
func (s Setup) result(experiment string) Result {
	r := Result{Experiment: experiment, Label: RangeLabel(s.TimeoutMin, s.TimeoutMax), Setup: s, Alive: s.Nodes}
	r.Setup.Heartbeat = s.heartbeat()
	return r
}

// setupLimit bounds the setup phase of a trial (electing the first
// leader): 100 times TimeoutMin+TimeoutMax, saturating.
func (s Setup) setupLimit() time.Duration {
	return time.Duration(min(100*(float64(s.TimeoutMin)+float64(s.TimeoutMax)), math.MaxInt64/2))
}

// Describe returns a one-line description of the model for text output,
// e.g. "5 servers, latency normal:250µs,50µs, disk ...; writes block the
// server, ...".
func (s Setup) Describe() string {
	str := func(l sim.Latency) string {
		if l == nil {
			return "none"
		}
		return l.String()
	}
	var extra []string
	if s.DiskBlocks {
		extra = append(extra, "writes block the server")
	}
	if s.LeaderWrite {
		switch w := max(s.LeaderWrites, 1); w {
		case 1:
			extra = append(extra, "new leader writes before its first heartbeat")
		default:
			extra = append(extra, fmt.Sprintf("new leader writes %d times before its first heartbeat", w))
		}
	}
	if s.TimersWait && s.DiskBlocks {
		extra = append(extra, "timers wait for the write")
	}
	if s.RearmAfterTermWrite {
		extra = append(extra, "a grant at a new term re-arms after the term write")
	}
	if s.CandidatesWait {
		extra = append(extra, "candidates wait for their timeout")
	}
	if s.KeepTimer {
		extra = append(extra, "keep their deadline when deposed")
	}
	if s.Granularity > 0 {
		if s.Granularity == time.Millisecond {
			extra = append(extra, "timeouts in whole milliseconds")
		} else {
			extra = append(extra, fmt.Sprintf("timeouts in multiples of %v", s.Granularity))
		}
	}
	if s.Detection == election.CheckLastContact {
		extra = append(extra, "last-contact detection")
	}
	if s.Stickiness == election.StickyUntilTimeout && (s.LeaderStickiness || s.PreVote) {
		extra = append(extra, "(pre-)votes refused while a leader is known")
	}
	if s.HeartbeatPerPeer || s.HeartbeatJitter {
		hb := "heartbeats"
		if s.HeartbeatPerPeer {
			hb = "per-follower heartbeats"
		}
		if s.HeartbeatJitter {
			hb += " every [hb, 2hb)"
		}
		extra = append(extra, hb)
	}
	if s.Tick > 0 {
		extra = append(extra, fmt.Sprintf("ticks of %v (heartbeat %d, election %d ticks)", s.Tick, s.heartbeat()/s.Tick, s.TimeoutMin/s.Tick))
	}
	if s.Settle > 0 {
		extra = append(extra, fmt.Sprintf("crash %v-%v after the leader is known (harness)", s.Settle, s.Settle+s.TimeoutMin/5))
	}
	if s.LatenessSpread > 0 {
		per := "trial"
		if s.LatenessPerServer {
			per = "server"
		}
		extra = append(extra, fmt.Sprintf("lateness scaled by U[%g, %g] per %s", 1-s.LatenessSpread, 1+s.LatenessSpread, per))
	}
	if s.CancelBackoff > 0 {
		extra = append(extra, fmt.Sprintf("a role or term change cancels unanswered requests (%v backoff)", s.CancelBackoff))
	}
	if s.SendGap != nil {
		extra = append(extra, "a server's requests leave "+s.SendGap.String()+" apart")
	}
	extra = append(extra, s.describeVariants()...)
	line := fmt.Sprintf("%d servers, latency %s, disk %s, timer lateness %s", s.Nodes, str(s.Latency), str(s.Disk), str(s.TimerLateness))
	if s.Loss > 0 || s.Duplicate > 0 {
		line += fmt.Sprintf(", loss %g, dup %g", s.Loss, s.Duplicate)
	}
	if len(extra) > 0 {
		line += "; " + strings.Join(extra, ", ")
	}
	return line
}

// RangeLabel formats a timeout range as the paper labels it, e.g.
// "150-155ms" or "12-24ms" (units from the larger bound).
func RangeLabel(lo, hi time.Duration) string {
	if lo%time.Millisecond == 0 && hi%time.Millisecond == 0 {
		return fmt.Sprintf("%d-%dms", lo/time.Millisecond, hi/time.Millisecond)
	}
	return lo.String() + "-" + hi.String()
}

// ParseRange parses a timeout range: "150ms-300ms", "150-300ms" or
// "150ms-300" (a unit given once applies to both bounds), or a single
// duration "150ms" (no randomness). A number without any unit is refused
// as such. Errors are *sim.FieldError values (Value: the text) wrapping
// ErrInvalidConfig.
func ParseRange(s string) (lo, hi time.Duration, err error) {
	bad := func(format string, args ...any) error { return fieldErr("", s, format, args...) }
	a, b, ok := cutRange(s)
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			if isNumber(s) {
				return 0, 0, bad("has no unit (want e.g. %sms)", s)
			}
			return 0, 0, bad("is not a duration or a range (want e.g. 150ms or 150ms-300ms)")
		}
		if d <= 0 {
			return 0, 0, bad("timeout must be positive")
		}
		return d, d, nil
	}
	if isNumber(a) && isNumber(b) {
		return 0, 0, bad("has no unit (want e.g. %s-%sms)", a, b)
	}
	// A bound without a unit borrows the other's: "150-300ms", "150ms-300".
	if isNumber(b) {
		b += unitOf(a)
	}
	if isNumber(a) {
		a += unitOf(b)
	}
	hi, err = time.ParseDuration(b)
	if err != nil {
		return 0, 0, bad("upper bound %q is not a duration", b)
	}
	lo, err = time.ParseDuration(a)
	if err != nil {
		return 0, 0, bad("lower bound %q is not a duration", a)
	}
	if lo <= 0 {
		return 0, 0, bad("lower bound must be positive")
	}
	if hi < lo {
		return 0, 0, bad("upper bound %v is below lower bound %v", hi, lo)
	}
	return lo, hi, nil
}

// unitOf returns the unit of a duration of one unit ("ms" of "150ms"),
// or "" if it has none or several ("1m30s").
func unitOf(s string) string {
	u := trimNumber(s)
	if strings.ContainsAny(u, "0123456789.") {
		return ""
	}
	return u
}

// isNumber reports whether s is a number with no unit, such as "150" or
// "1.5".
func isNumber(s string) bool {
	return s != "" && trimNumber(s) == "" && s != "."
}

// cutRange splits "a-b" at the dash between the bounds (not a leading sign).
func cutRange(s string) (a, b string, ok bool) {
	for i := 1; i < len(s); i++ {
		if s[i] == '-' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

func trimNumber(s string) string {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[i:]
}
