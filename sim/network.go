package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/raftick/raftick/election"
)

// Link is a directed network link between two servers.
type Link struct{ From, To election.ID }

// Network is the message and disk model of a simulated cluster.
//
// A message from a to b leaves a when it is sent (a response waits for
// the sender's pending disk writes first, see Disk) and arrives after a
// one-way delay drawn from the link's latency. Messages of a link may
// overtake each other when the distribution is not fixed (reordering by
// latency). Each message is independently lost with probability Loss and
// delivered twice (with two independent delays) with probability
// Duplicate. Partitions are set on the Cluster while it runs; a message
// is dropped if its link is cut when it would arrive.
type Network struct {
	// Latency is the one-way delay of every link not listed in Links.
	// nil means no delay (delivery at the same virtual instant).
	Latency Latency
	// Links overrides Latency for individual directed links.
	Links map[Link]Latency
	// Loss is the probability that a message is dropped; in [0, 1].
	Loss float64
	// Duplicate is the probability that a message is delivered twice; in
	// [0, 1].
	Duplicate float64
	// Disk is the time a write of a server's term and vote takes (fsync).
	// A server's writes are serialized (a write starts when the previous
	// one finished; see GroupCommit), and
	// its responses (vote, pre-vote and heartbeat answers) leave only once
	// every write it issued before them is durable: Raft answers a vote
	// only after persisting it. Requests (vote requests, heartbeats) are
	// sent while the sender's own write is in flight, as the Raft paper
	// allows a leader to write its log in parallel with replicating it.
	// nil means writes are instantaneous.
	Disk Latency
	// DiskBlocks makes a disk write block its server, as an
	// implementation that writes while holding its lock does (LogCabin):
	// until the write completes, the server's outbound messages (requests
	// too) are held and inbound ones queue, exactly as during Pause.
	DiskBlocks bool
	// GroupCommit merges the writes a server issues at one instant into
	// one. Without it every durable change is a write of its own, as in
	// LogCabin, which writes its metadata once when it adopts a higher
	// term and again when it grants its vote (even though the election
	// package saves both at once).
	GroupCommit bool
	// LeaderWrite charges a disk write to a server when it wins an
	// election, issued before its first heartbeats: the new leader
	// appends a no-op entry of its term to its log (Raft, section 8). With
	// DiskBlocks the first heartbeats wait for it, as in an implementation
	// that appends under its lock.
	LeaderWrite bool
	// LeaderWrites is the number of writes LeaderWrite charges; 0 means 1.
	// LogCabin's 2013 storage (SimpleFileLog::append) writes the entry's
	// file and then the metadata file, each with its fsyncs: 2. In
	// [0, 100].
	LeaderWrites int
	// TimersWait (with DiskBlocks) makes an election or vote timer that
	// comes due while its server is blocked by a disk write act only when
	// the write completes, after the messages that reached the server
	// before it came due: if one of them re-arms the timer (a granted
	// vote, a heartbeat) the expiry is void, and otherwise the new round
	// starts, and its timeout counts, from the end of the write. This is
	// LogCabin's blocking server: its timer thread needs the lock that
	// the RPC handlers hold through their writes, and waiters get the
	// lock in the order they queued for it. Without it a node's timers
	// fire on time during the block and the queued messages are handled
	// after them.
	TimersWait bool
	// RearmAfterTermWrite: a vote granted in a term the voter adopts from
	// the request re-arms the voter's election timer when the term write
	// (the first of its two writes) completes, instead of when the
	// request arrives. LogCabin's handleRequestVote writes the new term
	// (stepDown), then calls setElectionTimer, then writes the vote.
	RearmAfterTermWrite bool
	// SendGap, if set, serializes the requests a server sends (vote
	// requests and heartbeats; not responses): each leaves a SendGap draw
	// after the previous one left, or at once if the server sent nothing
	// for that long, so the k-th message of one broadcast leaves k-1 gaps
	// after the first, in the order the node sends them. This is
	// LogCabin's leader and candidate: one thread per peer issues each RPC
	// while holding the server's lock (RaftConsensus::appendEntries and
	// requestVote build the request and start the RPC before callRPC
	// releases it), so one broadcast's sends follow each other by a lock
	// hold each.
	SendGap Latency `param:"omitzero"`
	// CancelBackoff, if positive, models LogCabin's cancelled RPCs (see
	// rpccancel.go): when a server's role or term changes (a new
	// election, a win, a higher term, a step down, a vote granted, a new
	// leader's heartbeat), each of its requests whose reply has not
	// arrived once the writes of that change end is cancelled: its reply
	// will be discarded, and the server sends that peer nothing until
	// CancelBackoff after the request left; then it sends the latest
	// request it held for the peer if it is still current (a vote request
	// while a candidate of its term, a heartbeat while its leader).
	// LogCabin's RPC_FAILURE_BACKOFF_MS was 2s until 2014-03-19, then half
	// the election timeout.
	CancelBackoff time.Duration `param:"omitzero"`
}

// Validate reports the first invalid field of n, or nil: a *FieldError
// wrapping ErrInvalidConfig.
func (n Network) Validate() error {
	prob := func(name string, p float64) error {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return fieldErr(name, p, "must be a probability in [0, 1]")
		}
		return nil
	}
	if err := prob("Loss", n.Loss); err != nil {
		return err
	}
	if err := prob("Duplicate", n.Duplicate); err != nil {
		return err
	}
	if n.CancelBackoff < 0 {
		return fieldErr("CancelBackoff", n.CancelBackoff, "must not be negative")
	}
	if n.LeaderWrites < 0 || n.LeaderWrites > 100 {
		return fieldErr("LeaderWrites", n.LeaderWrites, "must be in [0, 100] (0 means 1)")
	}
	for l, lat := range n.Links {
		if lat == nil {
			return fieldErr(fmt.Sprintf("Links[%d->%d]", l.From, l.To), "nil", "needs a latency")
		}
	}
	return nil
}

func (n *Network) latency(from, to election.ID) Latency {
	if l, ok := n.Links[Link{from, to}]; ok {
		return l
	}
	return n.Latency
}

// NetStats counts what the network did with the messages of a cluster.
// Every message handed to the network is either delivered, dropped (and
// counted under one reason) or still in flight.
type NetStats struct {
	Sent             int64 // messages handed to the network by nodes
	Delivered        int64 // messages passed to a node's Step
	Duplicated       int64 // extra copies created by Duplicate
	DroppedLoss      int64 // dropped by Loss
	DroppedPartition int64 // link cut when the message would have arrived
	DroppedDown      int64 // destination crashed, not started, or unknown
	Held             int64 // messages held while their sender or receiver was paused (later delivered or dropped)
	DiskWrites       int64 // disk writes (Storage.Save calls that started a write)
	Cancelled        int64 // requests never sent and replies discarded because of a cancelled RPC (Network.CancelBackoff)
}
