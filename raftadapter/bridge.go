package raftadapter

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/raftick/raftick/election"
)

// PreVoteTransport is a hashicorp/raft transport that also carries
// pre-votes. raft.NetworkTransport (raft.NewTCPTransport) and
// raft.InmemTransport implement it.
type PreVoteTransport interface {
	raft.Transport
	raft.WithPreVote
}

// Stepper is the part of an election node the bridge drives.
// *election.Node implements it.
type Stepper interface {
	Step(m election.Message)
	Status() election.Status
}

// Bridge defaults and limits.
const (
	// DefaultMaxInFlight is BridgeConfig.MaxInFlight's default.
	DefaultMaxInFlight = 2
	// MaxMaxInFlight is the largest BridgeConfig.MaxInFlight accepted.
	MaxMaxInFlight = 1024
	// DefaultRespondTimeout is BridgeConfig.RespondTimeout's default.
	DefaultRespondTimeout = 500 * time.Millisecond
)

// Bridge errors. Inbound RPCs the bridge cannot answer with the node's
// response are answered with one of these, so the remote caller sees an
// error rather than waiting out its own timeout. Requests the node would
// drop as malformed (a zero term, or a term or last log term above
// election.MaxTerm) are answered at once with an error wrapping
// election.ErrMalformed.
var (
	// ErrBridgeClosed answers inbound RPCs pending or arriving when the
	// bridge is closed.
	ErrBridgeClosed = errors.New("raftadapter: bridge closed")
	// ErrBridgeStarted is returned by a second Bridge.Start.
	ErrBridgeStarted = errors.New("raftadapter: bridge already started")
	// ErrSuperseded answers an inbound request the node had not answered
	// yet when a newer request of the same kind from the same peer arrived.
	ErrSuperseded = errors.New("raftadapter: request superseded by a newer one from the same peer")
	// ErrRespondTimeout answers an inbound request the node did not answer
	// within BridgeConfig.RespondTimeout (it ignored it, or was stopped).
	ErrRespondTimeout = errors.New("raftadapter: node did not answer in time")
	// ErrNotElection answers inbound RPCs that are not leader election:
	// AppendEntries carrying log entries or a log position, InstallSnapshot.
	ErrNotElection = errors.New("raftadapter: the bridge carries leader election only (pre-vote, vote, empty AppendEntries, TimeoutNow)")
	// ErrUnknownSender answers inbound RPCs whose RPCHeader.ID is not a
	// configured peer.
	ErrUnknownSender = errors.New("raftadapter: RPC from a node that is not a configured peer")
)

// ServerIDOf returns the hashicorp server ID the bridge uses for election
// node id: its decimal form, e.g. "3".
func ServerIDOf(id election.ID) raft.ServerID {
	return raft.ServerID(strconv.FormatUint(uint64(id), 10))
}

// ElectionID parses a server ID made by ServerIDOf.
func ElectionID(s raft.ServerID) (election.ID, error) {
	v, err := strconv.ParseUint(string(s), 10, 64)
	if err != nil || v == 0 {
		return election.None, fmt.Errorf("raftadapter: server ID %q is not a non-zero election.ID", s)
	}
	return election.ID(v), nil
}

// BridgeConfig configures a Bridge. Start from DefaultBridgeConfig.
type BridgeConfig struct {
	// ID is the local election node's ID; not election.None.
	ID election.ID
	// Peers maps every other voter to its transport address (for
	// NetworkTransport "host:port", for InmemTransport the address it was
	// created with). It must not contain ID or election.None, nor empty
	// addresses. Messages to nodes not listed are dropped and counted.
	Peers map[election.ID]raft.ServerAddress
	// MaxInFlight bounds the outbound RPCs in flight to one peer, per lane:
	// heartbeats have one lane, pre-votes, votes and TimeoutNow the other,
	// so a slow peer's heartbeats never crowd out an election. A message
	// that finds its lane full is dropped and counted (Raft tolerates
	// loss). In [1, MaxMaxInFlight]; 0 means DefaultMaxInFlight (2).
	MaxInFlight int
	// RespondTimeout bounds how long an inbound request waits for the
	// node's answer before the bridge answers it with ErrRespondTimeout.
	// It should be below the remote transport's own timeout. >= 0; 0 means
	// DefaultRespondTimeout (500ms).
	RespondTimeout time.Duration
	// Logger receives the bridge's logs; nil means the module's default
	// (warnings and errors to standard error, named raftick.raftadapter);
	// hclog.NewNullLogger() discards them.
	Logger hclog.Logger
}

