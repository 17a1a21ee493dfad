package multiraftsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/wheel"
)

// ErrInvalidConfig is wrapped by every error of Config.Validate, a
// *sim.FieldError naming the field.
var ErrInvalidConfig = errors.New("multiraftsim: invalid config")

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Config describes one run.
type Config struct {
	Groups, Nodes, Replicas int
	// Active is the fraction of groups with activity (a Touch on every
	// replica every heartbeat interval); in [0, 1].
	Active float64
	// HibernateAfter is multiraft.Config.HibernateAfter; 0 never.
	HibernateAfter time.Duration
	Coalesce       bool
	// TimeoutMin and TimeoutMax bound the election timeout, drawn
	// uniformly in [min, max); Heartbeat is the heartbeat interval (0:
	// TimeoutMin/10).
	TimeoutMin, TimeoutMax, Heartbeat time.Duration
	// Latency is the one-way delay of every batch; nil means none.
	Latency sim.Latency
	// Warmup runs before the first measurement window; Window is the
	// length of each measurement window; Settle is how long the run goes
	// on after the crash before the second window.
	Warmup, Window, Settle time.Duration
	Seed                   uint64
	// Realtime runs the hosts on a real-time wheel (wheel.New, 1ms tick)
	// and lets real time pass, instead of advancing a virtual wheel: the
	// same experiment on the hosts as deployed, in Warmup+2*Window+Settle
	// of real time. Its draws are seeded, their interleaving is not.
	Realtime bool
}

// DefaultConfig returns the experiment: 100,000 groups of three
// replicas over five nodes, 1% active, hibernation after 1s, coalescing
// on, election timeouts in [1s, 2s), heartbeats every 100ms, 1ms latency.
func DefaultConfig() Config {
	return Config{
		Groups: 100_000, Nodes: 5, Replicas: 3, Active: 0.01,
		HibernateAfter: time.Second, Coalesce: true,
		TimeoutMin: time.Second, TimeoutMax: 2 * time.Second,
		Latency: sim.Fixed(time.Millisecond),
		Warmup:  3 * time.Second, Window: 2 * time.Second, Settle: 10 * time.Second,
		Seed: 1,
	}
}

// Validate reports the first invalid field, or nil.
func (c Config) Validate() error {
	switch {
	case c.Groups < 1 || c.Groups > 10_000_000:
		return fieldErr("Groups", c.Groups, "must be in [1, 10000000]")
	case c.Nodes < 2 || c.Nodes > 1000:
		return fieldErr("Nodes", c.Nodes, "must be in [2, 1000]")
	case c.Replicas < 2 || c.Replicas > c.Nodes:
		return fieldErr("Replicas", c.Replicas, "must be in [2, nodes (%d)]", c.Nodes)
	case math.IsNaN(c.Active) || c.Active < 0 || c.Active > 1:
		return fieldErr("Active", c.Active, "must be in [0, 1]")
	case c.HibernateAfter < 0:
		return fieldErr("HibernateAfter", c.HibernateAfter, "must not be negative")
	case c.TimeoutMin <= 0 || c.TimeoutMax < c.TimeoutMin:
		return fieldErr("TimeoutMin", fmt.Sprintf("%v-%v", c.TimeoutMin, c.TimeoutMax), "must be positive with min <= max")
	case c.Heartbeat < 0 || c.Heartbeat >= c.TimeoutMin:
		return fieldErr("Heartbeat", c.Heartbeat, "must be in [0, the minimum election timeout)")
	case c.Warmup < 0 || c.Window <= 0 || c.Settle <= 0:
		return fieldErr("Window", c.Window, "warm-up must not be negative, window and settle must be positive")
	}
	return nil
}

// Rates are per second of virtual time over a measurement window.
type Rates struct {
	// Messages counts election and control messages as the groups sent
	// them (before coalescing); Batches the transport messages that
	// carried them (after coalescing, liveness messages included).
	Messages, Batches float64
	// TimerEvents counts wheel timers fired for the hosts and their
	// groups; the virtual network's delivery timers (one per batch that
	// arrives, at a live host or not) are counted apart in Deliveries.
	TimerEvents, Deliveries float64
}

