// Package multiraft runs the replicas of many Raft groups that live on one
// node: a Host keeps every group's election.Node on one shared wheel, sends
// everything to a peer node through one Transport, coalesces heartbeats per
// peer node, hibernates idle groups so that they cost no timer work, and
// watches peer nodes (not groups) to wake the hibernating groups whose
// leader's node fell silent. It follows CockroachDB's range quiescence and
// TiKV's hibernate regions.
//
//	cfg := multiraft.DefaultConfig()
//	cfg.ID = 1 // this node; a group's voters are node IDs
//	cfg.Store = store // a multiraft.Store: pebblestore.Open(dir), or your engine's
//	h, err := multiraft.NewHost(cfg, wheel.Shared(), transport)
//	err = h.AddGroup(multiraft.GroupConfig{ID: 7, Voters: []election.ID{1, 2, 3}})
//	// hand every Batch from a peer to h.Step; call h.Touch(7) on activity
//
// See Example for three hosts on a virtual wheel and MemNetwork.
//
// # Coalesced heartbeats
//
// A group's leader heartbeats its followers as election.Node always does;
// with Config.Coalesce the Host does not send each heartbeat (and each
// answer) as a message of its own but queues it in the peer node's outbox
// as a (group, term) entry, and sends each peer one Batch with all of
// them: right after the host's heartbeat tick (below) for the heartbeats,
// right after a Step for the answers to the heartbeats it delivered, and
// every CoalesceWindow (half a heartbeat interval by default) for
// whatever else waits (the first heartbeats of a leader just elected or
// woken). Each of these flushes takes
// only what no other one in progress is about to send: a Step that ends
// while the tick (on the wheel's goroutine) is still making heartbeats
// leaves them to the tick, the tick leaves a peer's answers to the Step
// that is answering that peer's heartbeats, and entries that neither made
// (loose ones) leave with the window's timer or at the end of the next
// Step, whichever comes first. So in steady state each peer gets
// exactly one heartbeat batch per tick and one answer batch per heartbeat
// batch it sent (Stats counts batches by cause).
//
// The receiving host steps every entry into its group's node as the
// MsgHeartbeat (or MsgHeartbeatResp) it stands for, with the batch's
// sender as From: per-group semantics (terms, leases, CheckQuorum) are
// those of election.Node. Votes, pre-votes and transfers leave at once.
// Hundreds of thousands of heartbeats per interval become one batch per
// peer node per tick, and their answers one batch per batch of them. A
// heartbeat's round trip waits for no timer: with RaftMix's timings (a
// 150ms election timeout, so a 135ms lease, and 50ms heartbeats) waiting
// for the window made the answers of a 45ms tick up to 100ms old at busy
// moments, and leaders stepped down by CheckQuorum.
//
// With Coalesce the Host also drives its leaders' heartbeats, as a
// CockroachDB node's tick drives all its ranges: its groups' nodes run
// with election.Config.ExternalHeartbeat (no heartbeat timer per leader),
// and one heartbeat tick per host, a tenth shorter than
// HeartbeatInterval, calls election.Node.BroadcastHeartbeat on every
// awake group the host leads. All of a host's heartbeats thus enter its
// outboxes together and leave in one flush, and their answers come back
// together; hibernating groups are not visited, and a group that starts
// leading heartbeats every peer as it wins, then joins the host's phase
// at the next tick. Only when heartbeats are sent changes, and they come
// 11% more often (HeartbeatJitter is not used): per-group semantics are
// unchanged. A tick visits, under the host's lock, only the host's list
// of the groups it leads (joined at once by a group that wakes or is
// elected as leader, and by any other the sweep finds leading; the tick
// drops the groups that sleep or no longer lead), and no leader has a
// timer of its own to re-arm. Its timer asks the wheel's driver for a
// precise wake-up (wheel.Timer.SetPrecise). The tick walks its leaders,
// and the sweep the awake groups, in chunks of a thousand and a few
// thousand, each a callback of the driver, so that other timers, other
// hosts' ticks on the same wheel among them, wait for a chunk rather
// than a whole walk; they yield only while the driver keeps time.
//
// The tick also judges every leader's CheckQuorum
// (election.Config.ExternalCheckQuorum), at its start and per peer host:
// the host counts, for each peer, the heartbeats its last tick sent there
// and the answers that came back to them (each answer once, see
// election.Node.TryHeartbeatAnswer). A leader whose voters include a
// quorum of peers that answered every one of them, and that heartbeated
// them at the last tick in its current term, needs no check of its own:
// the tick tells it so (election.Node.LeaderTickHeard) and it
// heartbeats; every other leader (a new one, or one with a peer that
// left an answer out) checks its own answers, as its step-down timer
// would, before it heartbeats. So every leader is judged every tick
// (more often than the timer's ElectionTimeout/2), as late as the tick's
// start, and no leader keeps a step-down timer; the leaders' leases are
// their own answers' still. A batch's entries are stepped at the wheel
// time read once per chunk of them (election.Node.StepAt), and their
// answers join the outbox together; the tick's heartbeats join theirs
// likewise.
//
// A follower's heartbeat and a leader's answer are a compare and a store
// (election.Config.ExternalContact): the follower's node, once it stepped
// a heartbeat of its leader and did nothing else since, takes the next
// ones without its lock (election.Node.TryHeartbeat) and keeps no
// election timer; the sweep, which visits every awake node every
// heartbeat interval anyway, watches each follower's contact
// (election.Node.SuperviseContact, a load per follower) and arms the
// timer, for a fresh random timeout after the last contact, only once
// the leader has been silent for the election timeout less one and a
// half heartbeat intervals. So the follower campaigns when a timer
// re-armed by every heartbeat would have. A leader takes its followers'
// answers the same way (election.Node.TryHeartbeatResp) between two
// ticks, and its CheckQuorum and lease count them at the next.
//
// # Hibernation
//
// A group's leader decides: at a sweep (every heartbeat interval) a leader
// that saw no activity for Config.HibernateAfter (no Touch, no new term,
// no wake) and whose every follower answered a heartbeat of the current
// term within the lease (or lives on a node liveness takes for dead)
// hibernates: election.Node.Hibernate stops its node, and the host keeps
// only an election.Dormant (term, leader) beside the group's Storage. It
// sends each follower a Hibernate control, in the same batch after any
// queued heartbeat. A follower that follows that leader in that term
// hibernates too and acknowledges; one that does not (it moved to another
// term, or campaigns) or that was touched within HibernateAfter (local
// activity) refuses, and the refusal wakes the leader again.
//
// A hibernating group has no Node and no timer: about 180 bytes of heap
// with a MemoryStorage (TestHeapPerHibernatingGroup), against about 3 KiB
// for an awake replica. Groups bootstrapped with GroupConfig.Leader start
// hibernating, so adding a million of them creates no Node.
//
// A hibernating replica wakes, with a new Node resumed from its Dormant
// (election.Node.Resume), on:
//
//   - any election request, or any message of a higher term. A replica
//     that hibernated as the leader resumes as the leader of its term,
//     heartbeats at once and holds no lease until a quorum answers again.
//     A follower resumes knowing its leader, counting the wake as contact
//     (it refuses pre-votes for an election timeout) with a fresh election
//     timeout, and, if woken by anyone but its leader, sends the leader's
//     host a Wake control, so a live leader heartbeats long before the
//     follower's timeout. If the leader's node is dead as far as liveness
//     knows, it resumes without a leader. A message of a higher term
//     resumes a plain follower: the node adopts the term anyway.
//   - a local call: Touch, Campaign, TransferLeadership. Status does not
//     wake.
//   - a Wake control (a follower woke; the leader resumes and heartbeats).
//   - node liveness, see below.
//
// Two messages do not wake: a heartbeat of the leader the follower sleeps
// under, in its term, is answered as an awake follower would answer it
// (the answer is true: the replica follows that leader in that term), and
// a late answer of the replica's term or an older one is dropped (a
// hibernating replica has no request out). So a leader woken by activity
// keeps its followers asleep, and a heartbeat that overtook the Hibernate
// control does not wake the follower.
//
// # Node liveness
//
// Each host sends each peer node something every LivenessInterval (an
// empty Batch if it had nothing else to send) and keeps one wheel timer
// per peer node, pushed back by every batch from it. When a peer stays
// silent for LivenessTimeout (an election timeout by default) the timer
// fires once, and the hibernating groups whose leader lived on that node
// fail over, paced so that a verdict over a third of a million idle
// groups does not turn into as many elections at one instant:
//
//   - The verdict wakes nothing. The host queues the groups in which it
//     is the first voter alive by its liveness (in Voters' order); in the
//     others it leaves the group asleep for that voter's host. A group
//     with no quorum of voters alive stays asleep (it could not elect)
//     until a batch from one of them comes in.
//   - Every sweep (each heartbeat interval) wakes queued groups and makes
//     each campaign at once, while at most Config.FailoverInFlight
//     (1024 by default) woken groups know no leader yet. A group leaves
//     that flight when this host wins its election (and the next queued
//     group wakes then, so the pace is that of the elections completing
//     on this host), when a sweep finds its node knows a live leader or
//     it hibernated again, or after three election timeouts (a group that
//     cannot win gives up its place; its own timers go on).
//   - The candidate's (pre-)vote requests wake the group's replicas on
//     the other survivors; a Touch or any message wakes a queued group
//     at once, as ever.
//   - A batch from the node (alive again) drops what is left of its
//     queue: those groups sleep on under a leader that is alive.
//
// A replica woken for a leader whose node is dead by liveness resumes
// knowing that leader, with the last time the host heard its node as its
// last contact: it has heard nothing since, so the promise it made that
// leader (election.Node.QuorumContact) runs from then and, LivenessTimeout
// being at least an election timeout by default, has run out, and it
// grants the candidate's requests at once (resumed without a leader, it
// would promise afresh and refuse every candidate, itself included, for
// an election timeout). Stats.FailoverQueued and FailoverInFlight show a
// failover's progress; LivenessWakes counts the groups it woke. So a
// group whose leader's node died, and which nothing else wakes, campaigns
// within LivenessTimeout, a heartbeat interval, and the wait for the
// groups queued ahead of it: at most ceil(ahead/FailoverInFlight) rounds
// of three election timeouts and a heartbeat interval, in practice
// ahead/FailoverInFlight times the time an election takes on the host;
// then it elects as an awake group does (raftsim multiraft: the 20,000
// groups of a crashed host of five, all led again within 1.12s of the
// crash, the 1s LivenessTimeout included, at a 1ms network latency).
//
// Groups led by other nodes, and awake groups (their own election timers
// watch their leader; see below for how they fail over), are not
// touched. A batch from the node marks it alive again, and wakes the
// groups this host leads that hibernated without that node's replica
// (liveness had it for dead): their heartbeats bring it up to date, so a
// replica cut off while its group moved on does not sleep on in an old
// term (perhaps believing it leads it).
//
// # Safety
//
// Hibernation and coalescing never allow two leaders in a term or a lost
// vote:
//
//   - Terms and votes live in the host's Store (or a group's own
//     Storage). Persist before you speak: every group's node is an
//     election.NewDeferredNode, which hands a changed HardState to the
//     host and holds every message it sends from then on (a vote grant,
//     a candidate's requests, a new leader's first heartbeats) until the
//     host reports the state durable. The host's persister writes the
//     states that changed meanwhile with one Store.Save (group commit:
//     while one write syncs, the next gathers), off every lock and off
//     the wheel's goroutine, then releases the held messages; Step never
//     waits for a disk. A failed write is counted (Stats.SaveErrors),
//     logged and retried, and what waits for it stays held. A crash loses
//     only states no message depended on. A node whose state is not
//     durable does not hibernate; Hibernate saves nothing and loses
//     nothing persistent; Resume loads the durable HardState like Start.
//     A hibernating replica sends nothing but heartbeat answers that its
//     awake node would have sent (it follows that leader in that term),
//     so it casts no vote and changes no term while asleep.
//   - A replica resumes as leader only of the term it hibernated in, only
//     if its Storage still holds that term and its own vote, and only if
//     it was that term's leader when it hibernated. A node leads a term
//     only by winning it, and at most one node wins a term (Raft's
//     election safety, from one vote per voter per term), so the resumed
//     leader is that term's only leader: resuming is the same as never
//     having stopped its timers, and Raft's safety never depended on
//     timing. A bootstrapped group's term 1 is a valid history (every
//     voter voted for Leader) if all hosts use the same GroupConfig.
//   - Everything else that resumes is a follower, which is how every Raft
//     node restarts after a crash: always safe.
//   - Coalescing changes only how messages travel: each entry is the
//     message its group's node sent, delivered to the node it was
//     addressed to, with the sender taken from the batch. Delay, loss,
//     reordering and duplication of batches are what Raft tolerates of
//     single messages. A coalesced answer leaves when the Step that
//     delivered its heartbeat ends (one batch's worth of work), not after
//     a window. Each heartbeat entry carries its leader's send time and
//     each answer echoes it (election.Message.Sent), so the lease
//     (Status.Lease) runs from when the answered heartbeats were sent,
//     however long the batches waited in queues.
//   - Liveness only wakes groups; a wrong verdict (a partition, or a
//     host that stalled past LivenessTimeout) costs at most an election
//     per group woken, never safety, and wakes at most FailoverInFlight
//     groups at a time until the node is heard again: the woken
//     candidates' pre-votes are refused while the leader is alive for the
//     others. LivenessTimeout is at least the lease plus the coalescing
//     window (Validate), so a replica woken for failover heard nothing
//     from the leader's node for longer than the leader counts its last
//     answer in its lease; it resumes with that node's last batch (or its
//     own last answer asleep, or the host's start, whichever is latest)
//     as its last contact, so its promise is kept from the latest moment
//     it could have answered that leader, and may campaign at once.
//   - A woken follower does not campaign before it could have heard from a
//     live leader: it waits a full fresh election timeout and asks the
//     leader to wake; a woken leader heartbeats at once and holds no lease
//     until a quorum answered (Status.Lease), so it claims nothing that
//     needs one before that.
//   - A hibernating follower that answers its leader's heartbeats makes
//     the promise an awake follower makes: the leader's lease counts on
//     the answer. The host records when it last answered
//     (election.Dormant.Contact), and whatever wakes the follower, a vote
//     request of a higher term included, resumes it knowing its leader
//     and that contact, so it refuses pre-votes (and with
//     LeaderStickiness votes) until an election timeout after it, as an
//     awake follower would. A follower that never heard from its leader
//     (bootstrapped asleep) counts the wake itself as contact.
//
// TestRandomSafety checks one leader per term and one vote per node per
// term for every group, terms that never decrease, and the lease (no
// replica holds one in a term below another's leader), over five hosts
// with hibernating groups, host crashes and restarts, cut links and
// reordered batches; TestRandomLeases runs many short schedules over
// every PreVote, CheckQuorum and LeaderStickiness combination with lost,
// duplicated, misrouted and delayed batches.
//
// # In real time
//
// On a real-time wheel (wheel.Shared or wheel.New) a Host runs as in the
// simulator. The Transport is the application's: Send hands the Batch (a
// plain value; encode it as you like) to the connection or queue of peer
// b.To and returns; the connection's reader calls Step on the receiving
// host with every Batch it decodes. A Transport that calls
// Batch.Release once it has encoded a batch (or once the receiver's Step
// returned, in one process) lets the hosts reuse its entries: with it a
// host in steady state allocates nothing per heartbeat
// (multiraft/tcptransport does). Call Touch whenever a group does work
// (a proposal, a read) so that it stays awake; Stats reports how many
// groups sleep and what was sent, and Config.Observer sees every election
// event with its group (count EventElectionStart to find spurious
// elections). A load generator drives it the same way: one Host per
// simulated node, one wheel, a TransportFunc that queues batches to the
// peer's Step, Touch on the active fraction of the groups.
//
// Every host's heartbeat tick, and with it every leader's step-down
// check, runs on the wheel's one driver goroutine, so a driver that runs
// late (the process descheduled, the driver waiting for a processor or
// for the wheel) delays both. election's CheckQuorum counts a follower that
// answered every heartbeat it was sent as reachable however old its last
// answer, so the checks the late driver runs before the tick no longer
// depose every leader of a host at once (scalemix saw bursts of about
// 1,600 step-downs at one instant).
//
// A host that cannot keep up (its processor taken, a backlog of batches)
// runs late as a whole, and so may its peers. It judges a silence by what
// it has processed rather than by its clock alone, per peer host: a
// follower whose election timer comes due acts only if a tick batch of
// its leader's host (Batch.Tick, one per peer and heartbeat tick, with a
// heartbeat of every group that host leads) was stepped since its last
// heartbeat and lacked it; a leader's CheckQuorum, and a candidate's
// round, count a silent voter as lost only if that voter's host has
// answered something sent after the heartbeat or request left unanswered.
// Otherwise the silence may be a backlog's, and it is held
// (election.Config.Lagging; Stats.LaggingSkips counts the holds). Every
// hold is bounded: it needs the peer's host alive by node liveness, and
// evidence from it (its last tick stepped, or the send time of the last
// heartbeat it answered) at most ten election timeouts old, or three
// times the peer's recent pace if that is slower, and never more than a
// hundred. A tick batch counts from when its stepping began. A peer that
// has answered none of the heartbeats sent to it yet (as after a start)
// is held that long from when the silence began; one sent no heartbeat
// owes no answer, and its silence is not held. Node liveness
// is measured the same way: a peer is down when none of its batches was
// stepped for LivenessTimeout (or twice its recent longest gap, at most
// two election timeouts more) while batches of other peers were, for at
// least half of it (otherwise the verdict waits one more LivenessTimeout,
// once). A
// down peer's awake groups fail over at once: the first of each group's
// voters that liveness counts alive campaigns, and the others give it
// two election timeouts, from the verdict or from when they woke if
// later, before their own timers act. Its hibernating groups fail over
// through the queue above, at most FailoverInFlight at a time per host.
//
// The guarantee, measured in a deterministic model of the hosts'
// processors (TestOverloadFailover; ElectionTimeout 150ms, heartbeats
// 50ms, LivenessTimeout 200ms, 900 to 2,000 groups on three hosts, five
// seeds; every group awake): a group whose leader's host died has a new
// leader within 5 election timeouts (4.9 at most) while the survivors
// get at least a third of the processor time their work needs, and
// within 10 (9.1) at a sixth; no group whose leader lives starts an
// election. Hibernating groups add at most FailoverInFlight elections at
// a time to a survivor's work, however many the dead host led
// (TestFailoverBoundedFlight), and their failover takes as long as
// those elections take, in rounds of FailoverInFlight. A host that
// cannot keep up still sends every heartbeat its tick makes, but its
// tick, re-armed when it has run, comes later: its heartbeat rate, and
// with it the work it makes its peers, falls to what its processor can
// do, so the backlog stays bounded without shedding. After an overload
// ends no election follows from it (TestOverloadRecovers). Stats.Behind,
// Lateness and BehindSpells report how late the host's sweep runs;
// nothing is held on them.
//
// # Metrics
//
// A host reports its own gauges and counters (raftick.host.*) to its
// election template's metrics sink every LivenessInterval, labelled
// node=<its ID> as its nodes label theirs; with Config.GroupLabels the
// nodes' metrics also carry group=<ID>, one series per group, which is
// off by default (metrics.go lists the metrics).
//
// # Concurrency
//
// A Host guards its registry, hibernation and liveness with one mutex and
// calls its nodes' methods with it held, except on Step's hot path: the
// coalesced heartbeats and answers of awake groups are stepped without it
// (an awake group publishes its node and acks atomically, and a node
// serializes its own messages), so Steps from several peers run in
// parallel on as many cores. The host's lock order is written on the Host
// type. No user code runs under a lock of the host or a node: what a
// call makes under the host's lock for the Transport or the Observer
// waits in an effects queue, run in order by whoever ends the call after
// letting go, and the Store is called by the persister alone. So an
// Observer may call the Host and a Transport may deliver synchronously.
// On a virtual wheel the persister is a wheel timer a tick after the
// first change (on a real-time wheel, a goroutine), and with MemNetwork a
// whole cluster runs on the goroutine advancing the wheel, reproducibly
// for a given Config.Rand.
//
// Nothing waits long for that mutex, because the wheel's single driver
// goroutine runs every host's timers and a caller's Touch should not
// stall behind a batch:
//
//   - Step takes it twice per batch when every entry's group is awake
//     (to note the peer alive, then for the single messages and
//     controls), and delivers the entries of hibernating groups under it
//     in order, letting go every 64 entries. The entries of awake groups
//     go in chunks of 256: looked up under one read lock of the group
//     index, stepped without it at one clock read, answered with one
//     lock of the outbox.
//   - Touch of an awake group takes no host-wide lock: it stores the time
//     of the touch (the host's clock stamp, unless the word holds it
//     already) and reads the group's awake flag, both atomic
//     (hibernation clears the flag before it reads the time, so either the
//     touch stops the hibernation or Touch sees the group asleep). Touch
//     of a sleeping group queues it and returns; the host's waker
//     goroutine wakes the queue, 64 groups per hold of the lock, so that
//     neither the wheel's driver nor a Step waits behind a whole queue
//     of wakes (on a virtual wheel the lock's holder wakes the whole
//     queue before letting go, and Touch wakes the group itself if the
//     host is idle). Without this, a burst of touches on sleeping groups (every
//     active group after a start or a stall) made the caller wait behind
//     batches, or build the nodes and run the effects queue itself; its
//     round over the groups grew longer than HibernateAfter, the groups
//     it had woken hibernated again before it came back to them, and
//     every touch became a wake (scalemix at 20k groups all active:
//     189k hibernations and 226k wakes in 8 s).
//   - The coalescing flush takes only the outbox lock.
//
// With many groups awake, every group, node and index slot a batch
// reaches is a cache miss. Groups are indexed by ID in pages of a flat
// table when IDs are dense (a map holds sparse ones), and Step looks
// ahead in a batch: as it looks a chunk's groups up it prefetches the
// index slot of the entry twelve ahead, resolves and prefetches the
// group eight ahead and its awake state four ahead, and as it steps the
// chunk's heartbeats it prefetches the lines of the node four ahead that
// a heartbeat touches, so that the misses of several entries overlap.
package multiraft
