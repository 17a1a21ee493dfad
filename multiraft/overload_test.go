package multiraft_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// cpuHost is a Host whose processor is modelled: its timers' callbacks
// (handed over by its wheel's Executor) and its inbound batches wait in
// one queue and run one at a time, each keeping the processor busy for a
// cost that grows with the work it did. A host that cannot keep up runs
// its timers late and steps its batches late, as a real host does when
// its cores are taken.
type cpuHost struct {
	id    election.ID
	v     *wheel.Virtual
	h     *multiraft.Host
	queue []cpuWork
	busy  time.Duration // the processor is busy until then
}

// cpuWork is a timer callback or an inbound batch.
type cpuWork struct {
	task  wheel.Task
	batch *multiraft.Batch
}

// cpuCost is the processor time a piece of work takes: per batch, per
// timer callback, per entry stepped and per message sent.
type cpuCost struct{ batch, timer, entry, message time.Duration }

// cpuCluster is hosts on wheels of their own, advanced together in steps
// of dt, with a network of a fixed delay.
type cpuCluster struct {
	t       testing.TB
	hosts   []*cpuHost
	now     time.Duration
	dt      time.Duration
	delay   time.Duration
	cost    cpuCost
	slow    float64 // processor time multiplier (1: none; 3: a burn takes two thirds)
	flights []flight
	starts  []time.Duration // when each election (EventElectionStart) began
	reasons map[string]int  // elections and step-downs by reason
}

type flight struct {
	at time.Duration
	b  multiraft.Batch
}

func newCPUCluster(t testing.TB, nhosts, groups int, seed uint64, cost cpuCost, config func(*multiraft.Config)) *cpuCluster {
	c := &cpuCluster{t: t, dt: 250 * time.Microsecond, delay: time.Millisecond, cost: cost, slow: 1, reasons: map[string]int{}}
	var voters []election.ID
	for i := range nhosts {
		voters = append(voters, election.ID(i+1))
	}
	for i := range nhosts {
		ch := &cpuHost{id: election.ID(i + 1)}
		wc := wheel.DefaultConfig()
		wc.Executor = func(task wheel.Task) { ch.queue = append(ch.queue, cpuWork{task: task}) }
		v, err := wheel.NewVirtual(wc)
		require.NoError(t, err)
		t.Cleanup(func() { v.Stop() })
		ch.v = v
		cfg := multiraft.DefaultConfig()
		cfg.ID = ch.id
		cfg.Election.ElectionTimeout = 150 * time.Millisecond
		cfg.Election.HeartbeatInterval = 50 * time.Millisecond
		cfg.Election.ElectionJitter = repeated.Proportional(1)
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		cfg.HibernateAfter = 0 // every group active
		cfg.LivenessTimeout = 200 * time.Millisecond
		cfg.Rand = rand.New(rand.NewPCG(seed, uint64(i)))
		cfg.Observer = func(_ multiraft.GroupID, e election.Event) {
			switch e.Type {
			case election.EventElectionStart:
				c.starts = append(c.starts, c.now)
				c.reasons["election: "+e.Reason]++
			case election.EventStepDown:
				c.reasons["step-down: "+e.Reason]++
			}
		}
		if config != nil {
			config(&cfg)
		}
		h, err := multiraft.NewHost(cfg, v.Wheel, multiraft.TransportFunc(func(b multiraft.Batch) {
			c.flights = append(c.flights, flight{c.now + c.delay, b})
		}))
		require.NoError(t, err)
		t.Cleanup(h.Stop)
		ch.h = h
		c.hosts = append(c.hosts, ch)
	}
	for g := range groups {
		for _, ch := range c.hosts {
			require.NoError(t, ch.h.AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g + 1), Voters: voters,
				Storage: election.NewMemoryStorage(), Leader: voters[g%nhosts]}))
		}
	}
	return c
}

// run advances the cluster by d.
func (c *cpuCluster) run(d time.Duration) {
	for end := c.now + d; c.now < end; {
		c.now += c.dt
		n := 0
		for _, f := range c.flights {
			if f.at > c.now {
				c.flights[n] = f
				n++
				continue
			}
			b := f.b
			c.hosts[b.To-1].queue = append(c.hosts[b.To-1].queue, cpuWork{batch: &b})
		}
		clear(c.flights[n:])
		c.flights = c.flights[:n]
		for _, ch := range c.hosts {
			c.serve(ch)
		}
	}
}

