// Package raftadapter connects raftick to github.com/hashicorp/raft (v1.8.0),
// the Raft library most Go users run. It has three parts, all logging
// through go-hclog as hashicorp/raft does.
//
//	timing, err := raftadapter.TimingOf(electionCfg)   // raftick's timing policy...
//	conf, err := timing.RaftConfig("node-1", logger)    // ...as a validated raft.Config
//	b, err := raftadapter.NewBridge(bridgeCfg, trans)   // or run election nodes over hashicorp's wire:
//	node, err := election.NewNode(electionCfg, wheel.Shared(), b, storage, log)
//	err = b.Start(node)
//
// See ExampleTiming_RaftConfig and ExampleBridge.
//
// # Config mapping
//
// Timing is raftick's timing policy in raftick's terms (package election):
// ElectionTimeout, VoteTimeout, LeaseRatio, HeartbeatInterval, PreVote;
// TimingOf extracts it from an election.Config, refusing what hashicorp
// cannot express (jitter other than [T, 2T), for one).
// Timing.RaftConfig and Timing.Apply map it onto a raft.Config validated by
// raft.ValidateConfig; Reload re-tunes a live node through
// (*raft.Raft).ReloadConfig, which accepts only HeartbeatTimeout and
// ElectionTimeout among the timing fields. Errors are *TimingError, naming
// the raftick field, the raft.Config field it maps to and hashicorp's rule
// that was broken. Beware the names: raftick's ElectionTimeout is
// hashicorp's HeartbeatTimeout, raftick's VoteTimeout is hashicorp's
// ElectionTimeout (see Timing).
//
// # Real-cluster harness
//
// NewCluster starts N real raft.Raft nodes in one process on in-memory
// stores, over InmemTransport or TCP on 127.0.0.1, with optional per-message
// latency drawn from a Latency model (package sim's models satisfy the
// interface). The harness waits for a leader (WaitLeader), crashes nodes
// (Crash, CrashLeader), cuts links (Partition, Heal) and measures failover
// through raft.Observer leader observations, timestamped on raft's own
// goroutine, and LeaderCh. Failover and FailoverTrials run the failover
// experiment trial after trial on fresh clusters, in real time; they back
// `raftsim failover --engine hashicorp`.
//
// # Transport bridge
//
// Bridge is an election.Transport over a hashicorp transport that carries
// pre-votes (NetworkTransport or InmemTransport), so election nodes talk
// over hashicorp's wire: pre-vote, vote, heartbeat (AppendEntries with no
// entries) and leadership transfer (TimeoutNow). It joins hashicorp's
// synchronous RPCs to election.Node's asynchronous Step/Send without ever
// blocking the node: bounded in-flight RPCs per peer, a pending table that
// matches the node's answers to the RPCs waiting for them, timeouts, and
// counters for everything dropped.
//
// # hashicorp/raft v1.8.0's timing
//
// What the harness measures, as read from the v1.8.0 source (file:line in
// github.com/hashicorp/raft@v1.8.0). HT is Config.HeartbeatTimeout, ET
// Config.ElectionTimeout; randomTimeout(T) is uniform in [T, 2T) from
// math/rand's global source (util.go:29-35), so it cannot be seeded.
//
//   - Follower: a free-running timer, armed with randomTimeout(HT) on entering
//     the follower state (raft.go:164) and re-armed with a fresh
//     randomTimeout(HT) every time it fires, whatever happened in between
//     (raft.go:214-218). Heartbeats do not reset it; they set lastContact
//     (successful AppendEntries raft.go:1601-1602, granted vote
//     raft.go:1755, installed snapshot raft.go:1975). When it fires and
//     time.Since(lastContact) >= HT (raft.go:221-224), the follower forgets
//     its leader (raft.go:228) and becomes a candidate (raft.go:245).
//     Detection therefore takes between about HT and 3HT after the last
//     contact. ReloadConfig with a shorter HT fires the timer at once
//     (api.go ReloadConfig; raft.go:211-212).
//   - Candidate: each round arms randomTimeout(ET) (raft.go:310-311). With
//     pre-vote a round first asks for pre-votes at term+1 without changing
//     its term (raft.go:297-298, 2086); on a quorum of grants it re-arms
//     randomTimeout(ET) and runs the real vote, incrementing the term
//     (raft.go:345-357, 2004). A lost pre-vote just waits for the timer
//     (raft.go:360-363). When the timer fires the round starts over
//     (raft.go:430-434).
//   - Leader: one heartbeat goroutine per follower waits randomTimeout(HT/10),
//     i.e. [HT/10, HT/5), then makes a synchronous AppendEntries, so the
//     period is that wait plus the round trip (replication.go:399-411); after
//     the n-th consecutive failure (from 0) it backs off
//     min(10ms*2^max(0,n-2), HT/2) (replication.go:412-420, util.go:140). Replication also sends
//     AppendEntries on randomTimeout(CommitTimeout) (replication.go:169),
//     which counts as contact too. The lease check runs after
//     LeaderLeaseTimeout, then every LeaderLeaseTimeout minus the oldest
//     contact age, at least 10ms (raft.go:678, 938-946), and steps down
//     when fewer than a quorum were heard from within LeaderLeaseTimeout
//     (raft.go:1037-1075).
//   - Votes and pre-votes: a node that knows a leader (other than the
//     candidate) refuses both (raft.go:1673-1678, 1786-1791), whatever its
//     lastContact; only a vote marked LeadershipTransfer passes. It forgets
//     the leader only when its own timer finds the leader silent
//     (raft.go:228) or on any state change (setState, raft.go:2171-2176).
//     This is leader stickiness without a lease: after a leader crash, a
//     candidate can win only once a quorum of survivors have each timed out
//     on their own timers. A candidate grants pre-votes (it has no leader);
//     pre-vote is on unless Config.PreVoteDisabled or the transport lacks
//     raft.WithPreVote (api.go:554, 584); leadership transfer skips it
//     (raft.go:297).
//   - Announcing the winner: it names itself leader right after the winning
//     vote (raft.go:384), signals LeaderCh on entering the leader loop
//     (raft.go:474) and starts replication at once (raft.go:613-614, a no-op
//     entry raft.go:572); a follower names the new leader on accepting its
//     first AppendEntries (raft.go:1488-1492).
package raftadapter
