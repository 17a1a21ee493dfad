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
	"github.com/raftick/raftick/memnet"
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
	// Wheel, if not nil, is the wheel the cluster runs on instead of a
	// virtual wheel of its own: a real-time wheel (NewRealtimeWheel) puts
	// the nodes on real time, as deployed. Its goroutine then drives the
	// cluster and Run refuses (ErrRealtime); the caller must serialize
	// every call into the cluster with the wheel's callbacks and the
	// Carrier's deliveries (a wheel.Config.Executor that runs each
	// callback under the caller's lock), as one goroutine does on a
	// virtual wheel.
	Wheel *Wheel
	// NodeWheel, if not nil, returns the wheel of server id's node (its
	// timers), as each server of a real deployment runs its own wheel;
	// nil means the cluster's wheel. The network model's timers stay on
	// the cluster's wheel. The same serialization rule applies.
	NodeWheel func(id election.ID) *wheel.Wheel
	// Carrier, if not nil, makes the carrier of the messages in flight
	// from the function it must call with each message once the message's
	// delay has passed; nil means a courier of timers on the cluster's
	// wheel. A real-time cluster takes one that delivers on time, so that
	// the network's delays are the latency model's and not the wheel's
	// tick.
	Carrier func(deliver func(election.Message)) Carrier
	// Context, if not nil, interrupts Run when it is cancelled: Run checks
	// it every CheckEvery instants it processes (cheaply, so a trial that
	// runs billions of events still stops promptly), and Err then reports
	// the context's error.
	Context context.Context
}

// A Carrier carries a cluster's messages in flight (Config.Carrier).
type Carrier interface {
	// Send delivers m after d (zero or negative: at once, but not from
	// within Send). It returns an error, and m is never delivered, if the
	// carrier is stopped.
	Send(m election.Message, d time.Duration) error
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
	servers []*server
	cut     [][]bool // cut[from][to]: link from->to is down
	stats   NetStats
	mail    Carrier
	voters  []election.ID
	check   *electiontest.Checker    // fed every event of every node
	leases  []electiontest.LeaseView // checkLeases' buffer
	err     error                    // why Run stopped early: the context's error
	rpcSeq  uint64                   // numbers every request (Network.CancelBackoff)
}