// serve runs ch's queued work while its processor is free.
func (c *cpuCluster) serve(ch *cpuHost) {
	ch.v.AdvanceTo(c.now) // due timers join the queue
	// The processor works through the step just ended (idle time is not
	// saved up); work runs at the step's end, to within dt.
	ch.busy = max(ch.busy, c.now-c.dt)
	for len(ch.queue) > 0 && ch.busy < c.now {
		w := ch.queue[0]
		ch.queue[0] = cpuWork{}
		ch.queue = ch.queue[1:]
		before := ch.h.Stats()
		if w.batch != nil {
			ch.h.Step(*w.batch)
		} else {
			w.task.Run()
		}
		after := ch.h.Stats()
		cost := c.cost.timer
		if w.batch != nil {
			cost = c.cost.batch
		}
		cost += time.Duration(after.Delivered-before.Delivered)*c.cost.entry +
			time.Duration(after.Messages-before.Messages)*c.cost.message
		ch.busy += time.Duration(float64(cost) * c.slow)
	}
}

// elections returns how many elections began in [from, to).
func (c *cpuCluster) elections(from, to time.Duration) int {
	n := 0
	for _, s := range c.starts {
		if s >= from && s < to {
			n++
		}
	}
	return n
}

// lag returns how far behind the busiest host's processor is.
func (c *cpuCluster) lag() time.Duration {
	var m time.Duration
	for _, ch := range c.hosts {
		m = max(m, ch.busy-c.now)
	}
	return m
}

// TestOverloadRecovers: three hosts of 1,200 groups, all active (ET
// 150ms, HB 50ms), loaded to about half of their processors, run a burn
// that takes two thirds of the processors for two seconds, then calm, in
// five seeded runs. Elections may start during the burn and just after
// it, but must stop within three election timeouts after it: the
// elections a host's own lateness causes must not feed the overload.
// Without the host's lagging (overload.go: no election or CheckQuorum
// step-down while it runs late), every run goes on electing: 17,187 to
// 18,651 elections in the 2.55 s after those three timeouts (with it,
// none at all in these runs). -overload-groups N changes the load,
// -overload-slow F the burn's processor multiplier; -short runs one seed.
func TestOverloadRecovers(t *testing.T) {
	const et = 150 * time.Millisecond
	groups := *overloadGroups
	seeds := uint64(5)
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := newCPUCluster(t, 3, groups, seed, overloadCost, nil)
			c.run(time.Second)
			warm := c.elections(0, c.now)
			burnAt := c.now
			c.slow = *overloadSlow
			c.run(2 * time.Second)
			calmAt := c.now
			c.slow = 1
			c.run(3 * time.Second)
			t.Logf("elections: %d warming up, %d in the burn, %d in the first 3 ETs of calm, %d after; processor lag at the end %v",
				warm, c.elections(burnAt, calmAt), c.elections(calmAt, calmAt+3*et), c.elections(calmAt+3*et, c.now), c.lag())
			t.Logf("by reason: %v", c.reasons)
			var s multiraft.Stats
			for _, ch := range c.hosts {
				hs := ch.h.Stats()
				s.BehindSpells += hs.BehindSpells
				s.LaggingSkips += hs.LaggingSkips
				s.MaxLateness = max(s.MaxLateness, hs.MaxLateness)
			}
			t.Logf("hosts fell behind %d times, %d timers held back, worst lateness %v", s.BehindSpells, s.LaggingSkips, s.MaxLateness)
			require.NotZero(t, s.BehindSpells, "the burn makes the hosts run late")
			require.NotZero(t, s.LaggingSkips, "timers come due while the hosts run late")
			require.Zero(t, warm, "no election before the burn")
			require.Zero(t, c.elections(calmAt+3*et, c.now), "elections go on after the burn")
		})
	}
}

var overloadGroups = flag.Int("overload-groups", 1200, "groups of TestOverloadRecovers")

// overloadCost is the model's cost of work per batch, timer callback,
// entry stepped and message sent.
var overloadCost = cpuCost{batch: 50 * time.Microsecond, timer: 5 * time.Microsecond, entry: 25 * time.Microsecond, message: 25 * time.Microsecond}

var overloadSlow = flag.Float64("overload-slow", 3, "processor time multiplier during TestOverloadRecovers's burn")