// DefaultBridgeConfig returns a BridgeConfig with the defaults; ID and
// Peers must still be set.
func DefaultBridgeConfig() BridgeConfig {
	return BridgeConfig{MaxInFlight: DefaultMaxInFlight, RespondTimeout: DefaultRespondTimeout}
}

// Validate reports the first invalid field of c, or nil.
func (c BridgeConfig) Validate() error {
	if c.ID == election.None {
		return fieldErr("BridgeConfig.ID", c.ID, "must not be 0 (election.None)")
	}
	for id, addr := range c.Peers {
		switch {
		case id == election.None:
			return fieldErr("BridgeConfig.Peers", id, "must not contain 0 (election.None)")
		case id == c.ID:
			return fieldErr("BridgeConfig.Peers", id, "must not contain the local ID")
		case addr == "":
			return fieldErr(fmt.Sprintf("BridgeConfig.Peers[%d]", id), addr, "has an empty address")
		}
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > MaxMaxInFlight {
		return fieldErr("BridgeConfig.MaxInFlight", c.MaxInFlight, "must be in [1, %d] (0 means %d)", MaxMaxInFlight, DefaultMaxInFlight)
	}
	if c.RespondTimeout < 0 {
		return fieldErr("BridgeConfig.RespondTimeout", c.RespondTimeout, "must not be negative (0 means %v)", DefaultRespondTimeout)
	}
	if c.RespondTimeout != 0 && c.RespondTimeout < MinCommitTimeout {
		return fieldErr("BridgeConfig.RespondTimeout", c.RespondTimeout, "is below the floor of %v: no RPC is answered sooner (time.Duration counts nanoseconds: did you forget a unit?)", MinCommitTimeout)
	}
	return nil
}

// BridgeStats counts what a Bridge did. Counters only grow. Every message
// and RPC the bridge does not carry through is in one of the Dropped*,
// Rejected, Unmatched, Superseded, TimedOut or RPCErrors counters.
type BridgeStats struct {
	Sent        int64 // outbound requests handed to the hashicorp transport
	RPCErrors   int64 // outbound RPCs that failed in the transport (no answer reaches the node)
	Delivered   int64 // answers to outbound RPCs stepped into the node
	Received    int64 // inbound RPCs taken from the transport's Consumer
	Stepped     int64 // inbound requests stepped into the node
	Answered    int64 // inbound RPCs answered with the node's response (TimeoutNow: at once)
	Rejected    int64 // inbound RPCs answered with an error at once: unknown sender, not election (ErrNotElection), malformed (election.ErrMalformed)
	Superseded  int64 // inbound requests answered with ErrSuperseded
	TimedOut    int64 // inbound requests answered with ErrRespondTimeout
	Unmatched   int64 // node responses matching no pending inbound request (late, superseded or unsolicited)
	DroppedFull int64 // outbound requests dropped: MaxInFlight reached for the peer's lane
	// DroppedUnknown counts outbound messages to a node not in Peers (or
	// to the local node) and messages of an invalid type.
	DroppedUnknown int64
	// DroppedClosed counts messages sent, and answers arriving, after
	// Close or before Start, and inbound requests pending at Close
	// (answered with ErrBridgeClosed).
	DroppedClosed int64
}

// Lanes of outbound RPCs per peer.
const (
	laneHeartbeat = iota
	laneElection
	numLanes
)

type bridgePeer struct {
	id    election.ID
	sid   raft.ServerID
	addr  raft.ServerAddress
	lanes [numLanes]chan struct{} // semaphores
}

type pendingKey struct {
	from election.ID
	typ  election.MsgType // request type
}

type pendingRPC struct {
	rpc   raft.RPC
	timer *time.Timer
}

// Bridge is an election.Transport over a hashicorp/raft transport, so that
// election nodes talk over hashicorp's wire (msgpack over TCP with
// NetworkTransport, or InmemTransport):
//
//	election message     hashicorp RPC
//	MsgPreVote       ->  RequestPreVote (raft.WithPreVote)
//	MsgVote          ->  RequestVote (LeadershipTransfer = Message.Transfer)
//	MsgHeartbeat     ->  AppendEntries with no entries (prev log 0, commit 0:
//	                     NetworkTransport's heartbeat shape)
//	MsgTimeoutNow    ->  TimeoutNow
//	Msg*Resp         <-  the RPC's response
//
// hashicorp RPCs are synchronous; election.Node is asynchronous (Step in,
// Transport.Send out). The bridge joins the two:
//
//   - Outbound: Send never blocks. A request starts one goroutine that makes
//     the RPC and steps the answer into the node as the matching Msg*Resp.
//     At most MaxInFlight RPCs per peer and lane are in flight; beyond that
//     messages are dropped and counted. An RPC is bounded by the hashicorp
//     transport's own timeout (NewInmemTransportWithTimeout, NetworkTransport's
//     Timeout); a failed RPC steps nothing and is counted.
//   - Inbound: one goroutine reads the transport's Consumer, turns each RPC
//     into a Message and steps it into the node. The RPC is parked in a
//     pending table keyed by (sender, request type) until the node's answer
//     comes back through Send, which completes it. A newer request of the
//     same kind from the same sender supersedes a parked one (answered with
//     ErrSuperseded: the node answers in order, so the newer answer is the
//     one the sender still waits for); a request not answered within
//     RespondTimeout is answered with ErrRespondTimeout. TimeoutNow is
//     answered as soon as it is stepped (its response is empty).
//
// Two things do not survive the trip: Message.Priority (hashicorp's wire has
// no field for it) and the term of TimeoutNow (TimeoutNowRequest carries
// none; the bridge stamps the receiving node's current term, so the node
// campaigns at once, as a hashicorp node does on TimeoutNow). hashicorp's
// lease and log fields are sent as zero.
//
// The bridge does not own the hashicorp transport: close it (and, for
// NetworkTransport, CloseStreams) after Close.
type Bridge struct {
	cfg    BridgeConfig
	tr     PreVoteTransport
	header raft.RPCHeader
	leader []byte // EncodePeer of the local node
	logger hclog.Logger
	peers  map[election.ID]*bridgePeer

	mu      sync.Mutex
	node    Stepper
	closed  bool
	pending map[pendingKey]*pendingRPC

	closeCh chan struct{}
	wg      sync.WaitGroup

	sent, rpcErrors, delivered, received, stepped, answered, rejected,
	superseded, timedOut, unmatched, droppedFull, droppedUnknown, droppedClosed atomic.Int64
}

var _ election.Transport = (*Bridge)(nil)

// NewBridge returns a bridge for the election node cfg.ID over tr. It
// carries nothing inbound until Start; outbound requests sent before Start
// are carried but their answers are dropped (counted).
func NewBridge(cfg BridgeConfig, tr PreVoteTransport) (*Bridge, error) {
	if tr == nil {
		return nil, errors.New("raftadapter: NewBridge: nil transport")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.RespondTimeout == 0 {
		cfg.RespondTimeout = DefaultRespondTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = defaultLogger()
	}
	local := ServerIDOf(cfg.ID)
	b := &Bridge{
		cfg:     cfg,
		tr:      tr,
		leader:  tr.EncodePeer(local, tr.LocalAddr()),
		logger:  cfg.Logger,
		peers:   make(map[election.ID]*bridgePeer, len(cfg.Peers)),
		pending: map[pendingKey]*pendingRPC{},
		closeCh: make(chan struct{}),
	}
	b.header = raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(local), Addr: b.leader}
	for id, addr := range cfg.Peers {
		p := &bridgePeer{id: id, sid: ServerIDOf(id), addr: addr}
		for i := range p.lanes {
			p.lanes[i] = make(chan struct{}, cfg.MaxInFlight)
		}
		b.peers[id] = p
	}
	return b, nil
}

// Start attaches the node and starts carrying inbound RPCs to it. It
// returns ErrBridgeStarted on a second call and ErrBridgeClosed after
// Close.
func (b *Bridge) Start(node Stepper) error {
	if node == nil {
		return errors.New("raftadapter: Bridge.Start: nil node")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return ErrBridgeClosed
	case b.node != nil:
		return ErrBridgeStarted
	}
	b.node = node
	b.wg.Add(1)
	go b.dispatch()
	return nil
}

// Close stops the bridge: inbound RPCs pending or arriving are answered
// with ErrBridgeClosed, later Sends are dropped (counted), and Close waits
// until the inbound goroutine and every outbound RPC have finished (an
// outbound RPC can take up to the transport's timeout). It does not close
// the hashicorp transport. Idempotent.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	pend := b.pending
	b.pending = nil
	b.mu.Unlock()
	close(b.closeCh)
	for _, p := range pend {
		p.timer.Stop()
		b.droppedClosed.Add(1)
		p.rpc.Respond(nil, ErrBridgeClosed)
	}
	b.wg.Wait()
	return nil
}

