package election

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Observer is a subscription to a node's events through a channel, as
// hashicorp/raft's raft.Observer: create one with NewObserver and attach it
// with Node.RegisterObserver. Unlike Config.Observer, an Observer never
// holds the goroutine that produced the event, which for a timer's event
// is the wheel's driver, shared by every group on the wheel.
//
// A non-blocking Observer hands each event to its channel if the channel
// can take it at once and otherwise drops it, counting it in Dropped.
//
// A blocking Observer drops nothing: events wait in the Observer's own
// queue, in order, and a goroutine of the Observer (running only while
// events wait) blocks on the channel send until the reader takes them.
// That goroutine is the only thing that ever blocks, so the queue grows
// without bound while nobody reads; Deregister the Observer (from every
// node it is registered with) to discard what waits and end the
// goroutine.
//
// An Observer may be registered with several nodes; their events then
// interleave on its channel (Event.Node and Event.Seq tell them apart).
type Observer struct {
	ch       chan Event
	blocking bool
	filter   func(Event) bool

	observed, dropped atomic.Int64

	mu      sync.Mutex
	queue   []Event       // blocking: events waiting for the reader
	pumping bool          // blocking: the delivery goroutine runs
	nodes   int           // registrations
	stop    chan struct{} // closed when the last registration ends; replaced on the next
}

// NewObserver returns an Observer that sends a node's events to ch. If
// filter is not nil, only events for which it returns true are sent (and
// counted); it runs on the goroutine that produced the event, without any
// lock of the node, and must be quick and must not block. See Observer for
// what blocking means. A nil ch gives an Observer that only counts.
func NewObserver(ch chan Event, blocking bool, filter func(Event) bool) *Observer {
	return &Observer{ch: ch, blocking: blocking, filter: filter, stop: make(chan struct{})}
}

// Observed returns how many events passed the filter, delivered or not.
func (o *Observer) Observed() int64 { return o.observed.Load() }

// Dropped returns how many events a non-blocking Observer could not hand
// to its channel, plus the events a blocking one discarded when its last
// registration ended.
func (o *Observer) Dropped() int64 { return o.dropped.Load() }

// deliver hands e to the observer; it never blocks.
func (o *Observer) deliver(e Event) {
	if o.filter != nil && !o.filter(e) {
		return
	}
	o.observed.Add(1)
	if o.ch == nil {
		return
	}
	if !o.blocking {
		select {
		case o.ch <- e:
		default:
			o.dropped.Add(1)
		}
		return
	}
	o.mu.Lock()
	if o.nodes == 0 {
		// Deregistered while this flush was under way.
		o.mu.Unlock()
		o.dropped.Add(1)
		return
	}
	o.queue = append(o.queue, e)
	start := !o.pumping
	o.pumping = true
	stop := o.stop
	o.mu.Unlock()
	if start {
		go o.pump(stop)
	}
}

// pump sends the queued events of a blocking observer, in order, and exits
// when the queue is empty or the observer's registrations ended (stop).
func (o *Observer) pump(stop chan struct{}) {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.pumping = false
			o.queue = nil
			o.mu.Unlock()
			return
		}
		e := o.queue[0]
		o.queue[0] = Event{}
		o.queue = o.queue[1:]
		o.mu.Unlock()
		select {
		case o.ch <- e:
		case <-stop:
			o.mu.Lock()
			if o.nodes > 0 {
				// Registered again since: keep delivering.
				o.queue = slices.Insert(o.queue, 0, e)
				stop = o.stop
				o.mu.Unlock()
				continue
			}
			o.dropped.Add(int64(len(o.queue)) + 1)
			o.queue = nil
			o.pumping = false
			o.mu.Unlock()
			return
		}
	}
}

func (o *Observer) registered() {
	o.mu.Lock()
	o.nodes++
	o.mu.Unlock()
}

func (o *Observer) deregistered() {
	o.mu.Lock()
	o.nodes--
	if o.nodes == 0 {
		close(o.stop)
		o.stop = make(chan struct{})
		if !o.pumping {
			o.queue = nil
		}
	}
	o.mu.Unlock()
}

// observation is the part of a Node that serves Observers, LeaderCh and
// WaitLeader, and metrics. Guarded by the node's mutex.
type observation struct {
	// observers is replaced, never modified, so that a flush can use the
	// slice it read under the lock after releasing it.
	observers []*Observer
	// leaderCh is LeaderCh's channel, nil until the first call;
	// leaderSent the last value put into it.
	leaderCh   chan bool
	leaderSent bool
	// leaderWait is closed when a leader becomes known (or the node
	// stops); nil while nobody waits.
	leaderWait chan struct{}
}

// RegisterObserver attaches o to the node: every later event is handed to
// o (see Observer) on the goroutine that produced it, after the node's
// lock is released. Registering the same Observer twice with one node does
// nothing the second time. A nil o is ignored.
func (n *Node) RegisterObserver(o *Observer) {
	if o == nil {
		return
	}
	n.lock()
	defer n.mu.Unlock()
	if slices.Contains(n.obs.observers, o) {
		return
	}
	o.registered()
	n.obs.observers = append(slices.Clip(n.obs.observers), o)
}

