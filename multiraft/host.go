package multiraft

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/randsrc"
	"github.com/raftick/raftick/wheel"
)

// Host runs the replicas of many Raft groups that live on one node: their
// election.Nodes share one wheel and one Transport, heartbeats are
// coalesced per peer node, idle groups hibernate, and one liveness timer
// per peer node wakes the hibernating groups whose leader it was. Create
// it with NewHost, add groups with AddGroup and hand every inbound Batch
// to Step. All methods are safe for concurrent use.
type Host struct {
	cfg   Config
	ecfg  election.Config // effective election template
	lease time.Duration
	id    election.ID
	w     *wheel.Wheel
	tr    Transport

	mu sync.Mutex
	// owner is the goroutine holding mu (gid.Current), 0 while mu is
	// free: set by lock and tryLock after taking mu, cleared by unlock
	// before releasing it, so a goroutine that reads its own ID here
	// holds mu (see lock).
	owner   atomic.Uintptr
	stopped bool
	halted  atomic.Bool // stopped, for the paths that do not take mu
	rng     *rand.Rand
	// groups is written with both mu and gmu held, so that Touch can
	// read it under gmu alone.
	gmu    sync.RWMutex
	groups groupIndex
	// pend are the sleeping groups Touch found while h.mu was busy; the
	// lock's holder wakes them (unlock). npend is len(pend).
	pendMu sync.Mutex
	pend   []*group
	npend  atomic.Int32
	// behind is set while the host runs late (see overload.go): written
	// under h.mu, read by the nodes (Config.Lagging) without it.
	behind atomic.Bool
	// laggingFn is h.lagging, made once for every node's Config;
	// laggingSkips counts the timers it stopped.
	laggingFn    func() bool
	laggingSkips atomic.Uint64
	peers        map[election.ID]*peer
	peerIDs      []election.ID // keys of peers, sorted (a new slice on every change)
	all          []*group      // every group, in the order added
	awakeL       []*group      // the awake groups; group.awakeAt is the index
	// leadersL are the awake groups this host leads, for the heartbeat
	// tick (Coalesce): rebuilt by every sweep, joined by groups that wake
	// or are elected as leader in between; it may hold groups that no
	// longer lead or sleep (the tick skips them).
	leadersL []*group
	voters   map[string]*voterSet // interned voter sets
	sweepT   wheel.Timer          // every heartbeat interval: hibernate idle groups
	sweepDue time.Duration        // sweepT's deadline
	// lateness is how late the last sweep ran, maxLateness the most
	// since the host started (see overload.go).
	lateness, maxLateness time.Duration
	lateAt                time.Duration // when a sweep last ran late
	wasLate               bool          // a sweep ever ran late
	pingT                 wheel.Timer   // every LivenessInterval: liveness messages
	stats                 Stats

	outMu    sync.Mutex
	out      map[election.ID]*outbox
	outOrder []election.ID // keys of out, sorted
	flushT   wheel.Timer   // every CoalesceWindow (Coalesce only)
	hbT      wheel.Timer   // every hbTick: the led groups heartbeat (Coalesce only)
	hbTick   time.Duration
	ostats   outStats
	ticking  bool // the heartbeat tick is making its leaders heartbeat

	// stepNow is the wheel time a Step read when it took h.mu (last): the
	// time its entries are stepped at, read once per chunk of entries
	// rather than per entry. Guarded by h.mu.
	stepNow time.Duration
}

// group is one group's replica. While it hibernates, node and a are nil
// and dormant holds what the node knew.
type group struct {
	id      GroupID
	voters  *voterSet
	st      election.Storage
	log     election.LogView // nil: an empty log
	node    *election.Node
	a       *awakeState
	dormant election.Dormant
	// behind marks (by voter index, all from 63 on) the followers a
	// hibernating leader left behind because liveness took their nodes
	// for dead: when one comes back, the group wakes to update it.
	behind uint64
	// awake mirrors node != nil for Touch, which reads it without mu:
	// cleared before a group hibernates, set when it wakes.
	awake atomic.Bool
	// queued is set while the group waits in Host.pend to be woken.
	queued atomic.Bool
	// touched is the wheel time of the last Touch plus one (0: never),
	// written without mu. Touch stores it before it reads awake, and
	// hibernate clears awake before it reads touched, so either
	// hibernate sees the touch (and refuses) or Touch sees the group
	// asleep (and wakes it under mu).
	touched atomic.Int64
}

