package election

import "time"

// Emulation holds the settings of Config.Emulate: for simulators
// imitating other implementations of Raft (LogCabin and the Raft paper's,
// etcd raft, hashicorp/raft, SOFAJRaft, ocaml-raft), so that their
// election timing can be measured on this package's nodes. Production code
// leaves it zero: the zero Emulation is the package's own behaviour, the
// one it recommends, and a real program has no ticks to count or shared
// server lock to model.
//
// The settings change when nodes campaign and time out, and whom a
// deposed node votes for; none changes the rules that keep one leader
// per term.
type Emulation struct {
	// ServerLock, if set, models a server whose message handlers and
	// timers share one lock held through disk writes (see ServerLock).
	ServerLock ServerLock

	// Tick, if positive, drives every timer of the node by a ticker of
	// this period, as etcd raft's nodes are driven by Tick calls: the
	// ticks come at the instants Phase + k*Tick (Phase drawn uniformly
	// from [0, Tick) from Config.Rand in NewNode), a delay d is counted as
	// ceil(d/Tick) ticks, and a timer armed at t fires on that many-th
	// tick after t. So a follower whose timeout is T ticks fires between
	// T-1 and T ticks after its last contact, depending on the phase. The
	// contact checks (pre-vote and vote stickiness, CheckLastContact)
	// count ticks the same way: a leader heard from at t is alive while
	// fewer than ceil(ElectionTimeout/Tick) ticks have passed since t.
	// >= 0; 0 means continuous timers. See tick.go.
	Tick time.Duration
	// RestartTimerOnFollow restarts the election timer with a fresh
	// timeout whenever the node becomes a follower or adopts a higher
	// term, as etcd raft's becomeFollower (through reset) does: a follower
	// that steps any message of a higher term, even a vote request it
	// then rejects, and a pre-candidate that lost its pre-vote. Without
	// it (the Raft paper) a follower re-arms its timer only on a
	// heartbeat or a granted vote, and a pre-candidate's timer runs on.
	RestartTimerOnFollow bool
	// HeartbeatPerPeer gives the leader one heartbeat timer per peer, each
	// drawing its own periods from Config.HeartbeatJitter, instead of one
	// timer that heartbeats every peer at once, as hashicorp/raft runs one
	// heartbeat goroutine per follower. On winning, the leader still
	// heartbeats every peer at once and then arms every peer's timer.
	// Without jitter it only costs timers. It cannot be combined with
	// Config.ExternalHeartbeat.
	HeartbeatPerPeer bool

	// WaitForVoteTimeout makes a candidate ignore vote rejections: it
	// stays a candidate until it wins, hears from a leader or of a higher
	// term, or its vote timer fires. This is the Raft paper's candidate,
	// LogCabin's and hashicorp/raft's. Without it a candidate steps down
	// (and re-arms its election timer) as soon as a majority rejected it,
	// as etcd does, which re-synchronizes the candidates of a split vote at
	// the instant the rejections arrive. Rejections are still counted in
	// the round's tally and reported. Pre-candidates are not affected: one
	// that lost its pre-vote becomes a follower, but its election timer
	// runs on unchanged either way.
	WaitForVoteTimeout bool
	// StepDownWhenVoteTimedOut makes a candidate whose round timed out step
	// down to follower before its next round (a pre-vote with
	// Config.PreVote, a new term without), as SOFAJRaft's
	// stepDownWhenVoteTimedout: it adds the step-down event and the
	// follower's fresh election timeout.
	StepDownWhenVoteTimedOut bool
	// KeepTimerOnStepDown makes a candidate that steps down to follower
	// (on a higher term, a lost election, or a new leader) keep the
	// deadline of its running vote timer: the follower's election timer
	// fires at that very instant (exactly, on a virtual wheel, or 1ns
	// later if it is the instant of the step-down itself; never earlier on
	// a real-time wheel), then runs on with fresh ElectionJitter periods.
	// Anything that re-arms a follower's timer (a heartbeat, a granted
	// vote) still does. This is LogCabin's single election timer, which
	// RaftConsensus::stepDown leaves alone. Without it, as in etcd and
	// hashicorp/raft, a candidate that steps down draws a fresh election
	// timeout, so candidates deposed by the same higher-term request time
	// out again together. A leader that steps down has no running timer
	// and always gets a fresh one; a pre-candidate's election timer is
	// never re-armed by a step-down; a step-down inside the vote timer's
	// own trigger (StepDownWhenVoteTimedOut) has no pending deadline and
	// gets a fresh timeout.
	KeepTimerOnStepDown bool
	// BackoffOnRejections changes what Config.VoteJitter's
	// State.Consecutive counts, as ocaml-raft's candidate backoff does: a
	// new round counts only if at least half of the other servers
	// rejected the previous one, and the count restarts whenever the node
	// steps down (a higher term, a leader) or wins. Without it every round
	// counts until the node knows a leader.
	BackoffOnRejections bool

	// GrantOnlyAsFollower makes a candidate or leader that a vote request
	// of a higher term deposes refuse that request: it adopts the term and
	// votes for nobody in it; only a server that was a follower already
	// grants. This is the rule of Howard et al.'s ocaml-raft simulator
	// (its requestVoteRq grants only if the mode before the step-down was
	// Follower). Without it the deposed server grants as any follower
	// would, as the Raft paper's does.
	GrantOnlyAsFollower bool
}

// validate reports the first invalid setting of e, named by its path
// from Config (e.g. "Emulate.Tick").
func (e *Emulation) validate() error {
	if e.Tick < 0 {
		return fieldErr("Emulate.Tick", e.Tick, "must not be negative (0 means continuous timers)")
	}
	return nil
}
