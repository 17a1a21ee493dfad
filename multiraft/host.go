package multiraft

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/isnil"
	"github.com/raftick/raftick/internal/randsrc"
	"github.com/raftick/raftick/wheel"
)

// Host runs the replicas of many Raft groups that live on one node: their
// election.Nodes share one wheel and one Transport, heartbeats are
// coalesced per peer node, idle groups hibernate, and one liveness timer
// per peer node fails over the hibernating groups whose leader it was,
// a bounded number at a time. Create it with NewHost, add groups with
// AddGroup and hand every inbound Batch to Step. All methods are safe for
// concurrent use.
//
// Locks, in the order they are taken (never the other way):
//
//	Host.mu -> election.Node's lock -> repeated.Timer's lock -> the Wheel's
//	Host.mu -> gmu (writes of the group index)
//	Host.mu -> outMu -> outbox.mu (a peer's outbox); a node's sends take
//	           only outbox.mu, with or without Host.mu
//	Host.mu -> pendMu (Touch's queue of groups to wake)
//	Host.mu -> Node -> pmu (the persister's queue) -> the persister's timer
//	Host.mu -> fxMu (the effects queue); Node -> fxMu
//
// A host calls its Transport, the Observer and its Store with no lock of
// its own (nor a node's) held: what a call makes under mu waits in the
// effects queue until the call lets go (see lock.go), and the Store is
// written by the persister (see store.go). The nodes call the host's
// lagging check with their own lock held, and it takes no lock.
type Host struct {
	// Set by NewHost, then read-only.
	cfg   Config
	ecfg  election.Config // effective election template
	lease time.Duration
	born  time.Duration // the wheel's time when the host was made
	id    election.ID
	w     *wheel.Wheel
	tr    Transport
	// metrics is nil when metrics are off (see hostMetrics).
	metrics *hostMetrics

	store  Store        // Config.Store, or a MemoryStore
	logger hclog.Logger // the template's, named "multiraft"

	// mu guards every field below up to outMu, unless a field says
	// otherwise, and each group's node, a, dormant and behind.
	mu sync.Mutex
	// collecting is set while a goroutine holds mu (see lock.go).
	collecting atomic.Bool
	stopped    bool
	halted     atomic.Bool // stopped, for the paths that do not take mu; set under mu
	rng        *rand.Rand
	// groups is written with both mu and gmu held, so that Touch can
	// read it under gmu alone.
	gmu    sync.RWMutex
	groups groupIndex
	// stamp is the wheel time Touch records on a real-time wheel (see
	// touchTime); atomic, written without mu.
	stamp stampClock
	// pend are the sleeping groups Touch queued: the waker goroutine
	// wakes them on a real-time wheel, mu's holder (unlock) on a virtual
	// one. pend is guarded by pendMu; npend is len(pend), atomic, read
	// without pendMu.
	pendMu sync.Mutex
	pend   []*group
	npend  atomic.Int32
	// behind is set while the host runs late (see overload.go), for
	// Stats: written under mu. laggingSkips counts the silences the nodes'
	// Config.Lagging held. Atomic.
	behind       atomic.Bool
	laggingSkips atomic.Int64
	peers        map[election.ID]*peer
	// peerTab is peers for the nodes' Config.Lagging, which may not take
	// mu: replaced (under mu) whenever a peer is added, never changed.
	peerTab atomic.Pointer[map[election.ID]*peer]
	// peerList is peers' values, for loops over them. Guarded by mu.
	peerList []*peer
	peerIDs  []election.ID // keys of peers, sorted (a new slice on every change)
	all      []*group      // every group, in the order added
	awakeL   []*group      // the awake groups; awakeState.at is the index
	// awakeN holds the awake groups' nodes, in awakeL's order: the sweep,
	// which asks every awake node something lock-free (does it lead, is
	// its leader silent), reads these pointers, not the groups.
	awakeN []*election.Node
	// awakeA holds the awake groups' awake states, in awakeL's order, for
	// the sweep likewise.
	awakeA []*awakeState
	// leadersL are the awake groups this host leads, for the heartbeat
	// tick (Coalesce), joined by groups that wake or are elected as
	// leader and by those a sweep finds leading unlisted; it may hold
	// groups that no longer lead or sleep, which the tick drops.
	leadersL []leaderEntry
	// beatSeq counts the heartbeat ticks, beatAt is the last one's time
	// and heardAt the time of the one before it if its answers can vouch
	// for its leaders' quorums, else -1 (see beats.go). Under mu.
	beatSeq         uint64
	beatAt, heardAt time.Duration
	voters          map[string]*voterSet // interned voter sets
	sweepT          wheel.Timer          // every heartbeat interval: hibernate idle groups
	sweepDue        time.Duration        // sweepT's deadline
	// sweepMoreT continues a sweep (see sweepSome): while sweeping, the
	// sweep has the awake groups before index sweepI left to visit, and
	// may yield the driver until sweepUntil.
	sweepMoreT wheel.Timer
	sweeping   bool
	sweepUntil time.Duration
	sweepI     int
	// lateness is how late the last sweep ran, maxLateness the most
	// since the host started (see overload.go).
	lateness, maxLateness time.Duration
	lateAt                time.Duration // when a sweep last ran late
	wasLate               bool          // a sweep ever ran late
	pingT                 wheel.Timer   // every LivenessInterval: liveness messages
	// flights are the groups woken by failover with no leader known yet
	// (see failover.go); group.fo is each one's index plus one.
	flights []flight
	stats   Stats
	// stepNow is the wheel time a Step read when it last took mu: the
	// time its entries are stepped at, read once per chunk of entries
	// rather than per entry.
	stepNow time.Duration

	// outMu serializes the flushes over every outbox and guards outOrder
	// and the creation of outboxes; it is never held while the Transport
	// is called. Each outbox has a lock of its own, taken inside outMu by
	// the flushes and alone by send (outMu -> outbox.mu).
	outMu    sync.Mutex
	outs     atomic.Pointer[map[election.ID]*outbox] // replaced under outMu, never changed
	outOrder []election.ID                           // keys of outs, sorted
	flushT   wheel.Timer                             // every CoalesceWindow (Coalesce only); stopped under outMu
	hbT      wheel.Timer                             // every hbTick: the led groups heartbeat (Coalesce only); under mu
	hbTick   time.Duration                           // set by NewHost
	tickDue  time.Duration                           // hbT's deadline; under mu
	// walkT continues the tick's walk over the leaders (see walkSome):
	// while walking, the tick at walkAt has visited the leaders before
	// walkI, kept walkK of them, and vouched for the quorum of vouched;
	// it may yield the driver until walkUntil. Under mu.
	walkT                 wheel.Timer
	walking               bool
	walkAt, walkUntil     time.Duration
	walkI, walkK, vouched int
	// wakeKick wakes the waker goroutine (real-time wheels; see Touch).
	wakeKick chan struct{}
	// tickOut are the heartbeats the tick gathered (see tick); reused.
	tickOut []tickBeat
	// ticking is set while the heartbeat tick makes its leaders heartbeat.
	ticking atomic.Bool

	// The effects queue (lock.go): fx and draining are guarded by fxMu;
	// nfx counts fx's entries, read without it.
	fxMu        sync.Mutex
	fx, fxSpare []effect
	nfx         atomic.Int64
	draining    bool

	// The persister (store.go). pmu guards dirty, the groups' ps and
	// persistArmed; wmu is held while a write runs and guards wstopped.
	pmu                      sync.Mutex
	dirty, batchSpare        []pending // the states to write; batchSpare: the last batch's array
	persistArmed             bool
	persistT                 wheel.Timer   // the persister on a virtual wheel
	persistDelay             time.Duration // its delay: the wheel's tick
	kick                     chan struct{} // wakes the persister goroutine (real time)
	quit                     chan struct{} // closed by Stop (real time)
	wmu                      sync.Mutex
	wstopped                 bool
	statesSpare              []GroupState // persister only
	saves, syncs, saveErrors atomic.Int64 // Stats
}