// DeregisterObserver detaches o from the node; it receives no later event
// of the node. If o is no longer registered with any node, the events a
// blocking o still holds are discarded (counted in Dropped) and its
// delivery goroutine ends. Deregistering an Observer that is not
// registered does nothing.
func (n *Node) DeregisterObserver(o *Observer) {
	n.lock()
	i := slices.Index(n.obs.observers, o)
	if i < 0 {
		n.mu.Unlock()
		return
	}
	n.obs.observers = slices.Delete(slices.Clone(n.obs.observers), i, i+1)
	n.mu.Unlock()
	o.deregistered()
}

// LeaderCh returns a channel that receives true when the node becomes
// leader and false when it stops being leader (a step-down, or Stop). The
// channel holds one value and the latest wins: a reader that falls behind
// sees the current state, not every change, as with hashicorp/raft's
// LeaderCh. Every call returns the same channel; changes before the first
// call are not reported, except that a node that is leader at the first
// call finds true in the channel. The node never blocks on it.
func (n *Node) LeaderCh() <-chan bool {
	n.lock()
	defer n.mu.Unlock()
	if n.obs.leaderCh == nil {
		n.obs.leaderCh = make(chan bool, 1)
		if n.role == Leader && !n.stopped {
			n.setLeaderCh(true)
		}
	}
	return n.obs.leaderCh
}

// setLeaderCh puts v in the leader channel, replacing an unread value, if
// it differs from the last value put. Called with n.mu held, so values
// arrive in the order of the changes.
func (n *Node) setLeaderCh(v bool) {
	ch := n.obs.leaderCh
	if ch == nil || n.obs.leaderSent == v {
		return
	}
	n.obs.leaderSent = v
	select {
	case <-ch:
	default:
	}
	ch <- v // cannot block: the buffer is empty and only we send, under n.mu
}

// WaitLeader waits until the node knows a leader (itself included) and
// returns its ID. It returns ctx.Err() if ctx ends first and ErrStopped if
// the node is or gets stopped. It may be called before Start.
//
// The leader a follower knows may be dead: a follower keeps its leader
// until its election timer finds it silent, so right after the leader
// crashed WaitLeader returns the crashed leader at once. To wait for its
// successor, use WaitLeaderOther.
func (n *Node) WaitLeader(ctx context.Context) (ID, error) { return n.WaitLeaderOther(ctx, None) }

// WaitLeaderOther is WaitLeader for a leader other than old: it waits
// until the node knows a leader (itself included) that is not old, and
// returns its ID. Pass the leader that crashed or was deposed to wait for
// the group's next leader; old None waits for any leader, as WaitLeader.
// If old itself wins a later term, WaitLeaderOther goes on waiting (until
// ctx ends or another node leads): to wait for any leader of a later
// term, watch Status().Term with WaitLeader.
func (n *Node) WaitLeaderOther(ctx context.Context, old ID) (ID, error) {
	for {
		n.lock()
		if n.stopped {
			n.mu.Unlock()
			return None, ErrStopped
		}
		if n.leader != None && n.leader != old {
			id := n.leader
			n.mu.Unlock()
			return id, nil
		}
		if n.obs.leaderWait == nil {
			n.obs.leaderWait = make(chan struct{})
		}
		wait := n.obs.leaderWait
		n.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return None, ctx.Err()
		}
	}
}

// wakeLeaderWaiters releases WaitLeader callers. Called with n.mu held.
func (n *Node) wakeLeaderWaiters() {
	if n.obs.leaderWait != nil {
		close(n.obs.leaderWait)
		n.obs.leaderWait = nil
	}
}

// watched reports whether anyone consumes events: Config.Observer,
// Observers, LeaderCh, WaitLeader or metrics. Without consumers the node
// builds no events at all.
func (n *Node) watched() bool {
	return n.cfg.Observer != nil || len(n.obs.observers) > 0 || n.obs.leaderCh != nil ||
		n.obs.leaderWait != nil || n.metrics != nil
}

// noteEvent reports e, which describes the node right after a change, to
// the metrics, LeaderCh and WaitLeader. Called with n.mu held, so all three
// see the events in the order they happened.
func (n *Node) noteEvent(e *Event) {
	n.metrics.event(e, &n.metricsRole)
	if e.Type == EventRoleChange {
		n.setLeaderCh(e.Role == Leader)
	}
	if e.Leader != None {
		n.wakeLeaderWaiters()
	}
}

// noteStop updates LeaderCh and WaitLeader for Stop. Called with n.mu held.
func (n *Node) noteStop() {
	n.setLeaderCh(false)
	n.wakeLeaderWaiters()
}

// publish hands flushed events to Config.Observer and the Observers, on the
// flushing goroutine without the node's lock.
func (n *Node) publish(evs []Event, observers []*Observer) {
	obs := n.cfg.Observer
	for _, e := range evs {
		if obs != nil {
			obs(e)
		}
		for _, o := range observers {
			o.deliver(e)
		}
	}
}
