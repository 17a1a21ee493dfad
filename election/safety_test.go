package election_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/testseed"
	"github.com/raftick/raftick/repeated"
)

var (
	schedulesFlag = flag.Int("schedules", 0, "TestRandomSafety: number of random schedules (0: 10000; 2000 with -race, 1000 with -short)")
	traceFlag     = flag.Bool("events", false, "TestRandomSafety: log every event and fault of each schedule (use with -schedules=1 -v)")
)

// TestRandomSafety runs seeded random fault schedules (message loss,
// duplication, delay, reordering and misrouting, partitions, crashes and
// restarts, failing disks, campaigns and transfers, random configurations,
// tickers and logs, and in half of them hostile messages: any type, sender
// and term, terms around MaxTerm and 2^64 included) and checks Raft's
// election safety on all events: at most one leader per term, at most one
// vote per node per term, terms never decrease nor exceed MaxTerm, leaders
// elected by a majority. After every advance of virtual time it checks the
// lease invariant (no node holds a lease in a term below another leader's),
// unless a hostile message forged a leadership transfer. Consecutive seeds
// cycle through the eight combinations of PreVote, CheckQuorum and
// LeaderStickiness. -schedules sets the count (go test ./election -run
// TestRandomSafety -schedules=100000). A failing schedule prints its
// reproduce command.
func TestRandomSafety(t *testing.T) {
	n := *schedulesFlag
	if n <= 0 {
		switch {
		case testing.Short():
			n = 1000
		case raceEnabled:
			n = 2000
		default:
			n = 10000
		}
	}
	// Schedule i uses seed base+i.
	base := testseed.Seed(t, fmt.Sprintf("-schedules=%d", n))
	start := time.Now() // wall time of the run, reported only
	var withLeader, elected, faults, injected, leased int
	for i := range n {
		seed := base + uint64(i)
		r := runSchedule(t, seed, *traceFlag)
		if r.err != nil {
			t.Fatalf("schedule with seed %d: %v\n%s\nreproduce: go test ./election -run TestRandomSafety -v -seed=%d -schedules=1 -events",
				seed, r.err, r.desc, seed)
		}
		if r.elected > 0 {
			withLeader++
		}
		elected += r.elected
		faults += r.faults
		injected += r.injected
		if r.leaseChecked {
			leased++
		}
	}
	t.Logf("%d random schedules (seeds %d..%d) in %v: %d elections won, %d faults and %d hostile messages injected, %d schedules elected a leader, %d lease-checked throughout",
		n, base, base+uint64(n)-1, time.Since(start).Round(time.Millisecond), elected, faults, injected, withLeader, leased)
	// The schedules must exercise elections, not just faults.
	require.Greater(t, withLeader, n/2, "too few schedules elected a leader")
}

type scheduleResult struct {
	err          error
	desc         string
	elected      int
	faults       int
	injected     int
	leaseChecked bool // no forged transfer turned the lease checks off
}

