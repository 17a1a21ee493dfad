package realtime

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/wheel"
)

// Engine is the experiment.Engine of raftick's election nodes in real
// time. The zero Engine runs on 1ms wheels and keeps no Stats.
type Engine struct {
	// Tick is the tick of each trial's real-time wheel; 0 means
	// wheel.DefaultConfig's (1ms), what a user runs.
	Tick time.Duration
	// Stats, if not nil, collects the engine's lateness (see Stats).
	Stats *Stats
	// WheelPerServer gives each server a real-time wheel of its own, as
	// deployed servers have; otherwise every server's timers share the
	// cluster's wheel, as in one process hosting the whole group. (On one
	// wheel, the timers of different servers that fall in one tick fire
	// together: see docs/simulator.md.) Each wheel's clock starts when it
	// is made, a few microseconds apart; the nodes compare only their own
	// times.
	WheelPerServer bool
}

// probeSeq numbers the clusters' probe timers' random streams.
var probeSeq atomic.Uint64

// NewCluster builds one trial's cluster of s: sim.Cluster's servers and
// network model on a real-time wheel of their own, with an on-time
// carrier. The cluster is returned locked (see the package doc): the
// trial owns it until it calls Run.
func (e Engine) NewCluster(ctx context.Context, s experiment.Setup, rng *rand.Rand, h experiment.Hooks) (experiment.Cluster, error) {
	c := &cluster{ctx: ctx, stats: e.Stats, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	wcfg := wheel.DefaultConfig()
	if e.Tick > 0 {
		wcfg.Tick = e.Tick
	}
	wcfg.Metrics = &metrics.BlackholeSink{}
	wcfg.Logger = hclog.NewNullLogger()
	wcfg.Executor = c.execute
	w, err := sim.NewRealtimeWheel(wcfg)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	c.w = w
	inner, err := experiment.Raftick{Adjust: func(cfg *sim.Config) {
		cfg.Wheel = w
		if e.WheelPerServer {
			cfg.NodeWheel = func(election.ID) *wheel.Wheel {
				ncfg := wcfg
				ncfg.Logger = w.Logger(nil) // its panics fail the trial too
				nw, err := wheel.New(ncfg)
				if err != nil {
					return w.Wheel // wcfg passed on w: cannot happen
				}
				c.nodeWheels = append(c.nodeWheels, nw)
				return nw
			}
		}
		cfg.Carrier = func(deliver func(election.Message)) sim.Carrier {
			c.car = newCarrier(w.Now, func(m election.Message, due time.Duration) {
				c.mu.Lock()
				defer c.mu.Unlock()
				if c.closed {
					return
				}
				c.stats.add(false, w.Now()-due)
				deliver(m)
				c.after()
			})
			return c.car
		}
	}}.NewCluster(ctx, s, rng, h)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Cluster = inner
	c.leases, _ = inner.(interface{ CheckLeases() })
	if e.Stats != nil {
		seq := probeSeq.Add(1)
		c.probeRng = rand.New(rand.NewPCG(seq, 0x5eed))
		if err := c.probe.Init(w.Wheel, c.probed); err != nil {
			c.Close()
			return nil, err
		}
		c.armProbe()
	}
	return c, nil
}

// cluster is a raftick cluster on real time (see the package doc).
type cluster struct {
	experiment.Cluster
	w          *sim.Wheel
	nodeWheels []*wheel.Wheel
	car        *carrier
	leases     interface{ CheckLeases() }
	ctx        context.Context
	stats      *Stats
	wake       chan struct{} // Run's signal that done may hold

	// mu serializes everything: the wheel's callbacks, the carrier's
	// deliveries, and the trial outside Run.
	mu       sync.Mutex
	done     func() bool // Run's condition, while waiting
	t0       time.Duration
	err      error
	closed   bool
	probe    wheel.Timer
	probeAt  time.Duration // the probe's deadline
	probeRng *rand.Rand
}

// execute runs one of the wheel's callbacks under the lock (the wheel's
// Executor). A callback of a closed cluster is skipped.
func (c *cluster) execute(t wheel.Task) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	t.Run()
	c.after()
}

// after runs after each callback and delivery: it wakes Run once its
// condition holds. mu held.
func (c *cluster) after() {
	if c.done == nil {
		return
	}
	if c.leases != nil {
		c.leases.CheckLeases()
	}
	if c.done() {
		c.done = nil
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// armProbe puts the probe timer 2–20ms ahead. mu held.
func (c *cluster) armProbe() {
	d := 2*time.Millisecond + time.Duration(c.probeRng.Int64N(int64(18*time.Millisecond)))
	c.probeAt = c.w.Now() + d
	c.probe.Reset(d)
}

// probed measures how late the probe ran. mu held (it runs through
// execute, so it waits for the lock as the nodes' timers do).
func (c *cluster) probed() {
	c.stats.add(true, c.w.Now()-c.probeAt)
	c.armProbe()
}

func (c *cluster) Wheel() *wheel.Wheel { return c.w.Wheel }

// Now is the time since Start (before it, since the wheel was made).
func (c *cluster) Now() time.Duration { return c.w.Now() - c.t0 }

// Start starts every server; the cluster's clock starts with them.
func (c *cluster) Start() error {
	c.t0 = c.w.Now()
	return c.Cluster.Start()
}

// StartTimersAt forwards to the simulated cluster (Setup.TimersAtCrash).
func (c *cluster) StartTimersAt(leader election.ID, term uint64, survivors []election.ID) {
	c.Cluster.(experiment.TimerStarter).StartTimersAt(leader, term, survivors)
}

// Run lets real time pass, with the lock released, until done holds
// after a callback or delivery, or the cluster's clock reaches limit, or
// the trial's context is cancelled (then it returns false and Err
// reports it). It returns done() with the lock held again.
func (c *cluster) Run(limit time.Duration, done func() bool) bool {
	if c.leases != nil {
		c.leases.CheckLeases()
	}
	if done() {
		return true
	}
	d := limit - c.Now()
	if d <= 0 {
		return false
	}
	select {
	case <-c.wake:
	default:
	}
	c.done = done
	t := time.NewTimer(d)
	c.mu.Unlock()
	var cancelled <-chan struct{}
	if c.ctx != nil {
		cancelled = c.ctx.Done()
	}
	select {
	case <-c.wake:
	case <-t.C:
	case <-cancelled:
	}
	t.Stop()
	c.mu.Lock()
	c.done = nil
	if c.ctx != nil && c.ctx.Err() != nil {
		c.err = c.ctx.Err()
		return false
	}
	return done()
}

// Err reports a panic, broken safety or an interruption.
func (c *cluster) Err() error {
	if c.Cluster != nil {
		if err := c.Cluster.Err(); err != nil {
			return err
		}
	}
	return c.err
}

// Close stops the wheel and the carrier and waits for their goroutines;
// callbacks and deliveries that come later are dropped.
func (c *cluster) Close() {
	c.closed = true
	c.mu.Unlock()
	for _, w := range append([]*wheel.Wheel{c.w.Wheel}, c.nodeWheels...) {
		w.Stop()
		<-w.Done()
	}
	if c.car != nil {
		c.car.stop()
	}
}
