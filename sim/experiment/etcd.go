package experiment

import (
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// EtcdModel returns a setup with the election timing of go.etcd.io/raft/v3
// (v3.6/v3.7) under etcd's server defaults, to compare with real etcd raft
// nodes (sim/engines/etcd, on etcdadapter). Each rule follows a function
// of etcd's raft.go:
//
//   - every node is driven by a ticker (Tick 100ms, etcd's
//     --heartbeat-interval) with its own phase, and counts timeouts in
//     ticks: tickElection and tickHeartbeat increment counters that
//     reset() and the message handlers zero, so a follower whose timeout
//     is T ticks fires between T-1 and T ticks after its last contact
//     (election.Config.Emulate.Tick);
//   - T is drawn in whole ticks from [ElectionTick, 2 ElectionTick)
//     (resetRandomizedElectionTimeout), ElectionTick 10 (1s, etcd's
//     --election-timeout), and re-drawn on becoming follower, candidate or
//     leader (becomeFollower, becomeCandidate, becomeLeader call reset);
//   - a node that steps a message of a higher term becomes follower in it
//     (Step: becomeFollower), restarting its timer, even for a vote
//     request it then rejects, and a pre-candidate whose pre-vote a
//     majority rejected becomes follower with a fresh timer
//     (stepCandidate) (election.Config.Emulate.RestartTimerOnFollow);
//   - pre-vote on (etcd's default); CheckQuorum on, as etcd's server
//     always sets it: nodes ignore (pre-)votes while they heard from their
//     leader within ElectionTick ticks (Step's inLease; here
//     LeaderStickiness with StickyByContact, counted in ticks), and the
//     leader checks its quorum every ElectionTick ticks (tickHeartbeat);
//   - a candidate steps down at once when a majority rejected it
//     (stepCandidate, poll), and one whose round timed out campaigns again
//     through pre-vote (tickElection sends MsgHup: campaign with
//     campaignPreElection) (StepDownOnVoteTimeout);
//   - a new leader sends an append at once (becomeLeader appends an empty
//     entry, bcastAppend), then heartbeats every HeartbeatTick (1) ticks;
//   - no disk delay and no latency (etcdadapter's defaults).
//
// Model.Timing keeps these rules for another timeout: T means [T, 2T)
// with a tick of a tenth of T unless a heartbeat is given, the heartbeat
// being one tick as in etcd's server.
func EtcdModel() Setup {
	return Setup{
		Nodes:                 5,
		TimeoutMin:            time.Second,
		TimeoutMax:            2 * time.Second,
		Heartbeat:             100 * time.Millisecond,
		Tick:                  100 * time.Millisecond,
		PreVote:               true,
		CheckQuorum:           true,
		LeaderStickiness:      true,
		RestartTimerOnFollow:  true,
		StepDownOnVoteTimeout: true,
		ShortLogs:             2,
	}
}

// doubleRange applies the rule of the models whose implementation draws
// timeouts from [T, 2T) (hashicorp, etcd): lo == hi means T, so hi
// becomes 2T; another range is refused; a heartbeat of 0 means T/10.
func doubleRange(model string, lo, hi, heartbeat time.Duration) (time.Duration, time.Duration, error) {
	switch {
	case hi == lo:
		hi = 2 * lo
	case hi != 2*lo:
		return hi, heartbeat, fieldErr("TimeoutMax", RangeLabel(lo, hi), "the %s model draws timeouts from [T, 2T): give T or T-2T", model)
	}
	if heartbeat == 0 {
		heartbeat = lo / 10
	}
	return hi, heartbeat, nil
}

// validateTick checks the fields that must agree with Tick.
func (s Setup) validateTick() error {
	t := s.Tick
	switch {
	case t < 0:
		return fieldErr("Tick", t, "must not be negative (0 means continuous timers)")
	case t == 0:
		return nil
	case s.TimeoutMin%t != 0:
		return fieldErr("TimeoutMin", s.TimeoutMin, "must be a whole number of ticks of %v", t)
	case s.TimeoutMax%t != 0 || s.TimeoutMax == s.TimeoutMin:
		return fieldErr("TimeoutMax", s.TimeoutMax, "must be a whole number of ticks of %v above the minimum", t)
	case s.heartbeat()%t != 0:
		return fieldErr("Heartbeat", s.heartbeat(), "must be a whole number of ticks of %v", t)
	case s.Granularity != 0:
		return fieldErr("Granularity", s.Granularity, "must be 0 with ticks (timeouts are whole ticks)")
	case s.TimerLateness != nil:
		return fieldErr("TimerLateness", s.TimerLateness, "must be none with ticks")
	}
	return nil
}

// tickJitter draws base + k*tick, k uniform in [0, span/tick): etcd's
// electiontimeout + rand(electiontimeout) in ticks.
func tickJitter(span, tick time.Duration) repeated.Jitter {
	n := int64(span / tick)
	return repeated.Func(func(base time.Duration, _ repeated.State, rng *rand.Rand) time.Duration {
		return base + time.Duration(rng.Int64N(n))*tick
	})
}

// tickConfig sets the election options of a ticked setup.
func (s Setup) tickConfig(ec *election.Config) {
	ec.Emulate.RestartTimerOnFollow = s.RestartTimerOnFollow
	ec.Emulate.StepDownWhenVoteTimedOut = s.StepDownOnVoteTimeout
	if s.Tick <= 0 {
		return
	}
	ec.Emulate.Tick = s.Tick
	ec.StepDownInterval, ec.LeaseRatio = s.TimeoutMin, 1
}
