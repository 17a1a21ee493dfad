// Package election implements Raft leader election (Ongaro & Ousterhout,
// 2014) as a library: one Node per member of a group, driven by inbound
// messages (Step) and by timers on a shared wheel.Wheel. There is no log
// replication; a small LogView (last index and term) lets votes follow
// Raft's up-to-date rule, and heartbeats stand in for AppendEntries.
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
//     the candidate starts the next term with a fresh random timeout, or,
//     with StepDownWhenVoteTimedOut, steps down and pre-votes again. A
//     candidate that steps down gets a fresh election timeout, or, with
//     KeepTimerOnStepDown, keeps its round's deadline (LogCabin).
//   - heartbeat (leader): a heartbeat to every voter right after winning,
//     then every HeartbeatInterval randomized by HeartbeatJitter, on one
//     timer for all peers or, with HeartbeatPerPeer, one per peer
//     (hashicorp/raft).
//   - step-down (leader, with CheckQuorum): every StepDownInterval (ET/2)
//     the leader counts the voters that answered a heartbeat within the
//     lease (ET*LeaseRatio) and steps down without a quorum.
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
// partition cannot disrupt a healthy group. CheckQuorum makes a leader that
// lost its majority step down. LeaderStickiness makes nodes ignore vote
// requests while a leader is alive. Stickiness says what "alive" means:
// heard from within ElectionTimeout (StickyByContact), or known until the
// node's own timer finds it silent (StickyUntilTimeout, hashicorp/raft).
//
// By default a candidate rejected by a majority steps down at once (etcd);
// WaitForVoteTimeout makes it wait for its vote timer, as the Raft paper's
// candidate, LogCabin's and hashicorp/raft's do.
// TransferLeadership hands leadership over with MsgTimeoutNow, bypassing
// pre-vote and stickiness. Priority election (SOFAJRaft) makes nodes below
// the target priority skip election timeouts, the target decaying every
// second skip while no leader shows up.
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
// Config.Observer receives an Event for every role change, term change,
// election start, vote granted or denied, election won, leader learnt,
// step-down and ignored message; Stats counts what was ignored and why.
// Malformed input never panics: it is ignored, counted and reported.
//
// # Crash and restart
//
// Stop models a crash. To restart a node, create a new Node with the same
// Config and Storage and call Start: it comes back as a follower in its
// persisted term, remembering its vote. FileStorage survives process
// restarts; MemoryStorage survives only Node restarts.
package election
