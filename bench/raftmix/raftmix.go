// Package raftmix runs the timers of many Raft groups in one process, in
// real time, and measures what they cost: the workload of bench/scalemix.
//
// Per group: an election timer ([150ms, 300ms)) reset by a heartbeat every
// 50ms, a step-down timer every 75ms and a snapshot timer (1h, first
// schedule jittered to [30min, 1h)). One goroutine delivers the heartbeats
// in batches every 250µs (groups/200 groups a batch). The implementations:
//
//   - raftick: three repeated.Timers per group on one real-time wheel.
//   - raftick-keep: raftick with the election timer made
//     repeated.WithResetKeepsDelay: its timeout is drawn when it starts and
//     after each fire, and a heartbeat restarts the same countdown, as the
//     tick loops do (raftick draws a new timeout on every heartbeat).
//   - std: the same on StdTimer (time.AfterFunc, a fire on a new goroutine).
//   - tick10, tick100: one goroutine with a 10ms (100ms) ticker loops over
//     all groups and advances per-group counters, as etcd and dragonboat
//     do: election timeout randomized in [ET, 2ET) ticks, step-down every
//     ceil(75ms/tick) ticks.
//   - none: heartbeats only, no timers: the floor.
//
// And, not in Impls, four that run Raft's election itself (ProductImpls),
// the leaders sending the heartbeats:
//
//   - raftick-node (ImplNode): three election.Nodes per group on one
//     real-time wheel, messages stepped in process.
//   - etcd-tick (ImplEtcd): three etcd raft RawNodes per group, each
//     simulated node run as a CockroachDB server runs its ranges: a
//     tick every 10ms for each replica, a raft scheduler's worker pool
//     (GOMAXPROCS workers per node) processing them, messages coalesced
//     per pair of nodes on their way.
//   - etcd-loop (ImplEtcdLoop): the same RawNodes all driven by one
//     goroutine, every 10ms, messages coalesced per pair of nodes per
//     tick: the cheapest driver, one core at most.
//   - raftick-host (ImplHost): the groups as replicas on multiraft.Hosts,
//     a fraction of them active, the rest hibernating.
package raftmix

import (
	"github.com/hashicorp/go-hclog"

	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/wheel"
)

// The workload's timings.
const (
	ElectionTimeout = 150 * time.Millisecond // jittered to [150ms, 300ms)
	HeartbeatPeriod = 50 * time.Millisecond
	HeartbeatBatch  = 250 * time.Microsecond // the heartbeat goroutine's pace
	StepDown        = 75 * time.Millisecond
	Snapshot        = time.Hour
)

// Implementation names accepted in Config.Impl.
const (
	ImplRaftick     = "raftick"
	ImplRaftickKeep = "raftick-keep"
	ImplStd         = "std"
	ImplTick10      = "tick10"
	ImplTick100     = "tick100"
	ImplNone        = "none"
)

// Impls lists the implementations in the order scalemix runs them.
var Impls = []string{ImplRaftick, ImplRaftickKeep, ImplTick10, ImplTick100, ImplStd, ImplNone}

// ProductImpls lists the implementations that run Raft's election itself
// (not in Impls, so not run by default).
var ProductImpls = []string{ImplNode, ImplEtcd, ImplEtcdLoop, ImplHost}

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("raftmix: invalid config")