// lastTouch returns the wheel time of the group's last Touch and whether
// there was one.
func (g *group) lastTouch() (time.Duration, bool) {
	t := g.touched.Load()
	return time.Duration(t - 1), t != 0
}

// bit returns the behind bit of voter index i.
func bit(i int) uint64 { return 1 << min(i, 63) }

// setAwake adds g to the awake list. h.mu is held.
func (h *Host) setAwake(g *group) {
	g.a.at = len(h.awakeL)
	h.awakeL = append(h.awakeL, g)
}

// setAsleep removes g (awake) from the awake list. h.mu is held.
func (h *Host) setAsleep(g *group) {
	i, last := g.a.at, len(h.awakeL)-1
	h.awakeL[i] = h.awakeL[last]
	h.awakeL[i].a.at = i
	h.awakeL[last] = nil
	h.awakeL = h.awakeL[:last]
	g.awake.Store(false)
}

// awakeState is what the host tracks of an awake group.
type awakeState struct {
	// lastActive is when the group woke or its node's term changed (see
	// Host.lastActive for touches).
	lastActive time.Duration
	term       uint64 // the node's term at the last sweep
	acks       []ack  // per voter index: last granted heartbeat answer
	at         int    // index in Host.awakeL
	listed     bool   // in Host.leadersL
	// small holds acks for groups of up to smallGroup voters, in the
	// same allocation (one cache miss less per heartbeat answer).
	small [smallGroup]ack
}

// smallGroup is the largest group whose acks live in awakeState.small.
const smallGroup = 5

type ack struct {
	term uint64
	at   time.Duration
}

// voterSet is a group's voters, shared by every group with the same ones.
type voterSet struct{ ids []election.ID }

func (v *voterSet) index(id election.ID) int { return slices.Index(v.ids, id) }

// peer is a peer node: its liveness timer, reset by every batch from it.
type peer struct {
	id    election.ID
	alive bool
	timer wheel.Timer
}

// outbox holds what waits to be sent to one peer.
type outbox struct {
	b    Batch
	sent bool // something was sent since the last liveness tick
	// hbCap and respCap are the capacities of the next batch's
	// Heartbeats and Responses.
	hbCap, respCap int
	// answering counts the Steps delivering heartbeats from this peer:
	// their answers to it leave when they end (endAnswers).
	answering int
	// loose is set while entries wait that no tick or Step in progress
	// made: the flush timer sends them.
	loose bool
}

// minCap is the least capacity of an outbox's heartbeat slices.
const minCap = 8

// emptyLog is the LogView of groups added without one.
var emptyLog = election.StaticLog{}

// NewHost returns a Host for cfg whose groups' timers live on w and that
// sends through tr. It returns the Config's validation error (wrapping
// ErrInvalidConfig), or an error for a nil wheel or transport, for an
// election timeout, heartbeat interval, liveness interval or coalescing
// window shorter than w's tick (a CoalesceWindow left 0 is raised to the
// tick), or for a wheel that refuses the host's timers.
func NewHost(cfg Config, w *wheel.Wheel, tr Transport) (*Host, error) {
	c, eff, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	if w == nil || tr == nil {
		return nil, fmt.Errorf("%w: wheel and transport must not be nil", ErrInvalidConfig)
	}
	if err := c.fitTick(eff, cfg.CoalesceWindow, w.Tick()); err != nil {
		return nil, err
	}
	h := &Host{
		cfg: c, ecfg: eff, id: c.ID, w: w, tr: tr,
		lease:  time.Duration(float64(eff.ElectionTimeout) * eff.LeaseRatio),
		rng:    c.Rand,
		peers:  make(map[election.ID]*peer),
		voters: make(map[string]*voterSet),
		out:    make(map[election.ID]*outbox),
	}
	if h.rng == nil {
		h.rng = randsrc.New()
	}
	if err := h.sweepT.Init(w, h.onSweep); err != nil {
		return nil, err
	}
	if err := h.pingT.Init(w, h.onPing); err != nil {
		return nil, err
	}
	if err := h.flushT.Init(w, h.onFlush); err != nil {
		return nil, err
	}
	if err := h.hbT.Init(w, h.onHeartbeatTick); err != nil {
		return nil, err
	}
	if _, err := h.sweepT.TryReset(eff.HeartbeatInterval); err != nil {
		return nil, err
	}
	h.sweepDue = w.Now() + eff.HeartbeatInterval
	h.laggingFn = h.lagging
	h.pingT.Reset(c.LivenessInterval)
	if c.Coalesce {
		h.flushT.Reset(c.CoalesceWindow)
		h.hbTick = heartbeatTick(eff.HeartbeatInterval)
		h.hbT.Reset(h.hbTick)
	}
	return h, nil
}