// Result is the outcome of a run.
type Result struct {
	Config Config
	// Crashed is the crashed host; Affected the groups it led.
	Crashed  election.ID
	Affected int
	// Recovered counts the affected groups that elected a leader before
	// the run ended; Recovery holds their times from the crash to their
	// first new leader (p50, p99, max).
	Recovered            int
	P50, P99, Max        time.Duration
	UnaffectedNewLeaders int // elections in groups the crashed host did not lead
	// Safety is nil, or the election safety violations that
	// electiontest's checker found in the groups' events.
	Safety                error
	Before, After         Rates
	AwakeBefore           int64 // awake replicas on the surviving hosts before the crash
	LivenessWakes         int64
	Elapsed, VirtualTotal time.Duration
	// Wheel is the wheel's counters at the end (on real time, its late
	// fires and largest lateness); Lateness, on real time, is how late a
	// probe timer re-armed every 5-15ms ran past its deadline from the
	// crash to the end: p50, p99, max.
	Wheel    wheel.Stats
	Lateness [3]time.Duration
	// BehindSpells and LaggingSkips sum the surviving hosts' counters
	// (multiraft.Stats): spells in which a host found itself behind, and
	// the election and vote timers it let run on meanwhile (overload
	// handling: a late host's silence counts against no leader).
	BehindSpells, LaggingSkips int64
}

// Run runs the experiment; ctx cancels it between steps.
func Run(ctx context.Context, c Config) (Result, error) { return RunProgress(ctx, c, nil) }