// fieldErr returns a *election.FieldError wrapping ErrInvalidConfig.
func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Config configures one run.
type Config struct {
	// Impl is one of Impls.
	Impl string
	// Groups is the number of Raft groups, at least 1.
	Groups int
	// Warmup runs the workload before measuring, so that every timer has
	// been scheduled and pushed at least once. At least 0.
	Warmup time.Duration
	// Duration is the measured window, at least 1ms.
	Duration time.Duration
	// SampleEvery samples the step-down lateness of every SampleEvery-th
	// group (a clock read per fire of those groups). At least 1.
	SampleEvery int
	// Seed seeds the per-group jitter sources.
	Seed uint64
	// Tick is the tick of the wheel of the raftick implementations
	// (ImplRaftick, ImplRaftickKeep, ImplHost); 0 means the wheel's
	// default (wheel.DefaultConfig). It trades wake-ups for lateness:
	// the driver takes a due slot whole, so a timer fires up to a tick
	// late.
	Tick time.Duration

	// Nodes, Active and Coalesce apply to ImplHost only: the number of
	// simulated nodes (one multiraft.Host each, at least 1), the fraction
	// of the groups kept active (in [0, 1]) and whether the hosts
	// coalesce heartbeats.
	Nodes    int
	Active   float64
	Coalesce bool
	// HostElectionTimeout and HostHeartbeat are ImplHost's election
	// timeout (randomized to [ET, 2ET)) and heartbeat interval, also the
	// period of the touches; 0 means the workload's (ElectionTimeout,
	// HeartbeatPeriod). The heartbeat must be below the timeout.
	HostElectionTimeout, HostHeartbeat time.Duration

	// BurnCores, if positive, burns that many cores from BurnAt after the
	// measured window's start for BurnFor, each with a process of its
	// own (see Burn), and the Result reports elections by phase (before,
	// during and after the burn; Result.Phases). ImplHost only; the burn
	// must end within the window. At most 64.
	BurnCores       int
	BurnAt, BurnFor time.Duration
	// CrashAt, if positive, crashes node 1 (its Host stops and batches to
	// it are lost) that long after the measured window's start, and the
	// Result reports the failover of the groups it led and the elections
	// in the others (Result.Crash). ImplHost only; within the window.
	CrashAt time.Duration

	// EtcdWorkers is the number of workers of each simulated node's raft
	// scheduler in ImplEtcd; 0 means GOMAXPROCS. At most maxEtcdWorkers.
	EtcdWorkers int
}

// maxEtcdWorkers bounds Config.EtcdWorkers.
const maxEtcdWorkers = 1024

// maxBurnCores bounds Config.BurnCores.
const maxBurnCores = 64

// DefaultConfig is 1000 groups of raftick for 10s after a 1s warm-up,
// lateness sampled on every 64th group; for ImplHost 3 nodes, all groups
// active, coalescing on.
func DefaultConfig() Config {
	return Config{Impl: ImplRaftick, Groups: 1000, Warmup: time.Second, Duration: 10 * time.Second, SampleEvery: 64, Seed: 1,
		Nodes: 3, Active: 1, Coalesce: true}
}

// Validate reports the first invalid field: a *election.FieldError
// wrapping ErrInvalidConfig, whose Field is the Go name of the field.
func (c Config) Validate() error {
	switch {
	case !slices.Contains(Impls, c.Impl) && !slices.Contains(ProductImpls, c.Impl):
		return fieldErr("Impl", c.Impl, "unknown implementation (want one of %v or %v)", Impls, ProductImpls)
	case c.Groups < 1:
		return fieldErr("Groups", c.Groups, "must be at least 1")
	case c.Warmup < 0:
		return fieldErr("Warmup", c.Warmup, "must be >= 0")
	case c.Duration < time.Millisecond:
		return fieldErr("Duration", c.Duration, "must be at least 1ms")
	case c.Tick < 0 || c.Tick > wheel.MaxTick:
		return fieldErr("Tick", c.Tick, "must be in [0, %v] (0: the wheel's default)", wheel.MaxTick)
	case c.SampleEvery < 1:
		return fieldErr("SampleEvery", c.SampleEvery, "must be at least 1")
	case c.Impl == ImplHost && c.Nodes < 1:
		return fieldErr("Nodes", c.Nodes, "must be at least 1")
	case c.Impl == ImplHost && !(c.Active >= 0 && c.Active <= 1):
		return fieldErr("Active", c.Active, "must be a fraction in [0, 1]")
	case c.HostElectionTimeout < 0:
		return fieldErr("HostElectionTimeout", c.HostElectionTimeout, "must be >= 0")
	case c.HostHeartbeat < 0:
		return fieldErr("HostHeartbeat", c.HostHeartbeat, "must be >= 0")
	case c.hostHeartbeat() >= c.hostElectionTimeout() || c.hostHeartbeat() < time.Millisecond:
		return fieldErr("HostHeartbeat", c.hostHeartbeat(), "must be at least 1ms and below the election timeout %v", c.hostElectionTimeout())
	case c.BurnCores < 0 || c.BurnCores > maxBurnCores:
		return fieldErr("BurnCores", c.BurnCores, "must be in [0, %d]", maxBurnCores)
	case c.BurnCores > 0 && c.Impl != ImplHost:
		return fieldErr("BurnCores", c.BurnCores, "a burn needs implementation %s, not %q", ImplHost, c.Impl)
	case c.BurnAt < 0:
		return fieldErr("BurnAt", c.BurnAt, "must be >= 0")
	case c.BurnFor < 0:
		return fieldErr("BurnFor", c.BurnFor, "must be >= 0")
	case c.BurnCores > 0 && (c.BurnFor == 0 || c.BurnAt+c.BurnFor > c.Duration):
		return fieldErr("BurnFor", c.BurnFor, "a burn from %v must last and end within the %v window", c.BurnAt, c.Duration)
	case c.CrashAt < 0 || c.CrashAt > 0 && c.CrashAt >= c.Duration:
		return fieldErr("CrashAt", c.CrashAt, "must be in [0, %v) (the window)", c.Duration)
	case c.CrashAt > 0 && c.Impl != ImplHost:
		return fieldErr("CrashAt", c.CrashAt, "a crash needs implementation %s, not %q", ImplHost, c.Impl)
	case c.EtcdWorkers < 0 || c.EtcdWorkers > maxEtcdWorkers:
		return fieldErr("EtcdWorkers", c.EtcdWorkers, "must be in [0, %d] (0: GOMAXPROCS)", maxEtcdWorkers)
	}
	return nil
}