// ID returns the host's node ID.
func (h *Host) ID() election.ID { return h.id }

// Config returns the host's configuration with defaults applied.
func (h *Host) Config() Config { return h.cfg }

// GroupConfig describes one group's replica on a Host.
type GroupConfig struct {
	// ID is the group's ID.
	ID GroupID
	// Voters are the node IDs of the group's replicas, the Host's own
	// included; the same on every host.
	Voters []election.ID
	// Storage persists this replica's term and vote; required.
	Storage election.Storage
	// Log is the replica's log view; nil means an empty log.
	Log election.LogView
	// Leader, if set, bootstraps a new group with this voter as the
	// leader of term 1, as if it had won term 1's election with every
	// vote: a replica whose Storage is empty saves term 1 with a vote for
	// Leader and starts knowing it (hibernating if the Host hibernates,
	// so that adding a million groups creates no Node). It must be the
	// same on every host, like Voters; with a Storage that is not empty
	// it is ignored. None starts the replica as a follower that elects a
	// leader the normal way.
	Leader election.ID
}

// AddGroup adds a group's replica and starts it. Errors: ErrStopped,
// ErrGroupExists, ErrInvalidConfig (wrapped) for bad voters, and the
// storage's or node's errors.
func (h *Host) AddGroup(gc GroupConfig) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.unlock()
	if h.stopped {
		return ErrStopped
	}
	if h.groups.get(gc.ID) != nil {
		return fmt.Errorf("%w: %d", ErrGroupExists, gc.ID)
	}
	if gc.Storage == nil {
		return fieldErr("Storage", nil, "must be set")
	}
	if !slices.Contains(gc.Voters, h.id) {
		return fieldErr("Voters", gc.Voters, "must include this host (%d)", h.id)
	}
	if gc.Leader != election.None && !slices.Contains(gc.Voters, gc.Leader) {
		return fieldErr("Leader", gc.Leader, "must be one of the voters")
	}
	vs, err := h.internVoters(gc.Voters)
	if err != nil {
		return err
	}
	g := &group{id: gc.ID, voters: vs, st: gc.Storage, log: gc.Log}
	if gc.Leader != election.None {
		hs, err := gc.Storage.Load()
		if err != nil {
			return fmt.Errorf("multiraft: group %d: load hard state: %w", gc.ID, err)
		}
		if hs.Term == 0 {
			if err := gc.Storage.Save(election.HardState{Term: 1, Vote: gc.Leader}); err != nil {
				return fmt.Errorf("multiraft: group %d: bootstrap: %w", gc.ID, err)
			}
			boot := election.Dormant{Term: 1, Leader: gc.Leader}
			h.addGroup(g)
			if h.cfg.HibernateAfter > 0 {
				g.dormant = boot
				h.stats.Hibernating++
				return nil
			}
			return h.startAdded(g, boot)
		}
	}
	h.addGroup(g)
	return h.startAdded(g, election.Dormant{})
}

// addGroup registers g and its peers. h.mu is held.
func (h *Host) addGroup(g *group) {
	for _, id := range g.voters.ids {
		h.peerFor(id)
	}
	h.gmu.Lock()
	h.groups.put(g)
	h.gmu.Unlock()
	h.all = append(h.all, g)
	h.stats.Groups++
}

// startAdded starts the node of a group just added, and removes the
// group again if that fails. h.mu is held.
func (h *Host) startAdded(g *group, d election.Dormant) error {
	err := h.startNode(g, d)
	if err != nil { // startNode left it hibernating
		h.gmu.Lock()
		h.groups.del(g.id)
		h.gmu.Unlock()
		h.all = slices.DeleteFunc(h.all, func(x *group) bool { return x == g })
		h.stats.Groups--
		h.stats.Hibernating--
	}
	return err
}