// RunProgress is Run that reports its progress to progress (if not nil)
// as it goes, from the calling goroutine: done of total units of work,
// one per group added, then ten per millisecond of virtual time (about
// the wall time each takes at the default activity).
func RunProgress(ctx context.Context, c Config, progress func(done, total int)) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	work := c.Groups + 10*int((c.Warmup+2*c.Window+c.Settle)/time.Millisecond)
	progress(0, work)
	start := time.Now()
	r := Result{Config: c}
	clk, err := newClock(c.Realtime)
	if err != nil {
		return r, err
	}
	defer clk.w.Stop()
	rng := rand.New(rand.NewPCG(c.Seed, 0x6d72))
	net := multiraft.NewMemNetwork(clk.w, 0)
	if c.Latency != nil {
		lat := c.Latency
		net.SetDelay(func(multiraft.Batch) time.Duration { return lat.Sample(rng) })
	}

	crashed := election.ID(1)
	r.Crashed = crashed
	var crashAt time.Duration
	crashedYet := false
	// Per group: the leader before the crash and the first election after.
	firstNew := make([]time.Duration, c.Groups)
	newLeaders := make([]int32, c.Groups)
	// Every group's events are checked for election safety; a group's
	// checker starts on its first event, with the leader it was
	// bootstrapped with in term 1.
	check := electiontest.NewGroups(func(multiraft.GroupID) int { return c.Replicas })
	leader := make([]election.ID, c.Groups)
	checked := make([]bool, c.Groups)
	// mu guards what the observer writes: on real time it runs on the
	// wheel's goroutine and on the callers of Host methods.
	var mu sync.Mutex
	observer := func(g multiraft.GroupID, e election.Event) {
		mu.Lock()
		defer mu.Unlock()
		if !checked[g] {
			checked[g] = true
			check.Group(g).SetLeader(1, leader[g])
		}
		check.Observe(g, e)
		if e.Type != election.EventLeaderElected || !crashedYet {
			return
		}
		if firstNew[g] == 0 {
			firstNew[g] = e.At - crashAt
		}
		newLeaders[g]++
	}

	cfg := multiraft.DefaultConfig()
	cfg.Election.ElectionTimeout = c.TimeoutMin
	cfg.Election.ElectionJitter = repeated.UniformExtra(c.TimeoutMax - c.TimeoutMin)
	cfg.Election.HeartbeatInterval = c.Heartbeat
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	// The experiment crashes a host on purpose and its groups warn about
	// it (CheckQuorum step-downs, lost leaders): it reports outcomes, not
	// logs, as the other engines do.
	cfg.Election.Logger = hclog.NewNullLogger()
	cfg.HibernateAfter, cfg.Coalesce = c.HibernateAfter, c.Coalesce
	cfg.Observer = observer
	hosts := make([]*multiraft.Host, c.Nodes+1)
	for id := 1; id <= c.Nodes; id++ {
		hc := cfg
		hc.ID = election.ID(id)
		hc.Rand = rand.New(rand.NewPCG(rng.Uint64(), uint64(id)))
		h, err := multiraft.NewHost(hc, clk.w, net.Transport())
		if err != nil {
			return r, err
		}
		defer h.Stop()
		hosts[id] = h
		net.Attach(h)
	}
	hb := c.Heartbeat
	if hb == 0 {
		hb = c.TimeoutMin / 10
	}
	// Group g lives on nodes g, g+1, ... (mod N) and is led by the first:
	// every node leads Groups/N groups.
	voters := make([][]election.ID, c.Groups)
	for g := range c.Groups {
		for i := range c.Replicas {
			voters[g] = append(voters[g], election.ID((g+i)%c.Nodes+1))
		}
		leader[g] = voters[g][0]
		slices.Sort(voters[g])
	}
	for g := range c.Groups {
		for _, id := range voters[g] {
			if err := hosts[id].AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: voters[g],
				Storage: election.NewMemoryStorage(), Leader: leader[g]}); err != nil {
				return r, err
			}
		}
		if g%10000 == 0 {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			progress(g, work)
		}
	}
	var active []int
	if n := int(math.Round(c.Active * float64(c.Groups))); n > 0 {
		active = rng.Perm(c.Groups)[:n]
		slices.Sort(active)
	}
	touch := func() {
		for _, g := range active {
			for _, id := range voters[g] {
				if h := hosts[id]; h != nil && !(crashedYet && id == crashed) {
					_ = h.Touch(multiraft.GroupID(g))
				}
			}
		}
	}
	// run advances virtual time by d, touching the active groups every
	// heartbeat interval.
	run := func(d time.Duration) error {
		end := clk.w.Now() + d
		for clk.w.Now() < end {
			touch()
			clk.advanceTo(min(clk.w.Now()+hb, end))
			if ctx.Err() != nil {
				return ctx.Err()
			}
			progress(c.Groups+10*int(clk.w.Now()/time.Millisecond), work)
		}
		return nil
	}
	measure := func() (Rates, error) {
		m0, b0 := counters(hosts, crashed, crashedYet)
		ws0, ns0 := clk.w.Stats().Fired, arrivals(net)
		if err := run(c.Window); err != nil {
			return Rates{}, err
		}
		m1, b1 := counters(hosts, crashed, crashedYet)
		secs := c.Window.Seconds()
		deliveries := float64(arrivals(net) - ns0)
		return Rates{Messages: float64(m1-m0) / secs, Batches: float64(b1-b0) / secs,
			Deliveries: deliveries / secs, TimerEvents: (float64(clk.w.Stats().Fired-ws0) - deliveries) / secs}, nil
	}

	if err := run(c.Warmup); err != nil {
		return r, err
	}
	if r.Before, err = measure(); err != nil {
		return r, err
	}
	for id := 1; id <= c.Nodes; id++ {
		if election.ID(id) != crashed {
			s := hosts[id].Stats()
			r.AwakeBefore += s.Groups - s.Hibernating
		}
	}
	// The groups the crashed host leads, awake or asleep.
	affected := make([]bool, c.Groups)
	for g := range c.Groups {
		st, err := hosts[crashed].Status(multiraft.GroupID(g))
		if err == nil && st.Status.Role == election.Leader {
			affected[g] = true
			r.Affected++
		}
	}
	mu.Lock()
	crashAt, crashedYet = clk.w.Now(), true
	mu.Unlock()
	var probe *latenessProbe
	if c.Realtime {
		probe = startProbe(clk.w)
	}
	hosts[crashed].Stop()
	net.Detach(crashed)
	if err := run(c.Settle); err != nil {
		return r, err
	}
	if r.After, err = measure(); err != nil {
		return r, err
	}
	for id := 1; id <= c.Nodes; id++ {
		hosts[id].Stop() // nothing moves while the run is read
	}
	mu.Lock()
	defer mu.Unlock()
	var times []time.Duration
	for g := range c.Groups {
		switch {
		case affected[g] && firstNew[g] > 0:
			times = append(times, firstNew[g])
		case !affected[g] && newLeaders[g] > 0:
			r.UnaffectedNewLeaders++
		}
	}
	r.Recovered = len(times)
	slices.Sort(times)
	if len(times) > 0 {
		r.P50, r.P99, r.Max = quantile(times, 0.5), quantile(times, 0.99), times[len(times)-1]
	}
	for id := 1; id <= c.Nodes; id++ {
		st := hosts[id].Stats()
		r.LivenessWakes += st.LivenessWakes
		if election.ID(id) != crashed {
			r.BehindSpells += st.BehindSpells
			r.LaggingSkips += st.LaggingSkips
		}
	}
	r.Safety = check.Err()
	r.VirtualTotal = clk.w.Now()
	r.Wheel = clk.w.Stats()
	if probe != nil {
		r.Lateness = probe.stop()
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

// A clock is the run's wheel and how time passes on it.
type clock struct {
	w         *wheel.Wheel
	advanceTo func(t time.Duration)
}

// newClock returns a virtual wheel advanced by the run, or a real-time
// wheel that the run waits for.
func newClock(realtime bool) (clock, error) {
	cfg := wheel.DefaultConfig()
	if !realtime {
		v, err := wheel.NewVirtual(cfg)
		if err != nil {
			return clock{}, err
		}
		return clock{w: v.Wheel, advanceTo: func(t time.Duration) { v.AdvanceTo(t) }}, nil
	}
	cfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(cfg)
	if err != nil {
		return clock{}, err
	}
	return clock{w: w, advanceTo: func(t time.Duration) {
		if d := t - w.Now(); d > 0 {
			time.Sleep(d)
		}
	}}, nil
}

// A latenessProbe measures how late a real-time wheel runs a timer that
// re-arms itself every 5-15ms.
type latenessProbe struct {
	mu   sync.Mutex
	t    *wheel.Timer
	due  time.Duration
	late []time.Duration
	rng  *rand.Rand
	done bool
}

func startProbe(w *wheel.Wheel) *latenessProbe {
	p := &latenessProbe{rng: rand.New(rand.NewPCG(7, 7))}
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.t, err = w.AfterFunc(time.Hour, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.done {
			return
		}
		p.late = append(p.late, w.Now()-p.due)
		p.arm(w)
	}); err == nil {
		p.arm(w)
	}
	return p
}