// group is one group's replica. While it hibernates, node and a are nil
// and dormant holds what the node knew. id, voters, st and log are set
// when it is added; node, a, dormant and behind are guarded by Host.mu;
// the atomic fields are read without it, as each says.
type group struct {
	id     GroupID
	voters *voterSet
	// fast is node while the group is awake and nil while it hibernates
	// or is being put to sleep, for Step's lock-free path (see
	// inbound.go), which reads it with id and voters: all three at the
	// group's start, where a lookahead prefetches. Written under mu.
	fast    atomic.Pointer[election.Node]
	st      election.Storage
	log     election.LogView // nil: an empty log
	node    *election.Node
	a       *awakeState
	dormant election.Dormant
	// behind marks (by voter index, all from 63 on) the followers a
	// hibernating leader left behind because liveness took their nodes
	// for dead: when one comes back, the group wakes to update it.
	behind uint64
	// wokeAt is the wheel time the group last woke (0: never), for
	// Config.Lagging (see overload.go). Written under mu, read without.
	wokeAt atomic.Int64
	// queued is set while the group waits in Host.pend to be woken.
	queued atomic.Bool
	// fo is the group's failover state (see failover.go): foNone,
	// foQueued, or its place in Host.flights plus one. Under mu.
	fo int32
	// ps is the group's persistence, guarded by Host.pmu (store.go).
	ps persistState
	// The group's last Touch time and its awake bit, which Touch reads
	// and writes without mu, live beside it in its index slot, not here
	// (see touchWord in index.go).
}