// NewCluster builds a cluster of cfg.Nodes servers, none started.
func NewCluster(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := cfg.Wheel
	if w == nil {
		var err error
		if w, err = NewWheel(); err != nil {
			return nil, err
		}
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
	if cfg.Carrier != nil {
		c.mail = cfg.Carrier(c.deliver)
	} else {
		c.mail = memnet.NewCourier(w.Wheel, c.deliver)
	}
	c.voters = make([]election.ID, cfg.Nodes)
	c.cut = make([][]bool, cfg.Nodes+1)
	for i := range c.cut {
		c.cut[i] = make([]bool, cfg.Nodes+1)
	}
	for i := range cfg.Nodes {
		c.voters[i] = election.ID(i + 1)
	}
	for _, id := range c.voters {
		sv := &server{id: id, log: &Log{}}
		sv.store = &diskStorage{c: c, sv: sv, inner: election.NewMemoryStorage()}
		c.servers = append(c.servers, sv)
		if err := c.newNode(sv); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) newNode(sv *server) error {
	ec := c.cfg.Election
	ec.ID = sv.id
	ec.Voters = c.voters
	ec.Rand = c.rng
	ec.Logger = c.cfg.Logger
	ec.Observer = c.cfg.Observer
	if ec.Metrics == nil {
		ec.Metrics = &metrics.BlackholeSink{}
	}
	if net := &c.cfg.Network; net.Disk != nil && (net.TimersWait || net.RearmAfterTermWrite) {
		ec.Emulate.ServerLock = blockingServer{c, sv}
	}
	if c.cfg.Network.LeaderWrite && c.cfg.Network.Disk != nil {
		obs := c.cfg.Observer
		writes := max(c.cfg.Network.LeaderWrites, 1)
		ec.Observer = func(e election.Event) {
			if e.Type == election.EventLeaderElected && sv.up {
				c.diskWrite(sv, writes)
			}
			if obs != nil {
				obs(e)
			}
		}
	}
	if c.cfg.Network.CancelBackoff > 0 {
		obs := ec.Observer
		ec.Observer = func(e election.Event) {
			if interruptOn(e) && sv.up {
				c.interrupt(sv)
			}
			if obs != nil {
				obs(e)
			}
		}
	}
	if c.cfg.PerNode != nil {
		c.cfg.PerNode(sv.id, &ec)
	}
	tr := election.TransportFunc(func(msg election.Message) { c.send(sv, msg) })
	w := c.w.Wheel
	if c.cfg.NodeWheel != nil {
		w = c.cfg.NodeWheel(sv.id)
	}
	n, err := election.NewNode(ec, w, tr, sv.store, sv.log)
	if err != nil {
		return fmt.Errorf("%w: Election (node %d): %w", ErrInvalidConfig, sv.id, err)
	}
	sv.node = n
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

func (c *Cluster) server(id election.ID) *server {
	if id < 1 || int(id) > len(c.servers) {
		return nil
	}
	return c.servers[id-1]
}

// Node returns server id's current node (a new one after each Restart),
// or nil for an unknown id.
func (c *Cluster) Node(id election.ID) *election.Node {
	if sv := c.server(id); sv != nil {
		return sv.node
	}
	return nil
}

// Log returns server id's log, or nil for an unknown id.
func (c *Cluster) Log(id election.ID) *Log {
	if sv := c.server(id); sv != nil {
		return sv.log
	}
	return nil
}

// Up reports whether server id is started and not crashed.
func (c *Cluster) Up(id election.ID) bool {
	sv := c.server(id)
	return sv != nil && sv.up
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
		sv := c.server(id)
		if sv == nil {
			return fmt.Errorf("Start: %w: %d", ErrNoServer, id)
		}
		if sv.up {
			return fmt.Errorf("Start: %w: %d", ErrServerRunning, id)
		}
		if err := sv.node.Start(); err != nil {
			return fmt.Errorf("sim: Start server %d: %w", id, err)
		}
		sv.up = true
	}
	return nil
}

// Run advances virtual time deadline by deadline until done returns true
// (checked before each instant is processed, and once more after the
// last) or the next deadline lies beyond limit. It returns done(). It
// also stops, returning false, when Config.Context is cancelled (Err
// then reports why), and at once on a real-time wheel (Err then reports
// ErrRealtime). Before each instant, as done, it gives the safety
// checker the lease view of every running server (electiontest's lease
// invariant: no lease in a term below another leader's).
func (c *Cluster) Run(limit time.Duration, done func() bool) bool {
	if !c.w.IsVirtual() {
		c.err = ErrRealtime
		return false
	}
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
	if ec := &c.cfg.Election; !ec.CheckQuorum && !ec.LeaderStickiness {
		// Without them no node holds a lease (election.Node.QuorumContact).
		return vnet.Run(c.w.Virtual, limit, done, stop, CheckEvery)
	}
	return vnet.Run(c.w.Virtual, limit, func() bool {
		c.checkLeases()
		return done()
	}, stop, CheckEvery)
}

// CheckLeases gives the safety checker every running server's lease
// view, as Run does between instants: the caller of a real-time cluster
// calls it where its nodes have handled what they were given.
func (c *Cluster) CheckLeases() {
	if ec := &c.cfg.Election; ec.CheckQuorum || ec.LeaderStickiness {
		c.checkLeases()
	}
}

// checkLeases gives the checker every running server's lease view: Run
// does it between instants, when every node has handled what the last
// instant brought.
func (c *Cluster) checkLeases() {
	views := c.leases[:0]
	for _, sv := range c.servers {
		if !sv.up {
			continue
		}
		st := sv.node.Status()
		views = append(views, electiontest.LeaseView{ID: sv.id, Term: st.Term, Leader: st.Role == election.Leader, Lease: sv.node.QuorumContact()})
	}
	c.leases = views
	c.check.Leases(views)
}

// RunFor is Run with the limit d after the current virtual time
// (saturating: a huge d never wraps into the past).
func (c *Cluster) RunFor(d time.Duration, done func() bool) bool {
	return c.Run(addSat(c.w.Now(), d), done)
}

// Close stops the wheel; the cluster must not be used afterwards.
func (c *Cluster) Close() { c.w.Stop() }
