// Package election implements Raft leader election (Ongaro & Ousterhout,
// 2014) as a library: one Node per member of a group, driven by inbound
// messages (Step) and by timers on a shared wheel.Wheel.
//
//	cfg := election.DefaultConfig() // ElectionTimeout 1s; derived timeouts follow it
//	cfg.ID, cfg.Voters = 1, []election.ID{1, 2, 3}
//	n, err := election.NewNode(cfg, wheel.Shared(), transport, election.NewMemoryStorage(), election.StaticLog{})
//	err = n.Start() // then hand every inbound Message to n.Step
//	leader, err := n.WaitLeader(ctx)
//
// Your transport implements Transport (see Example_customTransport); a
// simulated cluster runs on wheel.NewVirtual and MemNetwork (see Example).
// There is no log replication; a small LogView (last index and term) lets
// votes follow Raft's up-to-date rule, and heartbeats stand in for
// AppendEntries. To put a replicated log beside it, see "Embedding in a
// full Raft" below.
//
// # Roles
//
// A Node is a Follower, a PreCandidate (only with Config.PreVote), a
// Candidate or the Leader. Terms only grow. A node grants one vote per term,
// to a candidate whose log is at least as up to date as its own, and
// persists the term and vote through a Storage before any reply (or its own
// vote requests) leave. Any message with a higher term turns the receiver
// into a follower of that term, except pre-vote requests and granted
// pre-vote answers, which never change a term.
//
// # Timers
//
// Every timer is a repeated.Timer on the one wheel passed to NewNode:
//
//   - election (followers, pre-candidates): ElectionTimeout randomized by
//     ElectionJitter, [ET, 2ET) by default. When it fires the node runs a
//     pre-vote (PreVote) or campaigns in a new term.
//   - vote (candidates): VoteTimeout randomized by VoteJitter. When it fires
//     the candidate starts its next round: with PreVote a pre-vote,
//     otherwise the next term with a fresh random timeout; with
//     Emulate.StepDownWhenVoteTimedOut it steps down to follower first. A
//     candidate that steps down gets a fresh election timeout, or, with
//     Emulate.KeepTimerOnStepDown, keeps its round's deadline (LogCabin).
//   - heartbeat (leader): a heartbeat to every voter right after winning,
//     then every HeartbeatInterval randomized by HeartbeatJitter, on one
//     timer for all peers or, with Emulate.HeartbeatPerPeer, one per peer
//     (hashicorp/raft).
//   - step-down (leader, with CheckQuorum): every StepDownInterval (ET/2)
//     the leader counts the voters that answered a heartbeat within the
//     lease (ET*LeaseRatio), or that have had no heartbeat unanswered for
//     a HeartbeatInterval, and steps down without a quorum. A voter that
//     answered every heartbeat sent to it is not counted against the
//     leader, however old its last answer: when the leader's heartbeats
//     ran late (its process or the wheel's driver stalled), the step-down
//     check that runs first would otherwise find every answer old and
//     depose a leader that nobody else doubts. The lease itself
//     (QuorumContact) counts only heartbeats sent within it and
//     answered (Message.Sent), so nothing that relies on it is weakened; a cut-off leader still steps
//     down once its heartbeats go unanswered.
//   - snapshot (every role, optional): calls OnSnapshot every
//     SnapshotInterval, the first period in [T/2, T).
//
// # Modes and options
//
// Detection chooses how a follower notices a dead leader: ResetOnHeartbeat
// (the Raft paper, etcd) re-arms the election timer with a fresh random
// timeout on each accepted heartbeat and granted vote; CheckLastContact
// (SOFAJRaft, hashicorp/raft) lets it run freely and campaigns only if the
// last contact is older than ElectionTimeout.
//
// PreVote (thesis section 9.6) makes a node ask first whether it could win;
// nodes refuse while a leader is alive, so a node rejoining after a
// partition cannot disrupt a healthy group. A candidate whose round timed
// out runs a pre-vote again before its next term (as etcd's does), so a
// candidate cut off from the group does not raise its term at every vote
// timeout. CheckQuorum makes a leader that lost its majority step down.
// LeaderStickiness, and CheckQuorum too (as etcd's does; see The leader
// lease), make nodes ignore vote requests while a leader is alive.
// Stickiness says what "alive" means: heard from within ElectionTimeout
// (StickyByContact), or known until the node's own timer finds it silent
// (StickyUntilTimeout, hashicorp/raft); either way a node that heard a
// leader stays loyal for ElectionTimeout after it.
//
// TransferLeadership hands leadership over with MsgTimeoutNow, bypassing
// pre-vote and stickiness. Priority election (SOFAJRaft) makes nodes below
// the target priority skip election timeouts, the target decaying every
// second skip while no leader shows up.
//
// # The leader lease
//
// With CheckQuorum or LeaderStickiness a leader holds a lease
// (Node.QuorumContact) while a quorum answered heartbeats it sent within
// ElectionTimeout*LeaseRatio: no other node can lead a later term until it
// ends, so reads may be served by the leader alone (thesis section
// 6.4.1). Every voter keeps the promise it rests on: for ElectionTimeout
// after hearing a leader, or after starting in a term above 0, it grants
// no vote (other than for a leadership transfer) and starts no term of its
// own, even after adopting a higher term from an answer; Campaign without
// PreVote returns ErrLeaderAlive then. This is etcd's rule: its
// CheckQuorum ignores votes "in lease", and its lease-based reads require
// CheckQuorum. PreVote alone does not make the lease sound (a voter that
// granted a pre-vote may hear the leader before the vote request
// arrives), so without CheckQuorum and LeaderStickiness no lease is
// offered. A leader that starts a transfer gives its lease up for the
// rest of its term. The lease needs every voter to run one of the two
// options and clocks whose rates differ by less than the margin
// ElectionTimeout*(1-LeaseRatio); the invariant is checked by
// electiontest.Checker.Leases in TestRandomSafety, FuzzStep and the
// scenarios.
//
// # Emulating other implementations
//
// Config.Emulate (an Emulation) holds settings that exist so that a
// simulator (package sim) can imitate other implementations' election
// timing on these nodes; production code leaves it zero. Emulate.Tick
// drives every timer of a node by a ticker with its own phase, as etcd
// raft counts its timeouts in calls of Tick: delays become whole ticks, so
// a follower fires between T-1 and T ticks after its last contact, and
// the contact checks count ticks too. Emulate.RestartTimerOnFollow
// restarts the election timer whenever the node becomes a follower or
// adopts a higher term, as etcd's becomeFollower does, even for a vote
// request it then rejects (the Raft paper's follower restarts only on a
// granted vote). By default a candidate rejected by a majority steps down
// at once (etcd); Emulate.WaitForVoteTimeout makes it wait for its vote
// timer, as the Raft paper's candidate, LogCabin's and hashicorp/raft's
// do. Emulate.KeepTimerOnStepDown and Emulate.ServerLock model LogCabin's
// single election timer and its lock held through disk writes;
// Emulate.HeartbeatPerPeer hashicorp/raft's heartbeat goroutine per
// follower; Emulate.StepDownWhenVoteTimedOut SOFAJRaft's candidate;
// Emulate.GrantOnlyAsFollower and Emulate.BackoffOnRejections ocaml-raft's
// voting and backoff.
//
// # Concurrency and determinism
//
// A Node serializes its messages and timer callbacks with a mutex, so it
// behaves as a single-threaded state machine. Outbound messages and Events
// are collected under the mutex and delivered after it is released, events
// first: a Transport may deliver synchronously and an Observer may call the
// node. On a virtual wheel (wheel.NewVirtual) a whole cluster, and
// MemNetwork's in-flight messages, run on the goroutine advancing the
// wheel, reproducibly for a given Config.Rand. On a real-time wheel a timer
// firing at the same moment as a reset may act once more (a spurious
// election), which Raft tolerates.
//
// # Observing
//
// A node reports an Event for every change: EventRoleChange,
// EventTermChange, EventElectionStart (pre-vote or election),
// EventVoteGranted, EventVoteDenied, EventLeaderElected, EventLeaderKnown
// (a follower learnt the leader), EventStepDown, EventIgnored (a message
// dropped, with the reason) and EventSnapshot. Stats counts what was
// ignored and why. Malformed input never panics: it is ignored, counted
// and reported (see Hostile and corrupted messages).
//
// Events reach consumers in three ways. Config.Observer is a function
// called synchronously on the goroutine that caused the event, which for a
// timer is the wheel's driver, shared by every group on the wheel: it must
// not block. NewObserver and Node.RegisterObserver subscribe a channel, as
// hashicorp/raft's RegisterObserver does, and never hold the wheel: a
// non-blocking Observer drops (and counts) what its channel cannot take at
// once, a blocking one queues and blocks only its own delivery goroutine.
// Node.LeaderCh delivers leadership changes, the latest value winning,
// Node.WaitLeader waits until any leader is known (which may be one that
// just crashed: followers know it until their timers find it silent), and
// Node.WaitLeaderOther waits for a leader other than a given one, the
// successor of a crashed leader.
//
// # Hostile and corrupted messages
//
// Raft trusts its voters; this package does not trust their messages
// beyond that. Step never panics, and every message it does not act on is
// counted in Stats and reported as EventIgnored:
//
//   - addressed to another node (IgnoredWrongTo); from None, from the node
//     itself or from a non-voter (IgnoredUnknown);
//   - malformed, as Message.Validate says (IgnoredMalformed): an unknown
//     type, a request with term 0, or a Term or LastLogTerm above MaxTerm;
//   - stale, with a term below the node's (IgnoredStale): requests other
//     than MsgTimeoutNow are answered with the node's term; responses are
//     dropped, pre-vote rejections included, so a late answer never ends a
//     round;
//   - matching no outstanding request, or a grant for another round's term
//     (IgnoredOther, IgnoredStale); a second answer of one voter in a round
//     counts once;
//   - a heartbeat of a second leader in the node's term (Anomalies).
//
// A transport may refuse malformed messages earlier with Message.Validate:
// raftadapter.Bridge answers such requests with an error at once.
//
// Terms are bounded by MaxTerm (2^62). A node adopts a term up to MaxTerm
// from a message, but never starts a pre-vote or election beyond it: at
// MaxTerm it stays a follower, counts each refused round in
// Stats.TermExhausted, and Campaign and TransferLeadership return
// ErrTermExhausted; Start refuses a stored term above MaxTerm. No term
// computation can wrap, whatever the uint64 values received.
//
// One message from a configured voter (or from anyone the transport lets
// speak in a voter's name: MemNetwork and raftadapter.Bridge do not
// authenticate senders) can:
//
//   - raise the receiver's term to any value up to MaxTerm, persisted,
//     deposing a leader or candidate; higher terms then spread through
//     answers. At MaxTerm no election can start any more, so one message
//     of term MaxTerm (or MaxTerm-1, which allows one last election) ends
//     the group's ability to elect new leaders until an operator resets
//     the stored terms. The bound turns a silent safety violation into
//     this visible, counted liveness failure;
//   - obtain the receiver's vote in a term where it has not voted yet, by
//     claiming any log position (LastLogIndex, and LastLogTerm up to
//     MaxTerm): election safety holds, but the up-to-date rule that log
//     replication relies on does not;
//   - make the receiver campaign at once (MsgTimeoutNow), bypassing
//     pre-vote, priority and leader stickiness;
//   - make a follower take the sender for the leader of the term
//     (MsgHeartbeat), after which it refuses pre-votes (and, with
//     CheckQuorum or LeaderStickiness, votes) until its leader falls
//     silent.
//
// No message can make a node vote twice in a term, lower or wrap its term,
// campaign beyond MaxTerm, or act on a term or vote it failed to persist;
// a candidate becomes leader only with granted answers for its current
// term from a quorum of distinct voters (itself included), and one message
// adds at most one voter's answer. What Raft itself cannot survive is a
// lie about a vote:
// a voter granting two candidates in one term, or a granted MsgVoteResp
// forged in the name of a voter that did not vote, can produce two leaders
// in a term. Use an authenticated transport where that matters.
//
// FuzzStep (go test ./election -run '^$' -fuzz FuzzStep) and
// TestRandomSafety check these invariants under arbitrary messages of
// every type, sender and term, interleaved with timers, crashes and
// network faults.
//
// # Metrics
//
// A node reports to go-metrics (github.com/hashicorp/go-metrics), to the
// global sink unless Config.Metrics names another, like hashicorp/raft;
// Config.Metrics set to *metrics.BlackholeSink turns metrics off (the node
// then builds no events unless someone observes them). The names follow
// the project's convention, raftick.<subsystem>.<lower_snake_case words>
// (the subsystem is election here), and each one corresponds to a
// hashicorp/raft metric:
//
//	raftick.election.state.follower                   counter  raft.state.follower
//	raftick.election.state.precandidate               counter  (none: hashicorp's pre-vote has no state)
//	raftick.election.state.candidate                  counter  raft.state.candidate
//	raftick.election.state.leader                     counter  raft.state.leader
//	raftick.election.transition.heartbeat_timeout     counter  raft.transition.heartbeat_timeout
//	raftick.election.transition.leader_lease_timeout  counter  raft.transition.leader_lease_timeout
//	raftick.election.prevote.started                  counter  (raft.candidate.preElectSelf times it)
//	raftick.election.prevote.won, .lost               counter  (none)
//	raftick.election.prevote.granted                  counter  (raft.rpc.requestPreVote times the RPC)
//	raftick.election.prevote.refused{reason}          counter  (none)
//	raftick.election.started                          counter  (raft.candidate.electSelf times it)
//	raftick.election.won, .lost                       counter  (none; won ~ raft.state.leader)
//	raftick.election.vote.granted                     counter  (raft.rpc.requestVote times the RPC)
//	raftick.election.vote.refused{reason}             counter  (none)
//	raftick.election.stepdown{reason,from}            counter  (none)
//	raftick.election.leader.last_contact              sample   raft.leader.lastContact (ms)
//
// A lost election is a candidate round that ended without a win (the
// candidate stepped down or its vote timer started the next term).
// raftick.election.leader.last_contact is sampled at every step-down
// check (with CheckQuorum) the node judges itself: the age of the oldest
// answer among the peers heard from within the lease (a check its caller
// vouched for, Node.LeaderTickHeard, samples nothing; a multi-raft host
// counts those in raftick.host.quorum_heard). Every metric is labelled node (the node's ID), then
// with Config.MetricsLabels (a group label, say), so that the nodes on one
// sink keep their series apart; each label value adds series, so with many
// groups per process label by group only where the sink can hold a series
// per group. Labels: reason is the event's reason without details,
// spaces as underscores (check_quorum, higher_term, lost_election,
// log_not_up_to_date, ...); from is the role left. The wheel reports its
// own raftick.wheel.* metrics (see package wheel).
//
// # Embedding in a full Raft
//
// A Node owns the term, the vote and the election timers; a log layer
// beside it owns the entries. They meet at three points:
//
//   - LogView: the node reads the log's last index and term to apply the
//     up-to-date rule to votes. Last is called with the node's lock held,
//     so it must not call the node.
//   - Node.Status: the log layer replicates only while Role is Leader, in
//     Status().Term, and accepts entries only from Status().Leader.
//   - Node.ObserveTerm: whenever the replication path sees a higher term
//     (an AppendEntries request from a newer leader, or a rejection from a
//     follower that moved on), it tells the node, which persists the term
//     and steps down exactly as for an election message.
//
// Election heartbeats keep followers' timers quiet; AppendEntries of the
// log layer need not (but may, through Step with a MsgHeartbeat). See
// Example_embedding for a node with a minimal replicated log on a virtual
// wheel.
//
// # Crash and restart
//
// Stop models a crash. To restart a node, create a new Node with the same
// Config and Storage and call Start: it comes back as a follower in its
// persisted term, remembering its vote. FileStorage survives process
// restarts; MemoryStorage survives only Node restarts.
//
// A host of many groups can put an idle node to sleep without losing what
// it knows: Hibernate stops it like Stop and returns a Dormant (its term
// and leader), and a new Node on the same Storage resumes from it with
// Resume instead of Start, as that term's leader again (without a lease
// until a quorum answers) or as a follower that knows its leader. Package
// multiraft does this for idle groups.
package election
