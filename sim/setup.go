package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// Setup describes a simulated cluster for the failover and bootstrap
// experiments (and sweeps over them).
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
	// (election.Config.HeartbeatPerPeer), as hashicorp/raft runs one
	// heartbeat goroutine per follower.
	HeartbeatPerPeer bool
	// Latency is the one-way message delay; nil means none.
	Latency Latency
	// Disk is the time to persist term and vote; responses wait for it
	// (see Network.Disk). nil means instantaneous.
	Disk Latency
	// DiskBlocks makes a disk write block its server (see
	// Network.DiskBlocks).
	DiskBlocks bool
	// GroupCommit merges a server's writes of one instant (see
	// Network.GroupCommit).
	GroupCommit bool
	// LeaderWrite: a new leader writes a no-op entry before its first
	// heartbeat (see Network.LeaderWrite).
	LeaderWrite bool
	// CandidatesWait: candidates ignore rejections and wait for their vote
	// timeout, as the Raft paper's, LogCabin's and hashicorp/raft's do
	// (election.Config.WaitForVoteTimeout). Otherwise a candidate steps
	// down as soon as a majority rejected it (etcd).
	CandidatesWait bool
	// KeepTimer: a candidate that steps down keeps its round's deadline
	// for its election timer, as LogCabin's single timer does
	// (election.Config.KeepTimerOnStepDown). Otherwise it draws a fresh
	// timeout (etcd, hashicorp/raft).
	KeepTimer bool
	// Granularity, if positive, rounds every drawn timeout to a multiple
	// of it before TimerNoise is added: LogCabin, the paper's
	// implementation, draws timeouts in whole milliseconds
	// (lround(uniform(min, max)) ms), so narrow ranges produce exact ties.
	// 0 means continuous (nanosecond) timeouts.
	Granularity time.Duration
	// TimerNoise is added to every election and vote timeout: how late a
	// real server acts on a timer (OS scheduling, the time between taking
	// the timeout decision and re-arming the timer). nil means none.
	TimerNoise Latency
	// Loss and Duplicate are per-message probabilities, in [0, 1].
	Loss, Duplicate float64
	// PreVote, CheckQuorum and LeaderStickiness enable the election
	// package's options.
	PreVote, CheckQuorum, LeaderStickiness bool
	// Stickiness is how long a follower stays loyal to a known leader
	// (election.Config.Stickiness): the zero value StickyByContact, or
	// StickyUntilTimeout (hashicorp/raft).
	Stickiness election.StickinessMode
	// ShortLogs is the number of surviving servers whose logs are shorter
	// than the others', so they cannot win (failover only); in
	// [0, Nodes-2]. The paper uses 2 of the 4 survivors.
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
	// MaxTime bounds one trial's measured interval in virtual time; a trial
	// that reaches it counts as timed out at MaxTime. 0 means 60s.
	MaxTime time.Duration
}

// ErrBadSetup is wrapped by Setup.Validate errors.
var ErrBadSetup = errors.New("sim: bad setup")

// heartbeat returns the effective heartbeat interval.
func (s Setup) heartbeat() time.Duration {
	if s.Heartbeat > 0 {
		return s.Heartbeat
	}
	return s.TimeoutMin / 2
}

func (s Setup) maxTime() time.Duration {
	if s.MaxTime > 0 {
		return s.MaxTime
	}
	return 60 * time.Second
}