// runSchedule builds one random cluster and fault schedule from seed and
// runs it in virtual time.
func runSchedule(t *testing.T, seed uint64, trace bool) scheduleResult {
	rng := rand.New(rand.NewPCG(seed, 0xfa017))
	sizes := []int{1, 2, 3, 3, 3, 4, 5, 5}
	size := sizes[rng.IntN(len(sizes))]
	const et = 10 * time.Millisecond
	hb := et / time.Duration(2+rng.IntN(4))
	jitters := []struct {
		name string
		j    repeated.Jitter
	}{
		{"proportional(1)", repeated.Proportional(1)},
		{"proportional(0.1)", repeated.Proportional(0.1)},
		{"extra(5ms)", repeated.UniformExtra(et / 2)},
		{"none", repeated.None()},
		{"backoff", repeated.Backoff(3, 8*et)},
	}
	jit := jitters[rng.IntN(len(jitters))]
	// Consecutive seeds run the eight combinations of PreVote,
	// CheckQuorum and LeaderStickiness in turn. The three draws that used
	// to pick them are still made, so that the choices after them stay
	// those of earlier versions for a seed.
	prevote, checkQuorum, sticky := seed&1 != 0, seed&2 != 0, seed&4 != 0
	_, _, _ = rng.IntN(2), rng.IntN(2), rng.IntN(3)
	contact, voteStepDown := rng.IntN(3) == 0, rng.IntN(3) == 0
	var prios []int
	if rng.IntN(5) == 0 {
		for range size {
			prios = append(prios, rng.IntN(4)*10)
		}
	}
	maxDelay := []time.Duration{100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 15 * time.Millisecond}[rng.IntN(4)]
	loss := []float64{0, 0.01, 0.1, 0.3}[rng.IntN(4)]
	dup := []float64{0, 0.05, 0.2}[rng.IntN(3)]
	// Later options draw from their own stream, so that adding one does
	// not change the choices above for a seed.
	orng := rand.New(rand.NewPCG(seed, 0x0b7105))
	wait, keep, untilTimeout := orng.IntN(3) == 0, orng.IntN(3) == 0, orng.IntN(3) == 0
	hbJitter, hbPerPeer := orng.IntN(3) == 0, orng.IntN(3) == 0
	misroute := []float64{0, 0, 0.01, 0.1}[orng.IntN(4)]
	tick := []time.Duration{0, 0, 0, 0, et / 10, et / 4, et / 2}[orng.IntN(7)]
	desc := fmt.Sprintf("n=%d hb=%v jitter=%s prevote=%v checkquorum=%v sticky=%v contact=%v vote-stepdown=%v priorities=%v delay<=%v loss=%v dup=%v"+
		" wait=%v keep-timer=%v sticky-until-timeout=%v hb-jitter=%v hb-per-peer=%v misroute=%v tick=%v",
		size, hb, jit.name, prevote, checkQuorum, sticky, contact, voteStepDown, prios, maxDelay, loss, dup,
		wait, keep, untilTimeout, hbJitter, hbPerPeer, misroute, tick)

	c := newCluster(t, clusterOpts{n: size, delay: 0, seed: rng.Uint64(), config: func(cfg *election.Config) {
		cfg.ElectionTimeout, cfg.HeartbeatInterval, cfg.VoteTimeout = et, hb, et
		cfg.ElectionJitter, cfg.VoteJitter = jit.j, jit.j
		cfg.StepDownInterval = et / 2
		cfg.PreVote, cfg.CheckQuorum, cfg.LeaderStickiness = prevote, checkQuorum, sticky
		cfg.Emulate.StepDownWhenVoteTimedOut = voteStepDown
		cfg.Emulate.WaitForVoteTimeout, cfg.Emulate.KeepTimerOnStepDown, cfg.Emulate.HeartbeatPerPeer = wait, keep, hbPerPeer
		cfg.Emulate.Tick = tick
		if untilTimeout {
			cfg.Stickiness = election.StickyUntilTimeout
		}
		if hbJitter {
			cfg.HeartbeatJitter = repeated.Proportional(1)
		}
		if contact {
			cfg.Detection = election.CheckLastContact
		}
		if prios != nil {
			cfg.Priority = prios[cfg.ID-1]
			cfg.Priorities = map[election.ID]int{}
			for i, p := range prios {
				cfg.Priorities[election.ID(i+1)] = p
			}
		}
	}})
	// Half the schedules run deferred nodes (NewDeferredNode), whose
	// writes take up to dmax, from their own stream.
	drng := rand.New(rand.NewPCG(seed, 0xdefe))
	if drng.IntN(2) == 0 {
		dmax := []time.Duration{100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond}[drng.IntN(3)]
		desc += fmt.Sprintf(" deferred<=%v", dmax)
		c.deferred = make(map[election.ID]*lagStorage)
		for _, id := range c.ids {
			c.deferred[id] = &lagStorage{c: c, id: id, rng: rand.New(rand.NewPCG(drng.Uint64(), uint64(id))), max: dmax}
		}
	}
	if trace {
		t.Logf("seed %d: %s", seed, desc)
		c.cfgsObserve(func(e election.Event) {
			if e.Type != election.EventIgnored {
				t.Log(e)
			}
		})
	}
	for _, id := range c.ids {
		c.logs[id].index, c.logs[id].term = uint64(rng.IntN(3)), uint64(rng.IntN(2))
	}
	netRng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	var delays []time.Duration // reused: Send consumes the result before returning
	c.net.SetRoute(func(m election.Message) []time.Duration {
		if netRng.Float64() < loss {
			return nil
		}
		delays = append(delays[:0], time.Duration(netRng.Int64N(int64(maxDelay))))
		if netRng.Float64() < dup {
			delays = append(delays, time.Duration(netRng.Int64N(int64(maxDelay))))
		}
		return delays
	})
	if misroute > 0 {
		mrng := rand.New(rand.NewPCG(seed, 0x3157))
		c.misroute = func(m election.Message) (election.ID, time.Duration, bool) {
			if mrng.Float64() >= misroute {
				return 0, 0, false
			}
			return c.ids[mrng.IntN(len(c.ids))], time.Duration(mrng.Int64N(int64(maxDelay))), true
		}
	}
	c.leases = true
	c.startAll(t)

	// Faults at random times within 30 election timeouts.
	const horizon = 30 * et
	// Hostile messages (half of the schedules) at random times of their
	// own, drawn from their own stream.
	irng := rand.New(rand.NewPCG(seed, 0x1e57))
	ninjected := 0
	if irng.IntN(2) == 0 {
		ninjected = 1 + irng.IntN(8)
	}
	for range ninjected {
		at := time.Duration(irng.Int64N(int64(horizon)))
		_, err := c.v.Wheel.AfterFunc(at, func() {
			f := c.inject(irng)
			if trace {
				t.Logf("%v %s", c.v.Now(), f)
			}
		})
		require.NoError(t, err)
	}
	nfaults := rng.IntN(10)
	at := time.Duration(0)
	for range nfaults {
		at += time.Duration(rng.Int64N(int64(horizon) / int64(nfaults+1) * 2))
		c.runUntil(at, func() bool { return false })
		f := c.randomFault(t, rng)
		if trace {
			t.Logf("%v fault: %s", c.v.Now(), f)
		}
	}
	c.runUntil(max(horizon, c.v.Now()), func() bool { return false })
	// Repair everything and let the cluster settle.
	c.net.Heal()
	for _, id := range c.ids {
		c.stores[id].SetSaveError(nil)
		if c.nodes[id] == nil {
			c.start(t, id)
		}
	}
	c.runUntil(c.v.Now()+10*et, func() bool { return false })
	for _, id := range c.ids {
		c.crash(id)
	}
	err := c.check.Err()
	if err == nil {
		err = c.durableErr
	}
	return scheduleResult{err: err, desc: desc, elected: c.check.Elected(), faults: nfaults, injected: ninjected, leaseChecked: c.leases}
}

