// Package etcdadapter runs real go.etcd.io/raft/v3 nodes on a wheel: each
// Node is an etcd RawNode whose Tick comes from a repeated timer, whose
// messages go through a Transport and whose Readys the node processes
// itself. On a virtual wheel a whole etcd cluster runs deterministically
// and fast, so the simulator can predict real etcd raft and etcd users can
// tune ElectionTick and HeartbeatTick in virtual time.
//
// # A tour
//
// A Node on any wheel (virtual in tests and simulations, real-time in
// production):
//
//	cfg := etcdadapter.DefaultConfig() // etcd's: 100ms ticks, ElectionTick 10, HeartbeatTick 1, PreVote, CheckQuorum
//	cfg.ID, cfg.Peers = 1, []uint64{1, 2, 3}
//	cfg.Rand = rand.New(rand.NewPCG(seed, 1)) // deterministic timeouts (nil: etcd's own)
//	cfg.Observer = func(e election.Event) { ... }
//	n, err := etcdadapter.NewNode(cfg, w, transport)
//	n.Start(firstTick) // ticking; a restart after n.Crash() resumes from n.Storage()
//	n.Step(msg)        // inbound messages
//	n.Status(), n.Accepted(leader, term), n.Stats()
//
// The Observer receives election.Events, the election package's type:
// RoleChange, TermChange, ElectionStart (pre-vote or vote), VoteGranted,
// VoteDenied, LeaderElected, LeaderKnown (a follower stepped the first
// append or heartbeat of a new leader), StepDown and Ignored, so code built
// on election's events (the simulator's trackers, metrics) works unchanged.
//
// The simulator's etcd engine (package sim/engines/etcd) puts N nodes on
// one virtual wheel with its network and disk models and runs the
// simulator's experiments on them.
//
// # etcd's election timing
//
// Everything in etcd raft is counted in ticks of the caller's clock
// (TickInterval here; etcd's --heartbeat-interval is one tick, 100ms by
// default, and --election-timeout is ElectionTick ticks, 1s by default).
//
//   - Randomized timeout: T is drawn uniformly from the integers
//     [ElectionTick, 2*ElectionTick-1]. It is re-drawn only when the node
//     becomes follower (including a term change and a candidate or leader
//     stepping down), candidate or leader; not when a heartbeat arrives,
//     not when the timeout fires, and not on becoming pre-candidate.
//   - Dead-leader detection: a follower counts ticks since the last
//     MsgApp, MsgHeartbeat or MsgSnap of its leader (or a vote it granted,
//     or its last state change) and campaigns when the count reaches T. As
//     the count is in whole ticks of the follower's own ticker, it fires
//     between (T-1) and T ticks after the last contact, depending on the
//     ticker's phase.
//   - Pre-vote (PreVote): the timeout first makes the node a pre-candidate
//     (same term, T kept) that asks every voter for a pre-vote for term+1.
//     Voters grant it when the candidate's log is up to date, even while
//     they follow a live leader (etcd has no stickiness of its own; only
//     CheckQuorum's lease, below, makes them ignore it). A majority of
//     grants makes it candidate; a majority of rejections makes it
//     follower (new T); silence makes it try again T ticks later.
//   - Candidate: increments the term, votes for itself (counted once its
//     own write completes), asks for votes, and re-draws T. It becomes
//     leader on a majority, steps down at once on a majority of rejections
//     (it does not wait for its timeout, unlike the Raft paper's
//     candidate), and on an append or heartbeat of its term. If T passes
//     first it campaigns again: with PreVote it goes back to pre-vote
//     (same term, T kept), without it starts a new term (new T).
//   - Votes: one per term; a follower that knows a leader in its term
//     refuses other candidates of that term. Granting a vote restarts its
//     tick count.
//   - Higher terms: a node that steps any message of a higher term
//     (outside CheckQuorum's lease), a vote request it then rejects
//     included, becomes follower in that term, which restarts its tick
//     count with a new T. (The Raft paper's follower restarts its timer
//     only when it grants a vote.) So without PreVote a candidate that
//     cannot win, such as one with a short log, pushes back every
//     survivor's timeout each time it campaigns: a failover waits until a
//     node with a full log times out first, which gives etcd without
//     PreVote a long tail (with the paper's two short logs of four
//     survivors, about half of the rounds are lost this way).
//   - New leader: appends an empty entry and sends it (MsgApp) to every
//     follower at once, then heartbeats every HeartbeatTick ticks. A
//     follower accepts the leader on that first MsgApp.
//   - CheckQuorum: the leader checks every ElectionTick ticks that a
//     quorum answered its appends or heartbeats since the last check (its
//     first check comes ElectionTick ticks after it won), else steps down (so it
//     steps down between one and two ElectionTick periods after losing its
//     quorum). Followers ignore, without answering, vote and pre-vote
//     requests that arrive within ElectionTick ticks of hearing from their
//     leader (the lease). With CheckQuorum or PreVote, a node answers an
//     append or heartbeat of a lower term so that the stale leader learns
//     the new term.
//
// # Determinism
//
// etcd draws T (raft.resetRandomizedElectionTimeout) from a package-global,
// mutex-protected crypto/rand source that no Config field can replace
// (etcd-io/raft#50 moved it from math/rand to crypto/rand so that
// simulated servers started at the same instant would not draw alike). To
// make a trial a function of its seed while other trials run in parallel
// the adapter, when Config.Rand is set, replaces etcd's draw in place:
//
//   - etcd draws in raft.reset, and every reset also replaces the
//     unexported pointer raft.readOnly with a fresh allocation (nothing
//     else assigns it after construction); the drawn value is stored in
//     raft.randomizedElectionTimeout and read only by the comparison in
//     tickElection, which runs once per Tick before anything in that Tick
//     could reset.
//   - So after every call into the RawNode (Tick, Step, Campaign, Propose,
//     Advance) the adapter checks whether readOnly changed; if so, etcd has
//     drawn during the call and not used the value yet, and the adapter
//     overwrites it with ElectionTick + Rand.IntN(ElectionTick): the same
//     distribution, drawn at the same moments, from the node's own source.
//     The previous pointer stays referenced, so an address cannot be
//     reused. This is exact, not a statistical imitation, and it is what
//     etcd's own tests do (setRandomizedElectionTimeout in raft_test.go),
//     done from outside the package.
//   - The fields are located by name with reflect and checked by kind
//     once per process, and each node checks that they hold what they are
//     named for (electionTimeout equals ElectionTick, the first draw lies
//     in range) before it relies on them; a go.etcd.io/raft/v3 without
//     them makes NewNode and Start fail with ErrUnsupportedRaft instead of
//     running nondeterministically. Writes go only to the node's own
//     RawNode, under its lock: nothing process-wide changes. Nothing else
//     in etcd's election path is random or depends on map order (it sorts
//     peer IDs), which the tests check by comparing whole traces.
//   - Without Config.Rand nothing is written: etcd keeps its own draws
//     (production), and the adapter only reads them for Status.
//   - Verified against go.etcd.io/raft/v3 v3.7.0 (v3.6.0, which etcd v3.6
//     ships, has the same election code). After an upgrade,
//     TestRaftLayoutSupported and TestTimeoutComesFromRand (which predicts
//     the exact tick of each campaign from a copy of the source) tell
//     whether the mechanism still holds.
//
// Alternatives that were rejected: replacing crypto/rand.Reader (it
// changes every user of crypto/rand in the process, and with trials on
// several goroutines the order of draws from one shared stream would
// still depend on scheduling); Go 1.26's testing/cryptotest.SetGlobalRandom
// (it does make crypto/rand, and so etcd's crypto/rand.Int(rand.Reader, n)
// call, deterministic, but only inside a test binary, not with parallel
// tests, and process-wide, so neither raftsim nor parallel trials can use
// it); serializing all trials around a global deterministic source (no
// parallelism, same objection); steering the public API only (hold etcd's
// tick count below ElectionTick and call Campaign at the adapter's own
// timeout), which breaks CheckQuorum's lease, as that reads the same
// count; and forking etcd raft with an injectable source (exact, but no
// longer the code etcd ships). The clean fix is upstream: a Config field
// for the source of the randomized timeout.
//
// # Storage, disk and messages
//
// Each node owns a raft.MemoryStorage, bootstrapped with a snapshot at
// index 1 carrying the voters (Config.Peers), that survives Crash. Without
// Config.Disk a Ready is persisted, sent, applied and advanced at once.
// With it, a Ready that must be synced waits for the disk's delay: the
// node keeps stepping messages and ticking meanwhile (etcd's node loop
// does), but produces no further Ready until the write completes; a
// leader's messages leave at once and everyone else's after the write,
// as etcd's server sends them. A crash loses a write in flight with the
// messages that waited for it.
//
// # Concurrency
//
// A Node is safe for concurrent use. All work on its RawNode is
// serialized; work that arrives while the node is busy (from another
// goroutine, or re-entrantly from its own Transport or observer) is queued
// and done by the goroutine already working, before it returns. The
// Transport and observer are called without the node's lock.
package etcdadapter
