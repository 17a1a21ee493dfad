package multiraft

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/election"
)

// setAwake adds g (its node set) to the awake list. h.mu is held.
func (h *Host) setAwake(g *group) {
	g.a.at = len(h.awakeL)
	h.awakeL = append(h.awakeL, g)
	h.awakeN = append(h.awakeN, g.node)
	h.awakeA = append(h.awakeA, g.a)
}

// setAsleep removes g (awake) from the awake list; its awake bit is
// clear already (see hibernate). h.mu is held.
func (h *Host) setAsleep(g *group) {
	i, last := g.a.at, len(h.awakeL)-1
	h.awakeL[i], h.awakeN[i], h.awakeA[i] = h.awakeL[last], h.awakeN[last], h.awakeA[last]
	h.awakeA[i].at = i
	h.awakeL[last], h.awakeN[last], h.awakeA[last] = nil, nil, nil
	h.awakeL, h.awakeN, h.awakeA = h.awakeL[:last], h.awakeN[:last], h.awakeA[:last]
}

// wake wakes a hibernating group: its node is created and resumes from d
// (see election.Node.Resume); ping asks the leader in d to wake its
// replica too. h.mu is held.
func (h *Host) wake(g *group, d election.Dormant, ping bool) error {
	h.stats.Hibernating--
	h.stats.Wakes++
	h.unqueue(g)
	g.wokeAt.Store(int64(h.w.Now()))
	if err := h.startNode(g, d); err != nil {
		return err
	}
	if ping && d.Leader != election.None && d.Leader != h.id {
		h.control(d.Leader, Control{Kind: Wake, Group: g.id, Term: d.Term})
	}
	return nil
}

// startNode creates the group's node and starts it, resuming from d.
// h.mu is held.
func (h *Host) startNode(g *group, d election.Dormant) error {
	cfg := h.ecfg
	cfg.ID, cfg.Voters, cfg.Rand = h.id, g.voters.ids, h.rng
	if cfg.Lagging == nil {
		cfg.Lagging = func(s election.Silence) bool { return h.lagging(g, s) }
	}
	if h.metrics != nil && h.cfg.GroupLabels {
		cfg.MetricsLabels = groupLabels(cfg.MetricsLabels, g.id)
	}
	if h.cfg.Observer != nil {
		id := g.id
		cfg.Observer = func(e election.Event) { h.emit(effect{obs: true, group: id, e: e}) }
	}
	var lv election.LogView = emptyLog
	if g.log != nil {
		lv = g.log
	}
	a := &awakeState{lastActive: h.w.Now()}
	ns := &nodeStore{h: h, g: g, a: a}
	n, err := election.NewDeferredNode(cfg, h.w, groupTransport{h, g.id}, ns, lv)
	if err != nil {
		return fmt.Errorf("multiraft: group %d: %w", g.id, err)
	}
	ns.n = n
	if err := n.Resume(d); err != nil {
		g.dormant = d
		h.stats.Hibernating++
		return fmt.Errorf("multiraft: group %d: %w", g.id, err)
	}
	a.nodeTerm.Store(n.Status().Term)
	g.node, g.a, g.dormant, g.behind = n, a, election.Dormant{}, 0
	h.setAwake(g)
	g.fast.Store(n)
	h.groups.word(g).setAwake()
	h.listLeader(g)
	return nil
}

// hibernate puts an awake group to sleep; it reports whether the node
// agreed. h.mu is held.
func (h *Host) hibernate(g *group) bool {
	w := h.groups.word(g)
	// A Touch from now on takes mu; one before is seen here.
	if t, ok := w.sleep(); ok && h.w.Now()-t < h.cfg.HibernateAfter {
		w.setAwake()
		return false
	}
	// A Step on its lock-free path from now on takes mu; one that found
	// the node before steps into it, and after Hibernate the node ignores
	// the message (lost, as Raft allows).
	g.fast.Store(nil)
	d, err := g.node.Hibernate()
	if err != nil {
		g.fast.Store(g.node)
		w.setAwake()
		return false
	}
	h.setAsleep(g)
	if g.fo > 0 {
		h.land(g)
	}
	g.node, g.a, g.dormant = nil, nil, d
	h.stats.Hibernating++
	h.stats.Hibernations++
	return true
}