// Stats returns the bridge's counters.
func (b *Bridge) Stats() BridgeStats {
	return BridgeStats{
		Sent: b.sent.Load(), RPCErrors: b.rpcErrors.Load(), Delivered: b.delivered.Load(),
		Received: b.received.Load(), Stepped: b.stepped.Load(), Answered: b.answered.Load(),
		Rejected: b.rejected.Load(), Superseded: b.superseded.Load(), TimedOut: b.timedOut.Load(),
		Unmatched: b.unmatched.Load(), DroppedFull: b.droppedFull.Load(),
		DroppedUnknown: b.droppedUnknown.Load(), DroppedClosed: b.droppedClosed.Load(),
	}
}

// Send implements election.Transport. It never blocks: requests start an
// RPC in the background (or are dropped when the peer's lane is full);
// responses complete the pending inbound RPC they answer.
func (b *Bridge) Send(m election.Message) {
	switch m.Type {
	case election.MsgPreVoteResp, election.MsgVoteResp, election.MsgHeartbeatResp:
		b.answer(m)
	case election.MsgPreVote, election.MsgVote, election.MsgTimeoutNow:
		b.request(m, laneElection)
	case election.MsgHeartbeat:
		b.request(m, laneHeartbeat)
	default:
		b.droppedUnknown.Add(1)
	}
}