// arm re-arms the probe; mu held.
func (p *latenessProbe) arm(w *wheel.Wheel) {
	d := 5*time.Millisecond + time.Duration(p.rng.Int64N(int64(10*time.Millisecond)))
	p.due = w.Now() + d
	p.t.Reset(d)
}

// stop ends the probe and returns the p50, p99 and max of its lateness.
func (p *latenessProbe) stop() [3]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.t != nil {
		p.t.Stop()
	}
	if len(p.late) == 0 {
		return [3]time.Duration{}
	}
	slices.Sort(p.late)
	return [3]time.Duration{quantile(p.late, 0.5), quantile(p.late, 0.99), p.late[len(p.late)-1]}
}

// arrivals counts the network's delivery timers that fired.
func arrivals(net *multiraft.MemNetwork) int64 {
	s := net.Stats()
	return s.Delivered + s.Undelivered
}

// counters sums the hosts' messages and batches, skipping the crashed
// host once it is down.
func counters(hosts []*multiraft.Host, crashed election.ID, down bool) (msgs, batches int64) {
	for id, h := range hosts {
		if h == nil || (down && election.ID(id) == crashed) {
			continue
		}
		s := h.Stats()
		msgs += s.Messages
		batches += s.Batches
	}
	return msgs, batches
}

// quantile returns the q-quantile of sorted ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(i, 0)]
}