// wakeFor wakes a hibernating group for message m from peer from, in the
// safe state for it. h.mu is held.
func (h *Host) wakeFor(g *group, from election.ID, m election.Message) error {
	d := g.dormant
	// moved: the group went on to a higher term.
	moved := m.Term > d.Term && m.Type != election.MsgPreVote && !(m.Type == election.MsgPreVoteResp && m.Granted)
	switch {
	case d.Leader == h.id && moved:
		// A hibernating leader holds no lease: it starts as a plain
		// follower.
		return h.wake(g, election.Dormant{}, false)
	case d.Leader == h.id:
		return h.wake(g, d, false)
	case !h.leaderAlive(d.Leader):
		return h.wake(g, h.orphaned(g, h.peers[d.Leader], false), false)
	case moved:
		// The replica still knows d.Leader and when it last heard from
		// it (d.Contact, kept up by the heartbeats answered asleep):
		// resumed so, it refuses a vote inside the lease those answers
		// gave, as an awake follower would with LeaderStickiness.
		return h.wake(g, d, false)
	}
	if from != d.Leader {
		// Liveness holds the leader's host alive, and the group sleeps
		// because its leader saw no activity: the leader is silent by
		// design, not failed. Woken by another replica (a pre-vote of one
		// that restarted without a leader), the follower counts the wake
		// as contact, so it refuses (pre-)votes for an election timeout
		// while its Wake brings the leader back, instead of helping depose
		// a live leader on the strength of a contact long past (d.Contact).
		// Refusing longer is always safe; a leader that really is gone is
		// liveness's to find, which wakes the group leaderless.
		d.Contact = h.w.Now()
	}
	return h.wake(g, d, from != d.Leader)
}

// touchedWithin reports whether the group was touched within
// HibernateAfter: a follower with local activity refuses to hibernate,
// and no group hibernates just after a Touch. h.mu is held.
func (h *Host) touchedWithin(g *group) bool {
	t, ok := h.groups.word(g).last()
	return ok && h.w.Now()-t < h.cfg.HibernateAfter
}

// touchedSince reads the touch word of g, awake and not busy (sweepBusy),
// keeps a later Touch in its a.lastActive, and reports whether that
// makes it active within HibernateAfter of now. The touch word is in the
// index, a cache miss of its own: sweepBusy reads a.lastActive first, so
// a group touched all the time costs the sweep one read of it per
// HibernateAfter. h.mu is held.
func (h *Host) touchedSince(g *group, now time.Duration) bool {
	if t, ok := h.groups.word(g).last(); ok && t > g.a.lastActive {
		g.a.lastActive = t
	}
	return now-g.a.lastActive < h.cfg.HibernateAfter
}

// sweepBusy reports whether the sweep keeps a leader awake, from its
// awake state a alone: its node's term changed since the last sweep (a
// new term counts as activity), it sent a leadership transfer in its
// term, or it was active (woke, changed term, or a Touch the sweep read
// before) within HibernateAfter. h.mu is held.
func (h *Host) sweepBusy(a *awakeState, now time.Duration) bool {
	term := a.nodeTerm.Load()
	if term != a.term {
		a.term, a.lastActive = term, now
		return true
	}
	return term == a.transferTerm || now-a.lastActive < h.cfg.HibernateAfter
}