// internVoters returns the shared voterSet of voters, checking them.
func (h *Host) internVoters(voters []election.ID) (*voterSet, error) {
	key := fmt.Sprint(voters)
	if vs, ok := h.voters[key]; ok {
		return vs, nil
	}
	seen := make(map[election.ID]bool, len(voters))
	for _, v := range voters {
		if v == election.None || seen[v] {
			return nil, fieldErr("Voters", voters, "must be distinct and non-zero")
		}
		seen[v] = true
	}
	vs := &voterSet{ids: slices.Clone(voters)}
	h.voters[key] = vs
	return vs, nil
}

// peerFor returns the peer entry of id, creating it (and arming its
// liveness timer) on first use; nil for the host itself.
func (h *Host) peerFor(id election.ID) *peer {
	if id == h.id {
		return nil
	}
	if p, ok := h.peers[id]; ok {
		return p
	}
	p := &peer{id: id, alive: true}
	_ = p.timer.Init(h.w, func() { h.onPeerSilent(p) })
	p.timer.Reset(h.cfg.LivenessTimeout)
	h.peers[id] = p
	ids := append(slices.Clone(h.peerIDs), id)
	slices.Sort(ids)
	h.peerIDs = ids
	return p
}

// wake wakes a hibernating group: its node is created and resumes from d
// (see election.Node.Resume); ping asks the leader in d to wake its
// replica too. h.mu is held.
func (h *Host) wake(g *group, d election.Dormant, ping bool) error {
	h.stats.Hibernating--
	h.stats.Wakes++
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
		cfg.Lagging = h.laggingFn
	}
	if obs := h.cfg.Observer; obs != nil {
		id := g.id
		cfg.Observer = func(e election.Event) { obs(id, e) }
	}
	var lv election.LogView = emptyLog
	if g.log != nil {
		lv = g.log
	}
	n, err := election.NewNode(cfg, h.w, groupTransport{h, g.id}, g.st, lv)
	if err != nil {
		return fmt.Errorf("multiraft: group %d: %w", g.id, err)
	}
	g.node, g.dormant, g.behind = n, election.Dormant{}, 0
	g.a = &awakeState{lastActive: h.w.Now()}
	if nv := len(g.voters.ids); nv <= smallGroup {
		g.a.acks = g.a.small[:nv]
	} else {
		g.a.acks = make([]ack, nv)
	}
	h.setAwake(g)
	if err := n.Resume(d); err != nil {
		h.setAsleep(g)
		g.node, g.a, g.dormant = nil, nil, d
		h.stats.Hibernating++
		return fmt.Errorf("multiraft: group %d: %w", g.id, err)
	}
	g.awake.Store(true)
	h.listLeader(g)
	return nil
}

// hibernate puts an awake group to sleep; it reports whether the node
// agreed. h.mu is held.
func (h *Host) hibernate(g *group) bool {
	g.awake.Store(false) // a Touch from now on takes mu
	if h.touchedWithin(g) {
		g.awake.Store(true)
		return false
	}
	d, err := g.node.Hibernate()
	if err != nil {
		g.awake.Store(true)
		return false
	}
	h.setAsleep(g)
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
		return h.wake(g, election.Dormant{Term: d.Term}, false)
	case moved:
		// The replica still knows d.Leader and when it last heard from
		// it (d.Contact, kept up by the heartbeats answered asleep):
		// resumed so, it refuses a vote inside the lease those answers
		// gave, as an awake follower would with LeaderStickiness.
		return h.wake(g, d, false)
	}
	return h.wake(g, d, from != d.Leader)
}

// leaderAlive reports whether node id is alive as far as liveness knows.
func (h *Host) leaderAlive(id election.ID) bool {
	p := h.peers[id]
	return p == nil || p.alive
}

// Step delivers an inbound batch. Entries for unknown groups, from
// non-voters, or addressed to another host are ignored and counted in
// Stats; Step never panics on them. A batch from a peer node resets that
// node's liveness timer. Entries are delivered in order, but a long batch
// lets other calls and the host's timers in between its entries.
//
// Step panics with ErrReentrant if its goroutine is inside a call of the
// same Host that holds the host's lock: a Transport that delivers
// synchronously, or an Observer that calls Step.
func (h *Host) Step(b Batch) {
	if h.holding() {
		panic(ErrReentrant)
	}
	if !h.cfg.Coalesce || len(b.Heartbeats) == 0 || b.To != h.id {
		h.step(b)
		return
	}
	// The answers to b's heartbeats wait in the outbox of b's sender
	// and leave together when the Step ends.
	h.beginAnswers(b.From)
	h.step(b)
	h.endAnswers(b.From)
}