// wheelConfig is the configuration of the raftick implementations' wheel.
func (c Config) wheelConfig() wheel.Config {
	wc := wheel.DefaultConfig()
	if c.Tick > 0 {
		wc.Tick = c.Tick
	}
	return wc
}

func (c Config) hostElectionTimeout() time.Duration {
	if c.HostElectionTimeout == 0 {
		return ElectionTimeout
	}
	return c.HostElectionTimeout
}

func (c Config) hostHeartbeat() time.Duration {
	if c.HostHeartbeat == 0 {
		return HeartbeatPeriod
	}
	return c.HostHeartbeat
}

// Result is what one run measured over its window.
type Result struct {
	Impl    string  `json:"impl"`
	Groups  int     `json:"groups"`
	Seconds float64 `json:"seconds"` // wall time of the window
	// Cores is process CPU time (user+system, getrusage) per wall second.
	Cores float64 `json:"cores"`
	// CPUNsPerEvent is process CPU per heartbeat delivered or timer fired.
	CPUNsPerEvent float64 `json:"cpu_ns_per_event"`
	// Heartbeats delivered, and HeartbeatPace: delivered / due (1 = kept up).
	Heartbeats    int64   `json:"heartbeats"`
	HeartbeatPace float64 `json:"heartbeat_pace"`
	// StepDownFires fired in the window; StepDownDue is those plus the
	// groups whose next step-down deadline had passed (by more than the
	// 250µs resolution of the record) at the end of the window without a
	// fire: StepDownDelivered = fires / due (1 = no backlog).
	StepDownFires     int64   `json:"stepdown_fires"`
	StepDownDue       int64   `json:"stepdown_due"`
	StepDownDelivered float64 `json:"stepdown_delivered"`
	// StepDownRate is fires per group-second against one per period
	// (75ms for timers, ceil(75ms/tick) ticks for tick loops): a
	// fixed-delay timer that fires L late reaches 75/(75+L).
	StepDownRate float64 `json:"stepdown_rate"`
	// SpuriousElections counts election timer fires: with a heartbeat every
	// 50ms and a timeout of at least 150ms, every one is spurious.
	SpuriousElections int64 `json:"spurious_elections"`
	// Step-down lateness on the sampled groups: fire time minus (previous
	// fire + 75ms), in ms; EarlyFires counts negative ones.
	LatenessSamples int     `json:"lateness_samples"`
	LatenessP50Ms   float64 `json:"lateness_p50_ms"`
	LatenessP99Ms   float64 `json:"lateness_p99_ms"`
	LatenessMaxMs   float64 `json:"lateness_max_ms"`
	EarlyFires      int64   `json:"early_fires"`
	// WakeupsPerSec is the wheel driver's wake-ups per second (raftick),
	// the ticker's rate (tick loops), or -1 (std, none).
	WakeupsPerSec float64 `json:"wakeups_per_sec"`
	// TickMs is the tick of the wheel the run's timers were on, in
	// milliseconds (the raftick implementations; 0 for the others).
	TickMs float64 `json:"tick_ms,omitempty"`
	// WheelPanics counts the callbacks that panicked on the run's wheel
	// since it was built (recovered and logged by the wheel; none is
	// right), for the implementations on a wheel.
	WheelPanics int64 `json:"wheel_panics,omitempty"`
	// Host holds what only ImplHost measures; nil for the others. ImplHost
	// fills the common fields as its documentation says (heartbeats and
	// step-down checks of the leaders, lateness of probe timers), and its
	// CPUNsPerEvent counts messages delivered, timers fired and touches as
	// events.
	Host *HostResult `json:"host,omitempty"`
	// Phases holds the elections by phase of a run with a burn
	// (Config.BurnCores); nil for the others.
	Phases *PhaseResult `json:"phases,omitempty"`
	// Crash holds the failover of a run with a crash (Config.CrashAt);
	// nil for the others.
	Crash *CrashResult `json:"crash,omitempty"`
	// Etcd holds what only ImplEtcd measures; nil for the others.
	Etcd *EtcdResult `json:"etcd,omitempty"`
}