// sweepLeader hibernates g, led by this host and not busy (sweepBusy), if
// no Touch since made it active within HibernateAfter and its followers
// are caught up, and reports whether it did. h.mu is held.
//
// It reads the node's term from the host's own record (nodeTerm) and
// takes the node's lock only to hibernate it: the caller found the node
// leading (election.Node.Leading), and a node that stopped leading
// meanwhile hibernates as a follower of its term or refuses, and then
// sends no Hibernate control.
func (h *Host) sweepLeader(g *group, now time.Duration) bool {
	term := g.a.term
	if h.touchedSince(g, now) {
		return false
	}
	ok, behind := h.followersCaughtUp(g, term, now)
	if !ok || !h.hibernate(g) {
		return false
	}
	if g.dormant.Leader != h.id || g.dormant.Term != term {
		return true
	}
	g.behind = behind
	for _, v := range g.voters.ids {
		if v != h.id {
			h.control(v, Control{Kind: Hibernate, Group: g.id, Term: term})
		}
	}
	return true
}

// followersCaughtUp reports whether every follower answered a heartbeat
// of term sent within the lease (election.Node.Acked: the leader's node
// still leads in term, as the sweep checked), or lives on a node liveness
// takes for dead.
// It also returns the followers it skipped as dead.
func (h *Host) followersCaughtUp(g *group, term uint64, now time.Duration) (ok bool, behind uint64) {
	for i, v := range g.voters.ids {
		if v == h.id {
			continue
		}
		if !h.leaderAlive(v) {
			behind |= bit(i)
			continue
		}
		if sent, ok := g.node.Acked(v); !ok || now-sent > h.lease {
			return false, 0
		}
	}
	return true, behind
}

// wakeLocal wakes a group for a local call if it hibernates, asking its
// leader to wake too. h.mu is held.
func (h *Host) wakeLocal(g *group) error {
	if g.node == nil {
		d := g.dormant
		if d.Leader != h.id && !h.leaderAlive(d.Leader) {
			d.Leader = election.None
		}
		return h.wake(g, d, true)
	}
	return nil
}

// Touch records activity of a group (a proposal, a read): it wakes the
// group if it hibernates, asking its leader to wake too, and postpones
// its hibernation by HibernateAfter. Errors: ErrStopped, ErrUnknownGroup,
// and the error of waking the group when Touch wakes it itself.
//
// Touch never waits for the host: touching an awake group takes no
// host-wide lock (only a shared read lock on the group index). On a
// real-time wheel a hibernating group is woken by the host's waker
// goroutine, in the order touched, wakeChunk per hold of the host's lock
// (a wake that fails then is counted in Stats.WakeFailures): neither the
// caller nor a Step or timer of the host does a wake's work (a node to
// build, and whatever else waits for the lock), so that a caller touching
// many sleeping groups (every active group after a start or a stall)
// keeps its pace, and so do the host's deliveries and ticks. On a
// virtual wheel the group is woken at once if the host is idle, on the
// caller's goroutine (reproducibly).
//
// Touch reads no clock on a real-time wheel: it records the host's
// stamp, the wheel time of its last sweep, tick or chunk of a Step, so
// at most a heartbeat interval old (see Config.HibernateAfter), and a
// group touched again within the same stamp costs a load.
func (h *Host) Touch(gid GroupID) error {
	now := h.touchTime()
	var g *group
	awake := false
	h.gmu.RLock()
	// Within the read lock the slot is g's, and so is its touch word.
	if s := h.groups.find(gid); s != nil && !h.halted.Load() {
		g, awake = s.g, s.touch.touch(now)
	}
	h.gmu.RUnlock()
	if g == nil {
		h.lock()
		defer h.unlock()
		_, err := h.lookup(gid) // the error
		return err
	}
	if awake {
		return nil
	}
	if h.wakeKick == nil && h.tryLock() {
		defer h.unlock()
		_, err := h.lookup(gid) // g, unless it was removed since
		return err
	}
	// The host is busy (a Step, a timer): its lock's holder wakes the
	// group when it lets go (see unlock), so that Touch never waits for
	// a long batch and a burst of touches on sleeping groups does not
	// fall behind.
	if g.queued.CompareAndSwap(false, true) {
		h.pendMu.Lock()
		h.pend = append(h.pend, g)
		h.npend.Store(int32(len(h.pend)))
		h.pendMu.Unlock()
	}
	if h.wakeKick != nil {
		h.kickWaker()
	} else if h.tryLock() { // the holder may have let go before it saw g
		h.unlock()
	}
	return nil
}