// bit returns the behind bit of voter index i.
func bit(i int) uint64 { return 1 << min(i, 63) }

// awakeState is what the host tracks of an awake group (of its node:
// each node has its own), guarded by Host.mu but for nodeTerm. The sweep
// reads a leader's here, not in its group, so that it loads no group's
// memory for a group that stays awake (see Host.sweepBusy).
type awakeState struct {
	// lastActive is when the group woke or its node's term changed, or
	// a Touch the sweep read (see Host.touchedSince).
	lastActive time.Duration
	term       uint64 // the node's term at the last sweep
	// nodeTerm is the node's term as the host last saw it: at its start,
	// and in every HardState it hands the persister (a node persists
	// every term it moves to). Written with the node's lock or Host.mu
	// held.
	nodeTerm atomic.Uint64
	// transferTerm is the term in which the node, as leader, last sent a
	// leadership transfer (0: none): it does not hibernate in it.
	transferTerm uint64
	at           int  // index in Host.awakeL
	listed       bool // in Host.leadersL
}

// leaderEntry is a group in the tick's list of leaders, with what the
// tick reads of it, so that the tick visits its leaders' nodes without
// loading their groups: the node that leads (a node the group replaced,
// having slept, is not Leading and leaves the list) and the awake state
// whose listed flag says the group is in the list.
type leaderEntry struct {
	node   *election.Node
	a      *awakeState
	id     GroupID
	voters *voterSet
	// term is the term of the heartbeats the last tick gathered for the
	// group, 0 if it gathered none (see beats.go).
	term uint64
}

// voterSet is a group's voters, shared by every group with the same ones,
// and whether a quorum of them answered every heartbeat of the tick
// before tick seq (see Host.heardFrom).
type voterSet struct {
	ids   []election.ID
	seq   uint64
	heard bool
}

func (v *voterSet) index(id election.ID) int { return slices.Index(v.ids, id) }