// Validate reports the first invalid field of s, or nil.
func (s Setup) Validate() error {
	switch {
	case s.Nodes < 1 || s.Nodes > 1000:
		return fmt.Errorf("%w: Setup.Nodes (%d) must be in [1, 1000]", ErrBadSetup, s.Nodes)
	case s.TimeoutMin <= 0:
		return fmt.Errorf("%w: Setup.TimeoutMin (%v) must be positive", ErrBadSetup, s.TimeoutMin)
	case s.TimeoutMax < s.TimeoutMin:
		return fmt.Errorf("%w: Setup.TimeoutMax (%v) must not be below TimeoutMin (%v)", ErrBadSetup, s.TimeoutMax, s.TimeoutMin)
	case s.Heartbeat < 0:
		return fmt.Errorf("%w: Setup.Heartbeat (%v) must not be negative (0 means TimeoutMin/2)", ErrBadSetup, s.Heartbeat)
	case s.heartbeat() <= 0:
		return fmt.Errorf("%w: Setup.Heartbeat defaults to TimeoutMin/2, which is 0 for TimeoutMin %v", ErrBadSetup, s.TimeoutMin)
	case s.heartbeat() >= s.TimeoutMin:
		return fmt.Errorf("%w: Setup.Heartbeat (%v) must be below TimeoutMin (%v)", ErrBadSetup, s.heartbeat(), s.TimeoutMin)
	case math.IsNaN(s.Loss) || s.Loss < 0 || s.Loss >= 1:
		return fmt.Errorf("%w: Setup.Loss (%v) must be in [0, 1)", ErrBadSetup, s.Loss)
	case math.IsNaN(s.Duplicate) || s.Duplicate < 0 || s.Duplicate > 1:
		return fmt.Errorf("%w: Setup.Duplicate (%v) must be in [0, 1]", ErrBadSetup, s.Duplicate)
	case s.ShortLogs < 0 || (s.ShortLogs > 0 && s.ShortLogs > s.Nodes-2):
		return fmt.Errorf("%w: Setup.ShortLogs (%d) must be in [0, Nodes-2] (a leader and one more survivor need full logs)", ErrBadSetup, s.ShortLogs)
	case s.Granularity < 0:
		return fmt.Errorf("%w: Setup.Granularity (%v) must not be negative (0 means continuous)", ErrBadSetup, s.Granularity)
	case s.Settle < 0:
		return fmt.Errorf("%w: Setup.Settle (%v) must not be negative (0 means crash right after a heartbeat broadcast)", ErrBadSetup, s.Settle)
	case s.Stickiness > election.StickyUntilTimeout:
		return fmt.Errorf("%w: Setup.Stickiness (%v) is not a known mode", ErrBadSetup, s.Stickiness)
	case s.MaxTime < 0:
		return fmt.Errorf("%w: Setup.MaxTime (%v) must not be negative (0 means 60s)", ErrBadSetup, s.MaxTime)
	}
	return nil
}

// timeoutJitter returns the election package jitter that draws timeouts
// from [min, max) plus the timer noise.
func timeoutJitter(lo, hi, gran time.Duration, noise Latency) repeated.Jitter {
	span := hi - lo
	if gran > 0 {
		return repeated.Func(func(base time.Duration, _ repeated.State, rng *rand.Rand) time.Duration {
			d := float64(base) + rng.Float64()*float64(span)
			d = math.Round(d/float64(gran)) * float64(gran)
			if noise != nil {
				d += float64(noise.Sample(rng))
			}
			return time.Duration(d)
		})
	}
	if noise == nil {
		if span <= 0 {
			return repeated.None()
		}
		return repeated.UniformExtra(span)
	}
	return repeated.Func(func(base time.Duration, _ repeated.State, rng *rand.Rand) time.Duration {
		d := base
		if span > 0 {
			d += time.Duration(rng.Int64N(int64(span)))
		}
		return d + noise.Sample(rng)
	})
}

// electionConfig returns the election.Config template for s.
// clusterConfig is the cluster of one trial of s: every event goes to the
// tracker and, if tracing, to the trace, then to then (which may be nil).
func (s Setup) clusterConfig(rng *rand.Rand, trace func(string), tr *tracker, then func(election.Event)) ClusterConfig {
	return ClusterConfig{
		Nodes:    s.Nodes,
		Election: s.electionConfig(),
		Network:  s.network(),
		Rand:     rng,
		Trace:    tracerFor(trace),
		Observer: func(e election.Event) {
			tr.observe(e)
			if trace != nil && e.Type != election.EventIgnored {
				trace(FormatEvent(e.At, e.Node, eventText(e)))
			}
			if then != nil {
				then(e)
			}
		},
	}
}