// step is Step without sending the answers.
func (h *Host) step(b Batch) {
	h.mustLock()
	defer h.unlock()
	if h.stopped {
		return
	}
	h.stats.BatchesReceived++
	p := h.peers[b.From]
	if b.To != h.id || p == nil {
		h.stats.Ignored += uint64(max(b.Len(), 1))
		return
	}
	h.heard(p)
	h.stepNow = h.w.Now()
	k := 0
	hb := election.Message{Type: election.MsgHeartbeat, From: b.From, To: h.id}
	if !stepEntries(h, &k, b.Heartbeats, func(e Heartbeat) (GroupID, election.Message) {
		hb.Term, hb.Sent = e.Term, e.Sent
		return e.Group, hb
	}) {
		return
	}
	resp := election.Message{Type: election.MsgHeartbeatResp, From: b.From, To: h.id}
	if !stepEntries(h, &k, b.Responses, func(e HeartbeatResponse) (GroupID, election.Message) {
		resp.Term, resp.Granted, resp.Sent = e.Term, e.Granted, e.Sent
		return e.Group, resp
	}) {
		return
	}
	for _, gm := range b.Msgs {
		if gm.Msg.From != b.From || gm.Msg.To != h.id {
			h.stats.Ignored++
			continue
		}
		h.deliver(gm.Group, gm.Msg)
	}
	for _, c := range b.Controls {
		h.onControl(b.From, c)
	}
}

// stepEntries delivers coalesced entries in order, each as the message
// msg makes of it, resolving their groups ahead (lookahead) and letting
// other users of the lock in every stepChunk entries (*k counts them
// over the batch). It reports false if the host stopped meanwhile.
// h.mu is held.
func stepEntries[E any](h *Host, k *int, es []E, msg func(E) (GroupID, election.Message)) bool {
	var ahead lookahead
	ahead.start(h, len(es), func(i int) GroupID { id, _ := msg(es[i]); return id })
	for i, e := range es {
		if !h.yield(k) {
			return false
		}
		g := ahead.next(h, i)
		_, m := msg(e)
		h.deliverTo(g, m)
	}
	return true
}

// stepChunk is how many coalesced entries Step delivers before it lets
// other users of the host's lock in: a batch may hold one entry per group,
// and a Touch that wakes a group or a timer of the host should not wait
// for all of them.
const stepChunk = 64

// yield counts one entry of a Step in *k and, every stepChunk entries,
// releases and retakes the host's lock. It reports false if the host
// stopped meanwhile. Entries are still delivered in the batch's order,
// and the batch's controls after its heartbeats. h.mu is held.
//
// It does not yield the processor (runtime.Gosched): that made the wheel's
// driver run sooner, but also let followers' election timers fire while
// the heartbeats that would have reset them waited in batches not yet
// stepped, and the scalemix runs made with it did not get better.
func (h *Host) yield(k *int) bool {
	if *k++; *k%stepChunk != 0 {
		return true
	}
	h.unlock()
	h.mustLock()
	h.stepNow = h.w.Now()
	return !h.stopped
}

// heard records a batch from p: it is alive, and its timer restarts.
func (h *Host) heard(p *peer) {
	p.timer.Reset(h.cfg.LivenessTimeout)
	if p.alive {
		return
	}
	p.alive = true
	h.stats.PeersUp++
	// The groups this host leads that hibernated without p's replica
	// wake, so that their heartbeats bring it up to date (it may believe
	// in an older term's leader, or lead one itself).
	for _, g := range h.all {
		if g.node == nil && g.behind != 0 && g.dormant.Leader == h.id {
			if i := g.voters.index(p.id); i >= 0 && g.behind&bit(i) != 0 {
				_ = h.wake(g, g.dormant, false)
			}
		}
	}
}

// deliver steps one message into its group, waking the group if it
// hibernates and the message calls for it. h.mu is held.
func (h *Host) deliver(gid GroupID, m election.Message) {
	h.deliverTo(h.groups.get(gid), m)
}

