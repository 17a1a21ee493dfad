package multiraft

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/election"
)

// GroupID identifies a Raft group.
type GroupID uint64

// Batch is one transport message between two hosts: everything one host
// sends another at one time. A Batch with nothing in it is a liveness
// message.
type Batch struct {
	From, To election.ID // node IDs of the sending and receiving hosts
	// Msgs are election messages of single groups, sent at once: votes,
	// pre-votes, leadership transfers, and heartbeats and their answers
	// when the sender does not coalesce. Their From and To must be the
	// Batch's.
	Msgs []GroupMessage
	// Heartbeats are coalesced heartbeats: From, the leader of each
	// group, heartbeats To's replica in the entry's term.
	Heartbeats []Heartbeat
	// Responses are coalesced answers to heartbeats.
	Responses []HeartbeatResponse
	// Controls are hibernation and wake messages.
	Controls []Control
	// Tick marks the batch of a heartbeat tick: it carries a heartbeat of
	// every awake group the sender leads with To as a voter, so a
	// follower whose group it lacks knows its leader silent (see
	// overload.go). A receiver must not trust a Tick batch from a sender
	// that does not coalesce.
	Tick bool
}

// GroupMessage is an election message of one group.
type GroupMessage struct {
	Group GroupID
	Msg   election.Message
}

// Heartbeat is one group's heartbeat in a coalesced Batch; Sent as in
// election.Message (the leader's wheel time when it sent it).
type Heartbeat struct {
	Group GroupID
	Term  uint64
	Sent  time.Duration
}

// HeartbeatResponse is one group's answer to a heartbeat in a coalesced
// Batch; Granted and Sent (echoed from the heartbeat, for the leader's
// lease) as in election.MsgHeartbeatResp.
type HeartbeatResponse struct {
	Group   GroupID
	Term    uint64
	Granted bool
	Sent    time.Duration
}

// ControlKind is the kind of a Control message.
type ControlKind uint8

// Control message kinds.
const (
	// Hibernate: the leader of Term hibernated the group; the follower
	// hibernates too if it follows that leader in Term.
	Hibernate ControlKind = iota + 1
	// HibernateAck answers Hibernate; OK false makes the leader wake the
	// group again.
	HibernateAck
	// Wake asks the leader of a hibernating group to wake it (a follower
	// woke up, by a local call or a message of another replica).
	Wake
)

// String returns the kind's name.
func (k ControlKind) String() string {
	switch k {
	case Hibernate:
		return "Hibernate"
	case HibernateAck:
		return "HibernateAck"
	case Wake:
		return "Wake"
	}
	return fmt.Sprintf("ControlKind(%d)", uint8(k))
}

// Control is a hibernation message of one group.
type Control struct {
	Kind  ControlKind
	Group GroupID
	Term  uint64
	OK    bool // HibernateAck only
}

// Len returns the number of group entries in b (0 for a liveness message).
func (b Batch) Len() int {
	return len(b.Msgs) + len(b.Heartbeats) + len(b.Responses) + len(b.Controls)
}

// Release gives b's coalesced entries (Heartbeats, Responses) back for
// the Hosts of this process to reuse in the batches they make, and
// empties b. A Transport calls it when nothing reads the batch any more:
// once it has encoded it, or once Host.Step returned for it and no other
// delivery of it is pending. It is optional (a batch never released is
// garbage like any other) and once per batch: the entries of a released
// batch may already be another batch's.
func (b *Batch) Release() {
	hbPool.put(b.Heartbeats)
	respPool.put(b.Responses)
	*b = Batch{}
}

// Transport carries a host's batches to its peer hosts. The Host calls
// Send with no lock of its own held, so Send may deliver synchronously,
// into any Host, the sender included. It should not block for long: the
// sender's other call-outs wait behind it. It may drop, delay, duplicate
// and reorder batches, as Raft tolerates.
type Transport interface {
	Send(b Batch)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(b Batch)

// Send calls f(b).
func (f TransportFunc) Send(b Batch) { f(b) }