// EtcdResult is what an ImplEtcd run measures beyond Result's fields.
type EtcdResult struct {
	// Workers is the number of workers of each node's raft scheduler.
	Workers int `json:"workers_per_node"`
	// TicksDropped counts the replicas' ticks the schedulers dropped in
	// the window because the replica owed maxEtcdTicks already: each
	// delays that replica's clock a tick.
	TicksDropped int64 `json:"ticks_dropped"`
}

// group is one Raft group's bookkeeping, shared by every implementation.
type group struct {
	elapsed   atomic.Int32 // tick loops: ticks since the last heartbeat; none: heartbeats
	fires     atomic.Int64 // step-down fires
	lastFire  atomic.Int64 // coarse time of the last step-down fire (or arm), ns since start
	elections atomic.Int64
	sample    *sampler // nil unless sampled
}

// sampler records the step-down lateness of one group.
type sampler struct {
	mu   sync.Mutex
	prev int64 // precise time of the previous fire (or arm), ns since start
	late []int64
}

// run is the state of one run shared by the implementation and the
// recording.
type run struct {
	cfg       Config
	base      time.Time
	coarse    atomic.Int64 // ns since base, published by the heartbeat goroutine
	measuring atomic.Bool
	period    time.Duration // the implementation's step-down period
	// latePeriod is the period a step-down's lateness is measured
	// against: StepDown, or the implementation's own check period
	// (ImplEtcd's CheckQuorum every election timeout).
	latePeriod time.Duration
	groups     []group
}

func (r *run) since() int64 { return int64(time.Since(r.base)) }

// stepDown is the step-down trigger of the timer and tick loop
// implementations.
func (r *run) stepDown(g *group) {
	g.fires.Add(1)
	g.lastFire.Store(r.coarse.Load())
	if s := g.sample; s != nil {
		r.sampleFire(s, r.since())
	}
}

// stepDownNow is stepDown for the implementations that observe a
// step-down check inside election code, where the coarse time may be
// older than the check's last arming: it reads the clock.
func (r *run) stepDownNow(g *group) {
	now := r.since()
	g.fires.Add(1)
	g.lastFire.Store(now)
	if s := g.sample; s != nil {
		r.sampleFire(s, now)
	}
}

// checkFrom records that g's step-down checks count from now (a new
// leader's), as if one had just fired, without counting a fire.
func (r *run) checkFrom(g *group) { r.checkedAt(g, r.since()) }

// checkedAt records that g's previous step-down check (or the arming of
// its timer) was at t, ns since the run's base, without counting a fire.
func (r *run) checkedAt(g *group, t int64) {
	g.lastFire.Store(t)
	if s := g.sample; s != nil {
		s.mu.Lock()
		s.prev = t
		s.mu.Unlock()
	}
}

// sampleFire records a step-down fire of a sampled group at now.
func (r *run) sampleFire(s *sampler, now int64) {
	s.mu.Lock()
	if r.measuring.Load() {
		s.late = append(s.late, now-s.prev-int64(r.latePeriod))
	}
	s.prev = now
	s.mu.Unlock()
}