// deliverTo is deliver to group g, nil if unknown. h.mu is held.
func (h *Host) deliverTo(g *group, m election.Message) {
	var from int
	if g == nil {
		from = -1
	} else {
		from = g.voters.index(m.From)
	}
	if from < 0 {
		h.stats.Ignored++
		return
	}
	h.stats.Delivered++
	if g.node == nil {
		d := g.dormant
		switch {
		case m.Type == election.MsgHeartbeat && m.Term == d.Term && m.From == d.Leader:
			// The leader it sleeps under: answer as an awake follower
			// would, without waking (its timers would only be pushed back).
			h.stats.AnsweredAsleep++
			g.dormant.Contact = h.stepNow // the lease counts on this answer
			h.send(g.id, election.Message{Type: election.MsgHeartbeatResp, From: h.id, To: m.From, Term: d.Term, Granted: true, Sent: m.Sent})
			return
		case m.Type.IsResponse() && m.Term <= d.Term:
			// A late answer: a hibernating replica has no request out.
			h.stats.IgnoredAsleep++
			return
		}
		if h.wakeFor(g, m.From, m) != nil {
			return
		}
	}
	if m.Type == election.MsgHeartbeatResp && m.Granted {
		g.a.acks[from] = ack{term: m.Term, at: h.stepNow}
	}
	g.node.Step(m)
	if m.Type == election.MsgVoteResp {
		h.listLeader(g) // elected
	}
}

// onControl handles a hibernation message. h.mu is held.
func (h *Host) onControl(from election.ID, c Control) {
	g := h.groups.get(c.Group)
	if g == nil || g.voters.index(from) < 0 {
		h.stats.Ignored++
		return
	}
	switch c.Kind {
	case Hibernate:
		ok := false
		if g.node == nil {
			ok = g.dormant.Term == c.Term && g.dormant.Leader == from
		} else if st := g.node.Status(); st.Role == election.Follower && st.Term == c.Term && st.Leader == from && !h.touchedWithin(g) {
			ok = h.hibernate(g)
		}
		h.control(from, Control{Kind: HibernateAck, Group: c.Group, Term: c.Term, OK: ok})
	case HibernateAck:
		if !c.OK && g.node == nil && g.dormant.Term == c.Term && g.dormant.Leader == h.id {
			h.stats.HibernateRefused++
			_ = h.wake(g, g.dormant, false)
		}
	case Wake:
		if g.node == nil && c.Term >= g.dormant.Term {
			_ = h.wakeFor(g, from, election.Message{Term: c.Term})
		}
	default:
		h.stats.Ignored++
	}
}

// touchedWithin reports whether the group was touched within
// HibernateAfter: a follower with local activity refuses to hibernate,
// and no group hibernates just after a Touch.
func (h *Host) touchedWithin(g *group) bool {
	t, ok := g.lastTouch()
	return ok && h.w.Now()-t < h.cfg.HibernateAfter
}

// lastActive returns when the awake group was last active: woken, in a
// new term, or touched. h.mu is held.
func (h *Host) lastActive(g *group) time.Duration {
	if t, ok := g.lastTouch(); ok && t > g.a.lastActive {
		return t
	}
	return g.a.lastActive
}

// onPeerSilent is p's liveness timer: p fell silent. Every hibernating
// group whose leader p was wakes without a leader, to elect another.
func (h *Host) onPeerSilent(p *peer) {
	h.mustLock()
	defer h.unlock()
	if h.stopped || !p.alive {
		return
	}
	p.alive = false
	h.stats.PeersDown++
	for _, g := range h.all {
		if g.node == nil && g.dormant.Leader == p.id {
			if h.wake(g, election.Dormant{Term: g.dormant.Term}, false) == nil {
				h.stats.LivenessWakes++
			}
		}
	}
}

// onSweep runs every heartbeat interval: it hibernates the groups whose
// leader is this host and that have been idle for HibernateAfter.
// It also measures how late the host runs (see overload.go).
func (h *Host) onSweep() {
	h.mustLock()
	defer h.unlock()
	if h.stopped {
		return
	}
	now := h.w.Now()
	h.noteLateness(now, now-h.sweepDue)
	h.sweepT.Reset(h.ecfg.HeartbeatInterval)
	h.sweepDue = now + h.ecfg.HeartbeatInterval
	if h.cfg.HibernateAfter == 0 && !h.cfg.Coalesce {
		return
	}
	old := len(h.leadersL)
	leaders := h.leadersL[:0] // nothing wakes during the sweep
	for i := 0; i < len(h.awakeL); i++ {
		g := h.awakeL[i]
		prefetchAwake(h.awakeL, i)
		if !g.node.Leading() { // only a leader decides; skip the others cheaply
			continue
		}
		if h.cfg.HibernateAfter > 0 && h.sweepLeader(g, now) {
			i-- // the last awake group moved to index i
			continue
		}
		g.a.listed = true
		leaders = append(leaders, g)
	}
	clear(h.leadersL[len(leaders):old])
	h.leadersL = leaders
}

