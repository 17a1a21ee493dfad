package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/raftick/raftick/sim"
)

// TickCost measures what quantizing timers to ticks costs against exact
// timers on the same cluster: etcd raft, dragonboat and CockroachDB count
// every timeout in ticks of a fixed period (etcd's default is 100ms,
// CockroachDB's 200ms), where raftick's wheel fires each timer at its
// exact deadline. For each tick size it runs
//
//   - Failover trials: the time from the leader's crash until every
//     survivor accepted a new one, and the split-vote rate;
//   - Stability windows: the elections a healthy cluster starts
//     needlessly, per node-hour, under the network model (latency, loss).
//
// Every row runs Setup with only its Tick changed (Setup.Tick: a ticker
// per server with its own phase, timeouts drawn in whole ticks); the
// exact row (tick 0) draws continuous timeouts from the same range. Timer
// granularity and lateness are set to none in every row, since ticks
// replace them.
type TickCost struct {
	// Setup is the cluster; its Tick, Granularity and TimerLateness are
	// replaced in each row. TimeoutMin, TimeoutMax and the heartbeat must
	// be whole numbers of every tick of Ticks.
	Setup
	// Ticks lists the tick sizes, 0 for exact timers; at least one, none
	// negative.
	Ticks []time.Duration
	// For is the window of one Stability trial; 0 means DefaultStableFor.
	For time.Duration
}

// DefaultTicks are the tick sizes TickCost compares when none are given:
// exact timers, and ticks of 1, 10, 100 (etcd) and 500 milliseconds.
var DefaultTicks = []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond}

// Row returns the cluster of the row with tick t.
func (c TickCost) Row(t time.Duration) Setup {
	s := c.Setup
	s.Tick, s.Granularity, s.TimerLateness = t, 0, nil
	return s
}

// Validate reports the first invalid field, or nil: a *sim.FieldError
// wrapping ErrInvalidConfig. A tick that does not divide the timeouts
// and the heartbeat is refused with Field "Ticks".
func (c TickCost) Validate() error {
	if len(c.Ticks) == 0 {
		return fieldErr("Ticks", "", "give at least one tick size (0 for exact timers)")
	}
	if c.For < 0 {
		return fieldErr("For", c.For, "must not be negative (0 means %v)", DefaultStableFor)
	}
	for _, t := range c.Ticks {
		if t < 0 {
			return fieldErr("Ticks", t, "must not be negative (0 means exact timers)")
		}
		s := c.Row(t)
		if err := s.Validate(); err != nil {
			if t > 0 && s.validateTick() != nil {
				return fieldErr("Ticks", t, "does not divide the timeout range %s and the heartbeat %v (etcd counts them in whole ticks)",
					RangeLabel(s.TimeoutMin, s.TimeoutMax), s.heartbeat())
			}
			return err
		}
	}
	return nil
}

// TickRow is what one tick size measured.
type TickRow struct {
	// Tick is the tick size, 0 for exact timers.
	Tick time.Duration
	// Failover is the failover experiment of the row (its Summary holds
	// the percentiles and the split-vote rate).
	Failover Result
	// Stability is the row's unnecessary elections; RateLow and RateHigh
	// bound Stability.ElectionsPerNodeHour (Garwood's exact 95% Poisson
	// interval).
	Stability         StabilitySummary
	RateLow, RateHigh float64
}

// Label names the row: "exact" or the tick, e.g. "tick 100ms".
func (r TickRow) Label() string {
	if r.Tick == 0 {
		return "exact"
	}
	return fmt.Sprintf("tick %v", r.Tick)
}

// RunTickCost runs failoverTrials failovers and stableTrials stability
// windows of every row of c, in parallel (trial i of a row draws from
// sim.TrialRand(opts.Seed, i), so the result depends only on c, the
// trial counts and opts.Seed). On an interruption or a failed trial it
// returns the rows with what finished and the error.
func RunTickCost(ctx context.Context, c TickCost, failoverTrials, stableTrials int, opts sim.RunOptions) ([]TickRow, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if failoverTrials < 1 || stableTrials < 1 {
		return nil, fieldErr("Trials", min(failoverTrials, stableTrials), "must be at least 1")
	}
	n := len(c.Ticks)
	jobs := make([]sim.Job, 0, 2*n)
	for _, t := range c.Ticks {
		jobs = append(jobs, JobOf(Failover{c.Row(t)}, failoverTrials))
	}
	for _, t := range c.Ticks {
		jobs = append(jobs, JobOf(Stability{Setup: c.Row(t), For: c.For}, stableTrials))
	}
	acc := sim.Accumulate(ctx, jobs, opts)
	rows := make([]TickRow, n)
	for i, t := range c.Ticks {
		r := Failover{c.Row(t)}.Result(nil)
		r.Label = TickRow{Tick: t}.Label()
		r.Summary = acc.Accs[i].Summary()
		r.Seed = opts.Seed
		st := stabilityOf(c.Nodes, acc.Accs[n+i].Summary())
		lo, hi := PoissonInterval(st.Elections, st.NodeHours)
		rows[i] = TickRow{Tick: t, Failover: r, Stability: st, RateLow: lo, RateHigh: hi}
	}
	return rows, acc.Err
}