// peer is a peer node: its liveness timer, reset by every batch from it,
// and what this host has processed from it (see overload.go).
type peer struct {
	id    election.ID
	alive bool // guarded by Host.mu; up mirrors it for Config.Lagging
	timer wheel.Timer
	// up is alive, read by Config.Lagging without Host.mu.
	up atomic.Bool
	// heard is set when the peer answered every heartbeat the host's
	// last tick sent it (see beats.go). Under Host.mu.
	heard bool
	// tickAt is the wheel time at which this host began stepping the
	// peer's last tick batch (Batch.Tick), before any of its entries, so
	// that every contact a tick batch brought is at tickAt or later: a
	// follower last heard before tickAt was not in it. answered is the
	// latest send time
	// (this host's wheel) of a heartbeat whose coalesced answer from the
	// peer it stepped, answeredAt when it stepped it. -1: none yet.
	// Written under Host.mu at the end of a Step, read without it.
	tickAt, answered, answeredAt atomic.Int64
	// beatsFrom is the wheel time of the first tick batch this host sent
	// the peer, -1 before: from then on its answers are due (see
	// lagging). Written by endTick, read without Host.mu.
	beatsFrom atomic.Int64
	// downAt is the wheel time of the last verdict that the peer is
	// down; tickPace and answerPace are tickGap's and answerLag's values
	// (see holdLimit). Written under Host.mu, read without it.
	downAt, tickPace, answerPace atomic.Int64
	// tickGap is the longest recent gap between the peer's tick batches,
	// answerLag the longest recent round trip of its answers (the time
	// from a heartbeat's send to its answer stepped). Under Host.mu.
	tickGap, answerLag recentMax
	// othersFrom is when the host first finished stepping a batch of
	// another peer after this one's last (-1: none since); heldOnce
	// marks a liveness verdict put off once (see onPeerSilent). Under
	// Host.mu.
	othersFrom time.Duration
	heldOnce   bool
	// heardAt is when the peer's last batch was admitted; gap the longest
	// recent gap between its batches (see livenessWait); silentAt when the
	// liveness timer, as last armed, comes due. Under Host.mu.
	heardAt, silentAt time.Duration
	gap               recentMax
	// failover are the hibernating groups the peer led that wait for
	// this host to wake them, from failover[foHead] on (see
	// failover.go). Under Host.mu.
	failover []*group
	foHead   int
}

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
	if w == nil || isnil.Is(tr) {
		return nil, fmt.Errorf("%w: wheel and transport must not be nil", ErrInvalidConfig)
	}
	if c.Coalesce && !eff.Emulate.HeartbeatPerPeer {
		// The host's tick drives its leaders' heartbeats and their
		// CheckQuorum: no leader keeps a heartbeat or step-down timer
		// only for the tick to outrun it. A follower that hears its
		// leader keeps no election timer either: the sweep watches its
		// contact (election.Node.SuperviseContact), which costs a load
		// per follower per sweep, where a timer fired once per election
		// timeout on the wheel's one driver goroutine (see
		// docs/performance.md).
		eff.ExternalHeartbeat = true
		eff.ExternalCheckQuorum = true
		if eff.Detection != election.CheckLastContact && eff.Emulate.ServerLock == nil {
			// Followers answer their leaders' heartbeats lock-free and
			// the sweep watches their contact (superviseWithin).
			eff.Detection = election.ContactDeadline
			eff.ExternalContact = true
		}
	}
	if err := c.fitTick(eff, cfg.CoalesceWindow, w.Tick()); err != nil {
		return nil, err
	}
	if !c.GroupLabels {
		// Every node has the host's ID and labels: one metrics state
		// and one logger for all of them.
		eff = eff.Shared()
	}
	h := &Host{
		cfg: c, ecfg: eff, id: c.ID, w: w, tr: tr, store: c.Store,
		lease:  time.Duration(float64(eff.ElectionTimeout) * eff.LeaseRatio),
		born:   w.Now(),
		rng:    c.Rand,
		peers:  make(map[election.ID]*peer),
		voters: make(map[string]*voterSet),
	}
	if h.rng == nil {
		h.rng = randsrc.New()
	}
	h.stamp.refresh(h.born)
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	h.logger = eff.Logger
	if h.logger == nil {
		h.logger = hclog.Default()
	}
	h.logger = h.logger.Named("multiraft")
	if err := h.persistT.Init(w, h.onPersistTimer); err != nil {
		return nil, err
	}
	h.outs.Store(&map[election.ID]*outbox{})
	h.peerTab.Store(&map[election.ID]*peer{})
	if err := h.sweepT.Init(w, h.onSweep); err != nil {
		return nil, err
	}
	if err := h.sweepMoreT.Init(w, h.onSweepMore); err != nil {
		return nil, err
	}
	if err := h.pingT.Init(w, h.onPing); err != nil {
		return nil, err
	}
	if err := h.flushT.Init(w, h.onFlush); err != nil {
		return nil, err
	}
	if !w.IsVirtual() {
		h.wakeKick = make(chan struct{}, 1)
	}
	if err := h.hbT.Init(w, h.onHeartbeatTick); err != nil {
		return nil, err
	}
	if err := h.walkT.Init(w, h.onWalk); err != nil {
		return nil, err
	}
	if c.Coalesce {
		// The tick judges every leader's CheckQuorum: a wake-up late by
		// the runtime's millisecond makes them all late.
		if err := h.hbT.SetPrecise(true); err != nil {
			return nil, err
		}
	}
	h.sweepDue = w.Now() + eff.HeartbeatInterval
	if _, err := h.sweepT.TryResetAt(h.sweepDue); err != nil {
		return nil, err
	}
	h.metrics = newHostMetrics(eff.Metrics, uint64(c.ID))
	h.pingT.Reset(c.LivenessInterval)
	if c.Coalesce {
		h.flushT.Reset(c.CoalesceWindow)
		h.hbTick = heartbeatTick(eff.HeartbeatInterval)
		h.tickDue = w.Now() + h.hbTick
		h.hbT.ResetAt(h.tickDue)
	}
	if w.IsVirtual() {
		h.persistDelay = w.Tick()
	} else {
		h.startPersister()
	}
	if h.wakeKick != nil {
		go h.wakeLoop()
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
	// Storage, if set, persists this replica's term and vote instead of
	// the host's Store: the host calls its Load in AddGroup and its Save
	// on the host's persister, one Save per changed state, with no lock
	// held. nil means the host's Store (Config.Store), which writes the
	// states of many groups with one sync.
	Storage election.Storage
	// Log is the replica's log view; nil means an empty log.
	Log election.LogView
	// Leader, if set, bootstraps a new group with this voter as the
	// leader of term 1, as if it had won term 1's election with every
	// vote: a replica whose stored state is empty saves term 1 with a
	// vote for Leader and starts knowing it (hibernating if the Host
	// hibernates, so that adding a million groups creates no Node). It
	// must be the same on every host, like Voters; with a stored state
	// that is not empty it is ignored. None starts the replica as a
	// follower that elects a leader the normal way.
	Leader election.ID
}

