package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/sim/internal/vnet"
	"github.com/raftick/raftick/wheel"
)

// Config configures a Cluster: the engine's description of a simulated
// group (experiments describe theirs in higher-level terms and build a
// Config from it).
type Config struct {
	// Nodes is the number of servers, with IDs 1..Nodes; in [1, 1000].
	Nodes int
	// Election is the template of every node's configuration; NewCluster
	// sets ID, Voters (all servers), Rand and Observer per node, and turns
	// the nodes' metrics off unless Election.Metrics names a sink (a
	// simulator runs thousands of clusters; go-metrics' global sink is for
	// one real process).
	Election election.Config
	// Network is the message and disk model.
	Network Network
	// Rand drives everything random in the cluster (latencies, loss, the
	// nodes' timer jitter); required. The cluster is deterministic for a
	// given Rand state.
	Rand *rand.Rand
	// Observer, if set, receives every node's events in the order they
	// happen.
	Observer func(election.Event)
	// OnSend, if set, sees every message a node sends, before the network
	// model touches it.
	OnSend func(election.Message)
	// Trace, if set, receives one line per fault the cluster injects
	// (crash, restart, pause, resume, partition), for --trace.
	Trace func(at time.Duration, node election.ID, what string)
	// PerNode, if set, adjusts each node's configuration after the
	// template's per-node fields are set (a timer rate per server, say).
	// It runs once per node at NewCluster and at each Restart.
	PerNode func(id election.ID, ec *election.Config)
	// Logger is given to the nodes; nil means a null logger. (The cluster
	// wraps it to notice panics its nodes' timers recover: see Err.)
	Logger hclog.Logger
	// Context, if not nil, interrupts Run when it is cancelled: Run checks
	// it every CheckEvery instants it processes (cheaply, so a trial that
	// runs billions of events still stops promptly), and Err then reports
	// the context's error.
	Context context.Context
}

// CheckEvery is how many instants Cluster.Run processes between two
// checks of Config.Context.
const CheckEvery = 1024

// MaxNodes is the largest number of servers a Cluster simulates.
const MaxNodes = 1000

// Validate reports the first invalid field of c, or nil. Errors are
// *FieldError wrapping ErrInvalidConfig. The election template is
// checked by NewCluster, which builds the nodes.
func (c Config) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return fieldErr("Nodes", c.Nodes, "must be in [1, %d]", MaxNodes)
	case c.Rand == nil:
		return fieldErr("Rand", "nil", "is required (seed it for reproducible runs)")
	}
	return c.Network.Validate()
}

// Cluster is a simulated Raft group: election.Nodes on one virtual wheel
// that carries every node's timers and every message in flight, so the
// whole group runs as "jump to the next deadline, fire it", on one
// goroutine, reproducibly. A Cluster is not safe for concurrent use.
type Cluster struct {
	cfg     Config
	w       *Wheel
	rng     *rand.Rand
	members []*member
	cut     [][]bool // cut[from][to]: link from->to is down
	stats   NetStats
	mail    *vnet.Courier[election.Message]
	voters  []election.ID
	check   *electiontest.Checker // fed every event of every node
	err     error                 // why Run stopped early: the context's error
}

type member struct {
	id       election.ID
	node     *election.Node
	store    *diskStorage
	log      *Log
	up       bool // started and not crashed
	paused   bool
	resume   *wheel.Timer
	outbox   []election.Message // sent while paused
	inbox    []queued           // arrived (or came due) while paused
	diskAt   time.Duration      // instant of the last write issued
	diskEnd  time.Duration      // when the last write issued completes
	writes   int
	pauseEnd time.Duration // end of the last Pause
	diskBusy time.Duration // blocking disk: frozen until then
	// termAt, termEnd: the instant of the last Save that changed the term
	// and cast a vote, and when its term write (the first) completes.
	termAt, termEnd time.Duration
}

// queued is what waits for a blocked server: a message that arrived, or
// (Network.TimersWait) a timer that came due.
type queued struct {
	msg election.Message
	run func() // a deferred timer; msg is unused then
}