// startAll starts the groups' timers spread evenly over one step-down
// period, as the groups of a long-running process are out of phase, and
// records when each step-down timer was armed.
func (r *run) startAll(im impl) {
	n := len(r.groups)
	chunk := max(1, n/75)
	t0 := time.Now()
	for i := 0; i < n; i += chunk {
		if ahead := time.Until(t0.Add(time.Duration(int64(StepDown) * int64(i) / int64(n)))); ahead > 0 {
			time.Sleep(ahead)
		}
		for j := i; j < min(n, i+chunk); j++ {
			r.checkFrom(&r.groups[j])
			im.start(j)
		}
	}
}

// product is an implementation whose groups run Raft's election
// (ImplNode, ImplEtcd, ImplEtcdLoop): its leaders send the heartbeats, so no heartbeat
// goroutine runs, and it records step-downs with stepDownNow.
type product interface {
	impl
	followerHeartbeats() int64 // heartbeats stepped into followers so far
}

// impl is one implementation of the workload.
type impl interface {
	start(i int)     // arm group i's timers
	heartbeat(i int) // group i heard from its leader
	stop()           // stop every timer; no trigger starts afterwards
	wakeups() int64  // driver wake-ups so far, or -1
}

func (r *run) rng(i, k int) *rand.Rand {
	s := r.seed(i, k)
	return rand.New(rand.NewPCG(s[0], s[1]))
}

// seed returns the PCG seed of the jitter source of group i's k-th timer
// (group -1: the tick loop's).
func (r *run) seed(i, k int) [2]uint64 {
	return [2]uint64{r.cfg.Seed ^ uint64(i)<<2 ^ uint64(k), uint64(i)}
}

// paced calls visit(first, batch) until stop is closed, about every
// HeartbeatBatch, with batches of consecutive indices (first, first+1, ...
// mod n) so that every index in [0, n) comes round once per period.
func paced(n int, period time.Duration, stop <-chan struct{}, visit func(first, batch int)) {
	batch := max(1, n/int(period/HeartbeatBatch))
	pace := time.Duration(int64(period) * int64(batch) / int64(n)) // per batch
	next, k := 0, 0
	t0 := time.Now()
	for {
		select {
		case <-stop:
			return
		default:
		}
		visit(next, batch)
		next = (next + batch) % n
		k++
		if ahead := time.Until(t0.Add(time.Duration(k) * pace)); ahead > 0 {
			time.Sleep(ahead)
		}
	}
}