// AddGroup adds a group's replica and starts it from its stored term and
// vote (the Store's, or its own Storage's), which it loads before it takes
// the host's lock. Errors: ErrStopped, ErrGroupExists, ErrInvalidConfig
// (wrapped) for bad voters, and the store's or node's errors.
func (h *Host) AddGroup(gc GroupConfig) error {
	if !slices.Contains(gc.Voters, h.id) {
		return fieldErr("Voters", gc.Voters, "must include this host (%d)", h.id)
	}
	if gc.Leader != election.None && !slices.Contains(gc.Voters, gc.Leader) {
		return fieldErr("Leader", gc.Leader, "must be one of the voters")
	}
	if h.halted.Load() {
		return ErrStopped
	}
	var hs election.HardState
	var err error
	if gc.Storage != nil {
		hs, err = gc.Storage.Load()
	} else {
		hs, err = h.store.Load(gc.ID)
	}
	if err != nil {
		return fmt.Errorf("multiraft: group %d: load hard state: %w", gc.ID, err)
	}
	if hs.Term > election.MaxTerm {
		return fmt.Errorf("multiraft: group %d: stored term %d is above MaxTerm (%d): %w", gc.ID, hs.Term, election.MaxTerm, election.ErrTermExhausted)
	}
	h.lock()
	defer h.unlock()
	if h.stopped {
		return ErrStopped
	}
	if h.groups.get(gc.ID) != nil {
		return fmt.Errorf("%w: %d", ErrGroupExists, gc.ID)
	}
	vs, err := h.internVoters(gc.Voters)
	if err != nil {
		return err
	}
	g := &group{id: gc.ID, voters: vs, st: gc.Storage, log: gc.Log}
	g.ps.durable = hs
	if gc.Leader != election.None && hs.Term == 0 {
		// The bootstrap state is a function of the group's
		// configuration: a crash before its write re-creates it, so the
		// replica may act on it at once.
		boot := election.HardState{Term: 1, Vote: gc.Leader}
		g.ps.durable = boot
		h.queueState(g, boot, 0, nil)
		h.addGroup(g)
		d := election.Dormant{Term: 1, Leader: gc.Leader}
		if h.cfg.HibernateAfter > 0 {
			g.dormant = d
			h.stats.Hibernating++
			return nil
		}
		return h.startAdded(g, d)
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
	p := &peer{id: id, alive: true, othersFrom: -1}
	p.up.Store(true)
	p.tickAt.Store(-1)
	p.answered.Store(-1)
	p.answeredAt.Store(-1)
	p.beatsFrom.Store(-1)
	_ = p.timer.Init(h.w, func() { h.onPeerSilent(p) })
	p.timer.Reset(h.cfg.LivenessTimeout)
	h.peers[id] = p
	h.peerList = append(h.peerList, p)
	tab := maps.Clone(h.peers)
	h.peerTab.Store(&tab)
	ids := append(slices.Clone(h.peerIDs), id)
	slices.Sort(ids)
	h.peerIDs = ids
	return p
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

// Campaign wakes the group and calls election.Node.Campaign.
func (h *Host) Campaign(gid GroupID) error {
	h.lock()
	defer h.unlock()
	g, err := h.lookup(gid)
	if err != nil {
		return err
	}
	return g.node.Campaign()
}

// TransferLeadership wakes the group and calls
// election.Node.TransferLeadership. The leader then stays awake for the
// rest of its term: its MsgTimeoutNow may reach the transferee at any
// time while the term lasts, and a leader that hibernated and woke would
// forget that it transferred and hold a lease again.
func (h *Host) TransferLeadership(gid GroupID, to election.ID) error {
	h.lock()
	defer h.unlock()
	g, err := h.lookup(gid)
	if err != nil {
		return err
	}
	if err := g.node.TransferLeadership(to); err != nil {
		return err
	}
	if to != h.id {
		g.a.transferTerm = g.node.Status().Term
	}
	return nil
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
	h.lock()
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

// Stop stops every group's node, the host's timers and its persister; a
// crash. The groups' durable HardStates stay in the Store (or their
// Storages); states not written yet are dropped, and so are the messages
// their nodes held for them. Stop waits for a write in progress, so that
// no Store call runs after it returns. Stop is idempotent and may be
// called from an Observer or a Transport.
func (h *Host) Stop() {
	h.lock()
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
	h.sweepMoreT.Stop()
	h.pingT.Stop()
	h.hbT.Stop()
	h.walkT.Stop()
	_ = h.hbT.SetPrecise(false) // initialized: cannot fail
	h.unlock()
	h.outMu.Lock() // see onFlush
	h.flushT.Stop()
	h.outMu.Unlock()
	h.stopPersister()
}

// groupTransport is a group node's Transport: the host's send.
type groupTransport struct {
	h *Host
	g GroupID
}

func (t groupTransport) Send(m election.Message) { t.h.send(t.g, m) }