// cfgsObserve adds f as a second observer of every node created later.
func (c *cluster) cfgsObserve(f func(election.Event)) {
	for id, cfg := range c.cfgs {
		cfg.Observer = func(e election.Event) { c.observe(e); f(e) }
		c.cfgs[id] = cfg
	}
}

var errDisk = fmt.Errorf("disk on fire")

// randomFault applies one random fault and describes it.
func (c *cluster) randomFault(t *testing.T, rng *rand.Rand) string {
	id := c.ids[rng.IntN(len(c.ids))]
	switch rng.IntN(9) {
	case 8:
		c.crash(id)
		c.start(t, id)
		return fmt.Sprintf("reboot n%d", id)
	case 0:
		c.crash(id)
		return fmt.Sprintf("crash n%d", id)
	case 1:
		if c.nodes[id] == nil {
			c.start(t, id)
			return fmt.Sprintf("restart n%d", id)
		}
		return "restart of a live node: nothing"
	case 2:
		c.net.Isolate(id, c.ids...)
		return fmt.Sprintf("isolate n%d", id)
	case 3:
		var a, b []election.ID
		for _, x := range c.ids {
			if rng.IntN(2) == 0 {
				a = append(a, x)
			} else {
				b = append(b, x)
			}
		}
		c.net.Partition(a, b)
		return fmt.Sprintf("partition %v | %v", a, b)
	case 4:
		c.net.Heal()
		return "heal"
	case 5:
		if n := c.nodes[id]; n != nil {
			return fmt.Sprintf("campaign n%d: %v", id, n.Campaign())
		}
		return "campaign of a crashed node: nothing"
	case 6:
		for _, l := range c.leaders() {
			return fmt.Sprintf("transfer n%d -> n%d: %v", l, id, c.nodes[l].TransferLeadership(id))
		}
		return "transfer without leader: nothing"
	default:
		if rng.IntN(2) == 0 {
			c.stores[id].SetSaveError(errDisk)
			return fmt.Sprintf("disk of n%d fails", id)
		}
		c.stores[id].SetSaveError(nil)
		return fmt.Sprintf("disk of n%d works", id)
	}
}