// Run runs the workload described by cfg and returns its measurements.
func Run(cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Impl == ImplHost {
		return runHost(cfg)
	}
	r := &run{cfg: cfg, period: StepDown, latePeriod: StepDown, groups: make([]group, cfg.Groups)}
	for i := 0; i < cfg.Groups; i += cfg.SampleEvery {
		r.groups[i].sample = &sampler{late: make([]int64, 0, int(cfg.Duration/StepDown)+16)}
	}
	var im impl
	var err error
	switch cfg.Impl {
	case ImplRaftick, ImplRaftickKeep:
		im, err = newRaftick(r, cfg.Impl == ImplRaftickKeep)
	case ImplStd:
		im = newStd(r)
	case ImplTick10:
		im = newTicker(r, 10*time.Millisecond)
	case ImplTick100:
		im = newTicker(r, 100*time.Millisecond)
	case ImplNone:
		im = none{r}
	case ImplNode:
		im, err = newNodes(r)
	case ImplEtcd:
		im, err = newEtcdPool(r)
	case ImplEtcdLoop:
		im, err = newEtcdLoop(r)
	}
	if err != nil {
		return Result{}, err
	}
	runtime.GC()
	r.base = time.Now()
	r.startAll(im)

	// The heartbeat goroutine; a product's leaders heartbeat themselves,
	// and it reads the clock at every step-down, so it has none.
	n := cfg.Groups
	_, isProduct := im.(product)
	var delivered atomic.Int64
	stopHB := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		if isProduct {
			<-stopHB
			return
		}
		paced(n, HeartbeatPeriod, stopHB, func(first, batch int) {
			r.coarse.Store(r.since())
			for i := range batch {
				im.heartbeat((first + i) % n)
			}
			delivered.Add(int64(batch))
		})
	}()

	time.Sleep(cfg.Warmup)
	sum := func() (fires, elections int64) {
		for i := range r.groups {
			fires += r.groups[i].fires.Load()
			elections += r.groups[i].elections.Load()
		}
		return fires, elections
	}
	// Heartbeats are the goroutine's, due once per group and period, or
	// a product's leaders' to each follower.
	heartbeats, hbDue := delivered.Load, n
	if p, ok := im.(product); ok {
		heartbeats, hbDue = p.followerHeartbeats, n*(nodeReplicas-1)
	}
	r.measuring.Store(true)
	fires0, elections0 := sum()
	hb0, wake0 := heartbeats(), im.wakeups()
	var dropped0 int64
	if p, ok := im.(*etcdPool); ok {
		dropped0 = p.droppedTicks()
	}
	cpu0, wall0 := processCPU(), time.Now()
	time.Sleep(cfg.Duration)
	cpu1, wall1 := processCPU(), time.Now()
	hb1, wake1 := heartbeats(), im.wakeups()
	var dropped1 int64
	if p, ok := im.(*etcdPool); ok {
		dropped1 = p.droppedTicks()
	}
	fires1, elections1 := sum()
	end := r.coarse.Load()
	if isProduct {
		end = r.since()
	}
	r.measuring.Store(false)
	close(stopHB)
	<-hbDone
	im.stop()

	wall := wall1.Sub(wall0)
	secs := wall.Seconds()
	res := Result{
		Impl:              cfg.Impl,
		Groups:            n,
		Seconds:           secs,
		Heartbeats:        hb1 - hb0,
		StepDownFires:     fires1 - fires0,
		SpuriousElections: elections1 - elections0,
		WakeupsPerSec:     -1,
	}
	switch im := im.(type) {
	case *raftick:
		res.TickMs, res.WheelPanics = float64(im.w.Tick())/1e6, im.w.Stats().Panics
	case *nodes:
		res.TickMs, res.WheelPanics = float64(im.w.Tick())/1e6, im.w.Stats().Panics
	case *etcdPool:
		res.Etcd = &EtcdResult{Workers: cfg.etcdWorkers(), TicksDropped: dropped1 - dropped0}
	}
	if cpu0 >= 0 && cpu1 >= 0 {
		res.Cores = (cpu1 - cpu0).Seconds() / secs
	} else {
		res.Cores = math.NaN()
	}
	events := res.Heartbeats + res.StepDownFires + res.SpuriousElections
	res.CPUNsPerEvent = float64(cpu1-cpu0) / float64(max(events, 1))
	res.HeartbeatPace = float64(res.Heartbeats) / (secs * float64(hbDue) / HeartbeatPeriod.Seconds())
	if cfg.Impl != ImplNone {
		owed := int64(0)
		for i := range r.groups {
			if r.groups[i].lastFire.Load()+int64(r.period)+int64(HeartbeatBatch) < end {
				owed++
			}
		}
		res.StepDownDue = res.StepDownFires + owed
		res.StepDownDelivered = float64(res.StepDownFires) / float64(max(res.StepDownDue, 1))
		res.StepDownRate = float64(res.StepDownFires) / (secs * float64(n) / r.period.Seconds())
	}
	if wake0 >= 0 {
		res.WakeupsPerSec = float64(wake1-wake0) / secs
	}
	r.lateness(&res)
	return res, nil
}

// lateness sets res's lateness fields from r's sampled groups.
func (r *run) lateness(res *Result) {
	var late []int64
	for i := range r.groups {
		if s := r.groups[i].sample; s != nil {
			s.mu.Lock()
			late = append(late, s.late...)
			s.mu.Unlock()
		}
	}
	slices.Sort(late)
	res.LatenessSamples = len(late)
	if len(late) > 0 {
		q := func(p float64) float64 {
			return float64(late[min(len(late)-1, int(p*float64(len(late))))]) / 1e6
		}
		res.LatenessP50Ms, res.LatenessP99Ms = q(0.50), q(0.99)
		res.LatenessMaxMs = float64(late[len(late)-1]) / 1e6
		for _, l := range late {
			if l < 0 {
				res.EarlyFires++
			}
		}
	}
}

// quietLogger is the election nodes' logger in the workloads: the runs
// count elections and step-downs themselves, and an overloaded run would
// otherwise spend its cores writing a warning per step-down to stderr. The
// wheels keep their default logger, so a panicking callback still shows.
var quietLogger = hclog.NewNullLogger()