// sweepLeader hibernates g, led by this host, if it has been idle for
// HibernateAfter and its followers are caught up, and reports whether it
// did. h.mu is held.
func (h *Host) sweepLeader(g *group, now time.Duration) bool {
	st := g.node.Status()
	if st.Term != g.a.term {
		g.a.term, g.a.lastActive = st.Term, now
		return false
	}
	if st.Role != election.Leader || now-h.lastActive(g) < h.cfg.HibernateAfter {
		return false
	}
	ok, behind := h.followersCaughtUp(g, st.Term, now)
	if !ok || !h.hibernate(g) {
		return false
	}
	g.behind = behind
	for _, v := range g.voters.ids {
		if v != h.id {
			h.control(v, Control{Kind: Hibernate, Group: g.id, Term: st.Term})
		}
	}
	return true
}

// listLeader adds g to the tick's leaders if its node leads and it is
// not listed. h.mu is held.
func (h *Host) listLeader(g *group) {
	if h.cfg.Coalesce && !g.a.listed && g.node.Leading() {
		g.a.listed = true
		h.leadersL = append(h.leadersL, g)
	}
}

// heartbeatTick returns the period of the host's heartbeat tick for the
// groups' heartbeat interval hb: a tenth less, so that a leader's own
// heartbeat timer, re-armed a full hb later by every tick, never comes
// due while the host ticks (a jittered period shorter than that may still
// fire it: one extra heartbeat, out of phase).
func heartbeatTick(hb time.Duration) time.Duration {
	return max(hb-hb/10, 1)
}

// onHeartbeatTick runs every hbTick with Coalesce: every awake group this
// host leads heartbeats now (election.Node.BroadcastHeartbeat, which also
// re-arms the leader's heartbeat timer a full interval later), so all of
// the host's heartbeats enter the outboxes together and leave in the same
// flush. It visits only the host's list of leaders (leadersL, kept by the
// sweep, wakes and elections), skipping the groups in it that sleep or no
// longer lead (election.Node.Leading, lock-free); a leader missing from
// it heartbeats on its own timer until the next sweep lists it.
func (h *Host) onHeartbeatTick() {
	h.beginTick()
	h.tick()
	h.endTick() // the heartbeats, one batch per peer
}

// tick is onHeartbeatTick without the flush.
func (h *Host) tick() {
	h.mustLock()
	defer h.unlock()
	if h.stopped {
		return
	}
	h.hbT.Reset(h.hbTick)
	for i, g := range h.leadersL {
		prefetchLeaders(h.leadersL, i)
		if g.node == nil || !g.node.Leading() {
			if g.a != nil {
				g.a.listed = false
			}
			continue
		}
		_ = g.node.BroadcastHeartbeat()
	}
}

// followersCaughtUp reports whether every follower answered a heartbeat
// of term within the lease, or lives on a node liveness takes for dead.
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
		if a := g.a.acks[i]; a.term != term || now-a.at > h.lease {
			return false, 0
		}
	}
	return true, behind
}