// stampClock is a wheel time that a host's busy paths keep recent, for
// Touch to record without a clock read of its own (on a real-time wheel
// a clock read costs as much as the rest of a Touch of an awake group).
// It lives on a cache line of its own: Touch callers read it on every
// call, and the host writes it a few thousand times a second.
type stampClock struct {
	_ [64]byte
	t atomic.Int64
	_ [56]byte
}

// refresh records now, a time just read from the wheel; the stamp never
// moves back by more than two concurrent refreshes' distance.
func (c *stampClock) refresh(now time.Duration) {
	if int64(now) > c.t.Load() {
		c.t.Store(int64(now))
	}
}

// touchTime is the time Touch records. On a virtual wheel it is Now. On
// a real-time wheel it is the host's stamp: the wheel time of the host's
// last sweep, tick, or chunk of a Step (whichever came last), so at most
// a heartbeat interval behind now while the wheel's driver keeps up, and
// usually well under a millisecond when groups are active. A group's
// idleness (HibernateAfter) is measured from the stamp: a group may
// hibernate up to that much sooner after its last Touch, never sooner
// after a Touch since the sweep before (hibernate compares with the
// sweep's own time, which the stamp reached before any later Touch read
// it).
func (h *Host) touchTime() time.Duration {
	if h.w.IsVirtual() {
		return h.w.Now()
	}
	return time.Duration(h.stamp.t.Load())
}

// wakeLoop is the host's waker goroutine on a real-time wheel: it wakes
// the groups Touch queued, wakeChunk per hold of the host's lock, until
// Stop.
func (h *Host) wakeLoop() {
	for {
		select {
		case <-h.quit:
			return
		case <-h.wakeKick:
			h.lock()
			h.wakePending()
			h.unlock() // kicks this loop again if more are queued
		}
	}
}

// kickWaker asks the waker goroutine (real-time wheels) to wake what
// Touch queued.
func (h *Host) kickWaker() {
	select {
	case h.wakeKick <- struct{}{}:
	default:
	}
}

// wakeChunk is the most queued groups the waker goroutine wakes per hold
// of the host's lock, on a real-time wheel. A wake builds a node; the
// wheel's one driver goroutine waits for the lock to run the host's tick
// and sweep (and every other host's timers wait for it), and a Step
// holds it to deliver to sleeping groups. A queue of every group a
// caller touched at once (all of them after a start or a stall) woken in
// one hold stalled the driver for seconds on a busy processor; woken by
// whoever let go of the lock, it stretched a Step's deliveries (a wake
// at every yield) until peers took the host for dead.
const wakeChunk = 64

// wakePending wakes the groups Touch queued, in the order queued: all of
// them on a virtual wheel, the first wakeChunk on a real-time one. A wake
// that fails (the Storage's error) is counted in Stats.WakeFailures, as
// Touch returned already. h.mu is held.
func (h *Host) wakePending() {
	h.pendMu.Lock()
	gs := h.pend
	if h.wakeKick != nil && len(gs) > wakeChunk {
		gs, h.pend = gs[:wakeChunk:wakeChunk], gs[wakeChunk:]
	} else {
		h.pend = nil
	}
	h.npend.Store(int32(len(h.pend)))
	h.pendMu.Unlock()
	for _, g := range gs {
		g.queued.Store(false)
		// A group removed since it was queued is not woken.
		if !h.stopped && h.groups.get(g.id) == g && h.wakeLocal(g) != nil {
			h.stats.WakeFailures++
		}
	}
}