// Log is a mutable election.LogView: experiments give servers logs of
// different lengths and change them between phases.
type Log struct{ index, term uint64 }

// Last returns the index and term of the last entry.
func (l *Log) Last() (index, term uint64) { return l.index, l.term }

// Set sets the last entry.
func (l *Log) Set(index, term uint64) { l.index, l.term = index, term }

// diskStorage keeps a node's HardState in memory (it survives crashes, as
// a disk would) and charges each Save to the node's simulated disk.
type diskStorage struct {
	c     *Cluster
	m     *member
	inner *election.MemoryStorage
}

func (s *diskStorage) Load() (election.HardState, error) { return s.inner.Load() }

func (s *diskStorage) Save(hs election.HardState) error {
	prev, _ := s.inner.Load()
	if err := s.inner.Save(hs); err != nil {
		return err
	}
	// One write per durable change, as LogCabin makes them: a voter
	// writes when it adopts a higher term and again when it casts its
	// vote, however the node batches them into Saves; a candidate writes
	// its new term and its vote for itself at once. (GroupCommit merges
	// everything of one instant.)
	writes := 0
	if hs.Term != prev.Term {
		writes++
	}
	if hs.Vote != election.None && hs.Vote != s.m.id && (hs.Vote != prev.Vote || hs.Term != prev.Term) {
		writes++
	}
	first := s.c.diskWrite(s.m, max(writes, 1))
	if writes == 2 {
		s.m.termAt, s.m.termEnd = s.c.w.Now(), first
	}
	return nil
}

// hostLock is a member's election.HostLock: the blocking server of
// Network.TimersWait and Network.RearmAfterTermWrite.
type hostLock struct {
	c *Cluster
	m *member
}

// DeferTimer queues a timer that comes due while the server is blocked by
// a disk write behind the messages that arrived before it.
func (h hostLock) DeferTimer(run func()) bool {
	c, m := h.c, h.m
	if !c.cfg.Network.TimersWait || !m.up || !m.paused || m.diskBusy <= c.w.Now() {
		return false
	}
	m.inbox = append(m.inbox, queued{run: run})
	return true
}

// TermDurableIn is the time left until the term write of the Save just
// made completes.
func (h hostLock) TermDurableIn() time.Duration {
	c, m := h.c, h.m
	if !c.cfg.Network.RearmAfterTermWrite || m.termAt != c.w.Now() {
		return 0
	}
	return max(m.termEnd-c.w.Now(), 0)
}