// request starts the RPC for outbound request m.
func (b *Bridge) request(m election.Message, lane int) {
	p := b.peers[m.To]
	if p == nil {
		b.droppedUnknown.Add(1)
		b.logger.Trace("dropped message to unknown peer", "msg", m.String())
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.droppedClosed.Add(1)
		return
	}
	sem := p.lanes[lane]
	select {
	case sem <- struct{}{}:
	default:
		b.mu.Unlock()
		b.droppedFull.Add(1)
		b.logger.Trace("dropped message: peer lane full", "msg", m.String())
		return
	}
	b.wg.Add(1) // under mu, so Close's Wait sees it
	b.mu.Unlock()
	b.sent.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() { <-sem }()
		b.call(p, m)
	}()
}

// call makes the RPC for m and steps the answer into the node.
func (b *Bridge) call(p *bridgePeer, m election.Message) {
	var (
		err   error
		reply election.Message
	)
	switch m.Type {
	case election.MsgPreVote:
		req := &raft.RequestPreVoteRequest{RPCHeader: b.header, Term: m.Term,
			LastLogIndex: m.LastLogIndex, LastLogTerm: m.LastLogTerm}
		var resp raft.RequestPreVoteResponse
		err = b.tr.RequestPreVote(p.sid, p.addr, req, &resp)
		reply = election.Message{Type: election.MsgPreVoteResp, Term: resp.Term, Granted: resp.Granted}
	case election.MsgVote:
		req := &raft.RequestVoteRequest{RPCHeader: b.header, Term: m.Term, Candidate: b.leader,
			LastLogIndex: m.LastLogIndex, LastLogTerm: m.LastLogTerm, LeadershipTransfer: m.Transfer}
		var resp raft.RequestVoteResponse
		err = b.tr.RequestVote(p.sid, p.addr, req, &resp)
		reply = election.Message{Type: election.MsgVoteResp, Term: resp.Term, Granted: resp.Granted}
	case election.MsgHeartbeat:
		req := &raft.AppendEntriesRequest{RPCHeader: b.header, Term: m.Term, Leader: b.leader}
		var resp raft.AppendEntriesResponse
		err = b.tr.AppendEntries(p.sid, p.addr, req, &resp)
		// The RPC pairs the answer with this heartbeat: echo its send
		// time for the leader's lease (election.Message.Sent).
		reply = election.Message{Type: election.MsgHeartbeatResp, Term: resp.Term, Granted: resp.Success, Sent: m.Sent}
	case election.MsgTimeoutNow:
		var resp raft.TimeoutNowResponse
		err = b.tr.TimeoutNow(p.sid, p.addr, &raft.TimeoutNowRequest{RPCHeader: b.header}, &resp)
	}
	if err != nil {
		b.rpcErrors.Add(1)
		b.logger.Debug("RPC failed", "msg", m.String(), "peer-address", p.addr, "error", err)
		return
	}
	if reply.Type == 0 {
		return // TimeoutNow: nothing to step
	}
	reply.From, reply.To = p.id, b.cfg.ID
	b.mu.Lock()
	node, closed := b.node, b.closed
	b.mu.Unlock()
	if node == nil || closed {
		b.droppedClosed.Add(1)
		return
	}
	b.delivered.Add(1)
	node.Step(reply)
}