// lookup returns an awake group, waking it if it hibernates (a local
// call); ping asks its leader to wake too. h.mu is held.
func (h *Host) lookup(gid GroupID) (*group, error) {
	if h.stopped {
		return nil, ErrStopped
	}
	g := h.groups.get(gid)
	if g == nil {
		return nil, fmt.Errorf("%w: %d", ErrUnknownGroup, gid)
	}
	return g, h.wakeLocal(g)
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
// host-wide lock (only a shared read lock on the group index), and a
// hibernating group is woken at once if the host is idle, otherwise by
// the Step or timer that holds the host's lock, as soon as it lets go
// (a wake that fails then is counted in Stats.WakeFailures).
func (h *Host) Touch(gid GroupID) error {
	h.gmu.RLock()
	g := h.groups.get(gid)
	h.gmu.RUnlock()
	if g == nil || h.halted.Load() {
		if err := h.lock(); err != nil {
			return err
		}
		defer h.unlock()
		_, err := h.lookup(gid) // the error
		return err
	}
	g.touched.Store(int64(h.w.Now()) + 1)
	if g.awake.Load() {
		return nil
	}
	if h.tryLock() {
		defer h.unlock()
		if h.stopped {
			return ErrStopped
		}
		return h.wakeLocal(g)
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
	if h.tryLock() { // the holder may have let go before it saw g
		h.unlock()
	}
	return nil
}

// unlock releases h.mu, first waking the groups that Touch queued while
// the lock was held; it retakes the lock to wake those queued while it
// was letting go, unless another holder took it (which wakes them).
func (h *Host) unlock() {
	for {
		if h.npend.Load() > 0 {
			h.wakePending()
		}
		h.owner.Store(0)
		h.mu.Unlock()
		if h.npend.Load() == 0 || !h.tryLock() {
			return
		}
	}
}

// wakePending wakes the groups Touch queued. A wake that fails (the
// Storage's error) is counted in Stats.WakeFailures, as Touch returned
// already. h.mu is held.
func (h *Host) wakePending() {
	h.pendMu.Lock()
	gs := h.pend
	h.pend = nil
	h.npend.Store(0)
	h.pendMu.Unlock()
	for _, g := range gs {
		g.queued.Store(false)
		if !h.stopped && h.wakeLocal(g) != nil {
			h.stats.WakeFailures++
		}
	}
}

// Campaign wakes the group and calls election.Node.Campaign.
func (h *Host) Campaign(gid GroupID) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.unlock()
	g, err := h.lookup(gid)
	if err != nil {
		return err
	}
	return g.node.Campaign()
}

// TransferLeadership wakes the group and calls
// election.Node.TransferLeadership.
func (h *Host) TransferLeadership(gid GroupID, to election.ID) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.unlock()
	g, err := h.lookup(gid)
	if err != nil {
		return err
	}
	return g.node.TransferLeadership(to)
}

// GroupStatus describes one group's replica on a host.
type GroupStatus struct {
	Group GroupID
	// Hibernating is true while the replica sleeps; Status then holds
	// only its term and the leader it knew (Role Leader if itself).
	Hibernating bool
	Status      election.Status
	// Lease reports that the replica leads with a quorum's answers within
	// the lease (election.Node.QuorumContact); never while hibernating.
	Lease bool
}

// Status returns the replica's state without waking it.
func (h *Host) Status(gid GroupID) (GroupStatus, error) {
	if err := h.lock(); err != nil {
		return GroupStatus{}, err
	}
	defer h.unlock()
	g := h.groups.get(gid)
	if g == nil {
		return GroupStatus{}, fmt.Errorf("%w: %d", ErrUnknownGroup, gid)
	}
	if g.node == nil {
		st := election.Status{ID: h.id, Role: election.Follower, Term: g.dormant.Term, Leader: g.dormant.Leader}
		if g.dormant.Leader == h.id {
			st.Role = election.Leader
		}
		return GroupStatus{Group: gid, Hibernating: true, Status: st}, nil
	}
	return GroupStatus{Group: gid, Status: g.node.Status(), Lease: g.node.QuorumContact()}, nil
}

// Stop stops every group's node and the host's timers; a crash. The
// groups' HardState stays in their Storages. Stop is idempotent. It
// panics with ErrReentrant if called from the Host's Observer while the
// host's lock is held (see ErrReentrant).
func (h *Host) Stop() {
	h.mustLock()
	if h.stopped {
		h.unlock()
		return
	}
	h.stopped = true
	h.halted.Store(true)
	for _, g := range h.awakeL {
		g.node.Stop()
	}
	for _, p := range h.peers {
		p.timer.Stop()
	}
	h.sweepT.Stop()
	h.pingT.Stop()
	h.hbT.Stop()
	h.unlock()
	h.outMu.Lock() // see onFlush
	h.flushT.Stop()
	h.outMu.Unlock()
}

// groupTransport is a group node's Transport: the host's send.
type groupTransport struct {
	h *Host
	g GroupID
}

func (t groupTransport) Send(m election.Message) { t.h.send(t.g, m) }