func (s Setup) electionConfig() election.Config {
	ec := election.DefaultConfig()
	ec.ElectionTimeout = s.TimeoutMin
	ec.ElectionJitter = timeoutJitter(s.TimeoutMin, s.TimeoutMax, s.Granularity, s.TimerNoise)
	ec.VoteTimeout = s.TimeoutMin
	ec.VoteJitter = ec.ElectionJitter
	ec.HeartbeatInterval = s.heartbeat()
	ec.StepDownInterval = 0
	ec.PreVote = s.PreVote
	ec.CheckQuorum = s.CheckQuorum
	ec.LeaderStickiness = s.LeaderStickiness
	ec.Stickiness = s.Stickiness
	ec.Detection = s.Detection
	ec.WaitForVoteTimeout = s.CandidatesWait
	ec.KeepTimerOnStepDown = s.KeepTimer
	ec.HeartbeatPerPeer = s.HeartbeatPerPeer
	if s.HeartbeatJitter {
		ec.HeartbeatJitter = repeated.Proportional(1)
	}
	return ec
}

func (s Setup) network() Network {
	return Network{Latency: s.Latency, Disk: s.Disk, DiskBlocks: s.DiskBlocks, LeaderWrite: s.LeaderWrite, GroupCommit: s.GroupCommit, Loss: s.Loss, Duplicate: s.Duplicate}
}

func (s Setup) params(experiment string) Params {
	p := Params{
		Experiment:  experiment,
		Label:       RangeLabel(s.TimeoutMin, s.TimeoutMax),
		Nodes:       s.Nodes,
		Alive:       s.Nodes,
		TimeoutMin:  s.TimeoutMin,
		TimeoutMax:  s.TimeoutMax,
		Heartbeat:   s.heartbeat(),
		Loss:        s.Loss,
		PreVote:     s.PreVote,
		CheckQuorum: s.CheckQuorum,
	}
	if experiment == "failover" {
		p.Alive = s.Nodes - 1
	}
	if s.Latency != nil {
		p.Latency = s.Latency.String()
	}
	if s.Disk != nil {
		p.Disk = s.Disk.String()
	}
	return p
}

// RangeLabel formats a timeout range as the paper labels it, e.g.
// "150-155ms" or "12-24ms" (units from the larger bound).
func RangeLabel(lo, hi time.Duration) string {
	if lo%time.Millisecond == 0 && hi%time.Millisecond == 0 {
		return fmt.Sprintf("%d-%dms", lo/time.Millisecond, hi/time.Millisecond)
	}
	return lo.String() + "-" + hi.String()
}

// ParseRange parses a timeout range: "150ms-300ms", "150-300ms" (unit
// given once), or a single duration "150ms" (no randomness).
func ParseRange(s string) (lo, hi time.Duration, err error) {
	a, b, ok := cutRange(s)
	if !ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, 0, fmt.Errorf("%q is not a range (want e.g. 150ms-300ms)", s)
		}
		if d <= 0 {
			return 0, 0, fmt.Errorf("%q: timeout must be positive", s)
		}
		return d, d, nil
	}
	hi, err = time.ParseDuration(b)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: upper bound %q is not a duration", s, b)
	}
	lo, err = time.ParseDuration(a)
	if err != nil {
		// "150-300ms": borrow the unit of the upper bound.
		unit := trimNumber(b)
		if lo, err = time.ParseDuration(a + unit); err != nil || unit == "" {
			return 0, 0, fmt.Errorf("%q: lower bound %q is not a duration", s, a)
		}
	}
	if lo <= 0 {
		return 0, 0, fmt.Errorf("%q: lower bound must be positive", s)
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("%q: upper bound %v is below lower bound %v", s, hi, lo)
	}
	return lo, hi, nil
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