// NewCluster builds a cluster of cfg.Nodes servers, none started.
func NewCluster(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w, err := NewWheel()
	if err != nil {
		return nil, err
	}
	cfg.Logger = w.Logger(cfg.Logger)
	c := &Cluster{cfg: cfg, w: w, rng: cfg.Rand, check: electiontest.NewChecker(cfg.Nodes)}
	obs := cfg.Observer
	c.cfg.Observer = func(e election.Event) {
		c.check.Observe(e)
		if obs != nil {
			obs(e)
		}
	}
	c.mail = vnet.NewCourier(w.Wheel, c.deliver)
	c.voters = make([]election.ID, cfg.Nodes)
	c.cut = make([][]bool, cfg.Nodes+1)
	for i := range c.cut {
		c.cut[i] = make([]bool, cfg.Nodes+1)
	}
	for i := range cfg.Nodes {
		c.voters[i] = election.ID(i + 1)
	}
	for _, id := range c.voters {
		m := &member{id: id, log: &Log{}}
		m.store = &diskStorage{c: c, m: m, inner: election.NewMemoryStorage()}
		c.members = append(c.members, m)
		if err := c.newNode(m); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) newNode(m *member) error {
	ec := c.cfg.Election
	ec.ID = m.id
	ec.Voters = c.voters
	ec.Rand = c.rng
	ec.Logger = c.cfg.Logger
	ec.Observer = c.cfg.Observer
	if ec.Metrics == nil {
		ec.Metrics = &metrics.BlackholeSink{}
	}
	if net := &c.cfg.Network; net.Disk != nil && (net.TimersWait || net.RearmAfterTermWrite) {
		ec.Host = hostLock{c, m}
	}
	if c.cfg.Network.LeaderWrite && c.cfg.Network.Disk != nil {
		obs := c.cfg.Observer
		writes := max(c.cfg.Network.LeaderWrites, 1)
		ec.Observer = func(e election.Event) {
			if e.Type == election.EventLeaderElected && m.up {
				c.diskWrite(m, writes)
			}
			if obs != nil {
				obs(e)
			}
		}
	}
	if c.cfg.PerNode != nil {
		c.cfg.PerNode(m.id, &ec)
	}
	tr := election.TransportFunc(func(msg election.Message) { c.send(m, msg) })
	n, err := election.NewNode(ec, c.w.Wheel, tr, m.store, m.log)
	if err != nil {
		return fmt.Errorf("%w: Election (node %d): %w", ErrInvalidConfig, m.id, err)
	}
	m.node = n
	return nil
}

// Wheel returns the cluster's virtual wheel.
func (c *Cluster) Wheel() *Wheel { return c.w }

// Err reports why the cluster's run is not to be trusted: a *PanicError
// if a callback on its wheel panicked (the wheel recovered it, so the
// run went on with a node or the network in a broken state), else a
// *SafetyError if the nodes' events broke election safety, else the
// context's error if Run stopped because Config.Context was cancelled,
// else nil.
func (c *Cluster) Err() error {
	if err := c.w.Err(); err != nil {
		return err
	}
	if err := c.check.Err(); err != nil {
		return &SafetyError{Err: err}
	}
	return c.err
}

// Now returns the cluster's virtual time.
func (c *Cluster) Now() time.Duration { return c.w.Now() }

// Rand returns the cluster's random source (for experiments that draw
// their own random choices in the same stream).
func (c *Cluster) Rand() *rand.Rand { return c.rng }

// IDs returns the servers' IDs, 1..Nodes.
func (c *Cluster) IDs() []election.ID { return c.voters }

func (c *Cluster) member(id election.ID) *member {
	if id < 1 || int(id) > len(c.members) {
		return nil
	}
	return c.members[id-1]
}

// Node returns server id's current node (a new one after each Restart),
// or nil for an unknown id.
func (c *Cluster) Node(id election.ID) *election.Node {
	if m := c.member(id); m != nil {
		return m.node
	}
	return nil
}

// Log returns server id's log, or nil for an unknown id.
func (c *Cluster) Log(id election.ID) *Log {
	if m := c.member(id); m != nil {
		return m.log
	}
	return nil
}

// Up reports whether server id is started and not crashed.
func (c *Cluster) Up(id election.ID) bool {
	m := c.member(id)
	return m != nil && m.up
}

// Stats returns the network counters.
func (c *Cluster) Stats() NetStats { return c.stats }

func (c *Cluster) trace(id election.ID, what string) {
	if c.cfg.Trace != nil {
		c.cfg.Trace(c.w.Now(), id, what)
	}
}

// Start starts the given servers (every server if none is given). Starting
// a running server is an error.
func (c *Cluster) Start(ids ...election.ID) error {
	if len(ids) == 0 {
		ids = c.voters
	}
	for _, id := range ids {
		m := c.member(id)
		if m == nil {
			return fmt.Errorf("Start: %w: %d", ErrNoServer, id)
		}
		if m.up {
			return fmt.Errorf("Start: %w: %d", ErrServerRunning, id)
		}
		if err := m.node.Start(); err != nil {
			return fmt.Errorf("sim: Start server %d: %w", id, err)
		}
		m.up = true
	}
	return nil
}

// Crash stops server id at once: its timers die, messages to it are
// dropped, messages it already sent stay in flight. Its term and vote
// survive in its storage. Crashing a server that is down does nothing.
func (c *Cluster) Crash(id election.ID) {
	m := c.member(id)
	if m == nil || !m.up {
		return
	}
	c.trace(id, "crash")
	m.up = false
	m.node.Stop()
	if m.paused {
		m.paused = false
		m.resume.Stop()
	}
	m.pauseEnd, m.diskBusy = 0, 0
	for _, q := range m.inbox {
		if q.run == nil {
			c.stats.DroppedDown++
		}
	}
	m.outbox, m.inbox = m.outbox[:0], m.inbox[:0]
}

// Restart brings a crashed server back as a new node that loads its term
// and vote from storage and starts as a follower.
func (c *Cluster) Restart(id election.ID) error {
	m := c.member(id)
	if m == nil {
		return fmt.Errorf("Restart: %w: %d", ErrNoServer, id)
	}
	if m.up {
		return fmt.Errorf("Restart: %w: %d (Crash it first)", ErrServerRunning, id)
	}
	if err := c.newNode(m); err != nil {
		return err
	}
	m.diskEnd = c.w.Now()
	c.trace(id, "restart")
	return c.Start(id)
}

// Pause freezes server id for d, like a long garbage-collection pause or
// a SIGSTOP: messages that arrive meanwhile queue up, and messages it
// sends meanwhile (its timers keep firing, as overdue timers do when a
// process resumes) are held back. When it resumes, the held messages
// leave, then the queued ones are delivered, in order. Pausing a paused
// server extends the pause to end d from now.
func (c *Cluster) Pause(id election.ID, d time.Duration) error {
	m := c.member(id)
	if m == nil || !m.up {
		return fmt.Errorf("Pause: %w: %d", ErrServerDown, id)
	}
	c.trace(id, fmt.Sprintf("pause for %v", d))
	m.pauseEnd = addSat(c.w.Now(), max(d, 0))
	return c.block(m, m.pauseEnd)
}

// block freezes m until at least until.
func (c *Cluster) block(m *member, until time.Duration) error {
	if m.resume == nil {
		m.resume = new(wheel.Timer)
		if err := m.resume.Init(c.w.Wheel, func() { c.resume(m) }); err != nil {
			return err
		}
	}
	if d, ok := m.resume.Deadline(); m.paused && ok && d >= until {
		return nil
	}
	m.paused = true
	m.resume.Reset(until - c.w.Now())
	return nil
}

func (c *Cluster) resume(m *member) {
	if !m.up || !m.paused {
		return
	}
	if end := max(m.pauseEnd, m.diskBusy); end > c.w.Now() {
		m.resume.Reset(end - c.w.Now())
		return
	}
	if m.pauseEnd == c.w.Now() {
		c.trace(m.id, "resume")
	}
	m.paused = false
	out := m.outbox
	m.outbox = nil
	for _, msg := range out {
		c.transmit(m, msg)
	}
	for len(m.inbox) > 0 && m.up && !m.paused {
		q := m.inbox[0]
		m.inbox = m.inbox[1:]
		if q.run != nil {
			q.run()
		} else {
			c.step(m, q.msg)
		}
	}
	if len(m.inbox) == 0 {
		m.inbox = nil
	}
}

// Partition splits the servers into groups that cannot reach each other
// (a full partition): every link between different groups is cut both
// ways; links within a group are restored. Servers not listed form one
// more group together.
func (c *Cluster) Partition(groups ...[]election.ID) {
	group := make([]int, len(c.members)+1)
	for g, ids := range groups {
		for _, id := range ids {
			if c.member(id) != nil {
				group[id] = g + 1
			}
		}
	}
	for a := 1; a <= len(c.members); a++ {
		for b := 1; b <= len(c.members); b++ {
			c.cut[a][b] = group[a] != group[b]
		}
	}
	c.trace(0, fmt.Sprintf("partition %v", groups))
}

// Cut cuts the one-way link from -> to (an asymmetric partition: to's
// messages still reach from). Cut both directions of a few links for a
// partial partition, where some servers still reach everyone.
func (c *Cluster) Cut(from, to election.ID) {
	if c.member(from) != nil && c.member(to) != nil {
		c.cut[from][to] = true
		c.trace(0, fmt.Sprintf("cut %d->%d", from, to))
	}
}

// Linked reports whether the one-way link from -> to is up (not cut);
// false for an unknown server.
func (c *Cluster) Linked(from, to election.ID) bool {
	return c.member(from) != nil && c.member(to) != nil && !c.cut[from][to]
}

// Heal restores every link.
func (c *Cluster) Heal() {
	for a := range c.cut {
		clear(c.cut[a])
	}
	c.trace(0, "heal")
}

// Run advances virtual time deadline by deadline until done returns true
// (checked before each instant is processed, and once more after the
// last) or the next deadline lies beyond limit. It returns done(). It
// also stops, returning false, when Config.Context is cancelled (Err
// then reports why).
func (c *Cluster) Run(limit time.Duration, done func() bool) bool {
	var stop func() bool
	if ctx := c.cfg.Context; ctx != nil {
		stop = func() bool {
			if err := ctx.Err(); err != nil {
				c.err = err
				return true
			}
			return false
		}
	}
	return vnet.Run(c.w.Virtual, limit, done, stop, CheckEvery)
}

// RunFor is Run with the limit d after the current virtual time
// (saturating: a huge d never wraps into the past).
func (c *Cluster) RunFor(d time.Duration, done func() bool) bool {
	return c.Run(addSat(c.w.Now(), d), done)
}

// Close stops the wheel; the cluster must not be used afterwards.
func (c *Cluster) Close() { c.w.Stop() }

// diskWrite charges n writes to m's disk, after the writes it already
// issued, and returns when the first of them completes.
func (c *Cluster) diskWrite(m *member, n int) (first time.Duration) {
	disk := c.cfg.Network.Disk
	now := c.w.Now()
	if disk == nil {
		return now
	}
	if c.cfg.Network.GroupCommit {
		if m.writes > 0 && m.diskAt == now {
			return m.diskEnd // same instant: one write
		}
		n = 1
	}
	end := max(now, m.diskEnd)
	for i := range n {
		end = addSat(end, disk.Sample(c.rng))
		if i == 0 {
			first = end
		}
	}
	m.diskAt, m.diskEnd = now, end
	m.writes += n
	c.stats.DiskWrites += n
	if c.cfg.Network.DiskBlocks {
		m.diskBusy = m.diskEnd
		_ = c.block(m, m.diskEnd)
	}
	return first
}

func (c *Cluster) send(from *member, msg election.Message) {
	c.stats.Sent++
	if c.cfg.OnSend != nil {
		c.cfg.OnSend(msg)
	}
	if !from.up {
		c.stats.DroppedDown++
		return
	}
	if from.paused {
		c.stats.Held++
		from.outbox = append(from.outbox, msg)
		return
	}
	c.transmit(from, msg)
}

func (c *Cluster) transmit(from *member, msg election.Message) {
	now := c.w.Now()
	var depart time.Duration
	if msg.Type.IsResponse() && from.diskEnd > now {
		depart = from.diskEnd - now
	}
	net := &c.cfg.Network
	if net.Loss > 0 && c.rng.Float64() < net.Loss {
		c.stats.DroppedLoss++
		return
	}
	copies := 1
	if net.Duplicate > 0 && c.rng.Float64() < net.Duplicate {
		copies = 2
		c.stats.Duplicated++
	}
	lat := net.latency(from.id, msg.To)
	for range copies {
		d := depart
		if lat != nil {
			d = addSat(d, lat.Sample(c.rng))
		}
		c.schedule(msg, d)
	}
}

func (c *Cluster) schedule(msg election.Message, d time.Duration) {
	if c.mail.Send(msg, d) != nil {
		c.stats.DroppedDown++ // the wheel is stopped: nothing is delivered any more
	}
}

func (c *Cluster) deliver(msg election.Message) {
	to := c.member(msg.To)
	if to == nil || !to.up {
		c.stats.DroppedDown++
		return
	}
	if from := c.member(msg.From); from != nil && c.cut[msg.From][msg.To] {
		c.stats.DroppedPartition++
		return
	}
	if to.paused {
		c.stats.Held++
		to.inbox = append(to.inbox, queued{msg: msg})
		return
	}
	c.step(to, msg)
}

// step hands msg to its node.
func (c *Cluster) step(to *member, msg election.Message) {
	c.stats.Delivered++
	to.node.Step(msg)
}