// requestTypeOf returns the request type a response type answers.
func requestTypeOf(t election.MsgType) election.MsgType {
	switch t {
	case election.MsgPreVoteResp:
		return election.MsgPreVote
	case election.MsgVoteResp:
		return election.MsgVote
	case election.MsgHeartbeatResp:
		return election.MsgHeartbeat
	}
	return 0
}

// answer completes the pending inbound RPC that the node's response m
// answers.
func (b *Bridge) answer(m election.Message) {
	key := pendingKey{from: m.To, typ: requestTypeOf(m.Type)}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.droppedClosed.Add(1)
		return
	}
	p := b.pending[key]
	if p == nil {
		b.mu.Unlock()
		b.unmatched.Add(1)
		b.logger.Trace("response matches no pending request", "msg", m.String())
		return
	}
	delete(b.pending, key)
	b.mu.Unlock()
	p.timer.Stop()
	var resp any
	switch m.Type {
	case election.MsgPreVoteResp:
		resp = &raft.RequestPreVoteResponse{RPCHeader: b.header, Term: m.Term, Granted: m.Granted}
	case election.MsgVoteResp:
		resp = &raft.RequestVoteResponse{RPCHeader: b.header, Term: m.Term, Granted: m.Granted}
	case election.MsgHeartbeatResp:
		resp = &raft.AppendEntriesResponse{RPCHeader: b.header, Term: m.Term, Success: m.Granted}
	}
	// Count before answering: the caller may read Stats as soon as its RPC
	// returns.
	b.answered.Add(1)
	p.rpc.Respond(resp, nil)
}

// dispatch carries inbound RPCs until Close.
func (b *Bridge) dispatch() {
	defer b.wg.Done()
	in := b.tr.Consumer()
	for {
		select {
		case rpc := <-in:
			b.inbound(rpc)
		case <-b.closeCh:
			return
		}
	}
}

// inbound turns one RPC into a Step and parks it until the node answers.
func (b *Bridge) inbound(rpc raft.RPC) {
	b.received.Add(1)
	m, err := b.toMessage(rpc)
	if err != nil {
		b.rejected.Add(1)
		b.logger.Debug("rejected inbound RPC", "command", fmt.Sprintf("%T", rpc.Command), "error", err)
		if rpc.Reader != nil { // InstallSnapshot: consume the stream, as hashicorp does
			_, _ = io.Copy(io.Discard, rpc.Reader)
		}
		rpc.Respond(nil, err)
		return
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.droppedClosed.Add(1)
		rpc.Respond(nil, ErrBridgeClosed)
		return
	}
	node := b.node
	if m.Type == election.MsgTimeoutNow {
		b.mu.Unlock()
		if m.Term = node.Status().Term; m.Term == 0 {
			m.Term = 1
		}
		b.stepped.Add(1)
		node.Step(m)
		b.answered.Add(1)
		rpc.Respond(&raft.TimeoutNowResponse{RPCHeader: b.header}, nil)
		return
	}
	key := pendingKey{from: m.From, typ: m.Type}
	if old := b.pending[key]; old != nil {
		old.timer.Stop()
		b.superseded.Add(1)
		old.rpc.Respond(nil, ErrSuperseded)
	}
	p := &pendingRPC{rpc: rpc}
	p.timer = time.AfterFunc(b.cfg.RespondTimeout, func() { b.expire(key, p) })
	b.pending[key] = p
	b.mu.Unlock()
	b.stepped.Add(1)
	node.Step(m)
}

// expire answers p with ErrRespondTimeout if it is still pending.
func (b *Bridge) expire(key pendingKey, p *pendingRPC) {
	b.mu.Lock()
	if b.pending[key] != p {
		b.mu.Unlock()
		return
	}
	delete(b.pending, key)
	b.mu.Unlock()
	b.timedOut.Add(1)
	p.rpc.Respond(nil, ErrRespondTimeout)
}

// toMessage converts an inbound RPC into the election request it carries,
// or returns the error to answer it with: the RPC is not election, its
// sender is unknown or the request is malformed (election.Message.Validate).
// MsgTimeoutNow's Term is left for the caller to stamp.
func (b *Bridge) toMessage(rpc raft.RPC) (election.Message, error) {
	wh, ok := rpc.Command.(raft.WithRPCHeader)
	if !ok {
		return election.Message{}, fmt.Errorf("%w: %T", ErrNotElection, rpc.Command)
	}
	from, err := ElectionID(raft.ServerID(wh.GetRPCHeader().ID))
	if err != nil || b.peers[from] == nil {
		return election.Message{}, fmt.Errorf("%w: %q", ErrUnknownSender, wh.GetRPCHeader().ID)
	}
	m := election.Message{From: from, To: b.cfg.ID}
	switch cmd := rpc.Command.(type) {
	case *raft.RequestPreVoteRequest:
		m.Type, m.Term, m.LastLogIndex, m.LastLogTerm = election.MsgPreVote, cmd.Term, cmd.LastLogIndex, cmd.LastLogTerm
	case *raft.RequestVoteRequest:
		m.Type, m.Term, m.LastLogIndex, m.LastLogTerm = election.MsgVote, cmd.Term, cmd.LastLogIndex, cmd.LastLogTerm
		m.Transfer = cmd.LeadershipTransfer
	case *raft.AppendEntriesRequest:
		if len(cmd.Entries) > 0 || cmd.PrevLogEntry != 0 || cmd.PrevLogTerm != 0 || cmd.LeaderCommitIndex != 0 {
			return election.Message{}, fmt.Errorf("%w: AppendEntries with log entries or positions", ErrNotElection)
		}
		m.Type, m.Term = election.MsgHeartbeat, cmd.Term
	case *raft.TimeoutNowRequest:
		m.Type = election.MsgTimeoutNow
		return m, nil // no term to check: the caller stamps the node's
	default:
		return election.Message{}, fmt.Errorf("%w: %T", ErrNotElection, rpc.Command)
	}
	// A request the node would drop as malformed (term 0 or above
	// election.MaxTerm) is answered now rather than after RespondTimeout.
	if err := m.Validate(); err != nil {
		return election.Message{}, fmt.Errorf("raftadapter: %w", err)
	}
	return m, nil
}
