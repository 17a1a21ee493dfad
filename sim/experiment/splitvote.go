package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/wheel"
)

// SplitVote measures how often the first election term of a cluster ends
// without a leader, to compare with the closed form of Ongaro's thesis
// (chapter 9.3, "Split vote rate with fixed latency"), Analytic.
//
// Alive of Nodes servers start at the same instant with timeouts drawn
// uniformly from [Range, 2*Range) — only the width of the range matters
// to the model — and every message takes Fraction*Range (or a draw from
// Latency, if set). Two models:
//
//   - "race" is the thesis' own simulation, as a timer race on a virtual
//     wheel: every server times out once; a server that has not voted
//     when it times out votes for itself and sends vote requests; a server
//     that gets a request before voting grants it (and its timer is
//     cancelled); the term splits if no candidate collects a majority of
//     Nodes. Nothing else is modelled: no retries, no terms, no disk.
//   - "cluster" runs election.Node servers in a Cluster (no pre-vote, no
//     disk delay) and reports whether the first leader was elected in
//     term 1: it checks that the real election code behaves as the model
//     assumes.
type SplitVote struct {
	Nodes, Alive int
	// Fraction is the thesis' l: one-way latency as a fraction of the
	// timeout range; in [0, 1].
	Fraction float64
	// Range is the width of the timeout range; 0 means 100ms (the thesis'
	// example).
	Range time.Duration
	// Latency, if set, replaces the fixed Fraction*Range latency (the
	// thesis' variable-latency study); the analytic value is then NaN.
	Latency sim.Latency
	// Model is "race" (default) or "cluster".
	Model string
}

func (sv SplitVote) rng() time.Duration {
	if sv.Range > 0 {
		return sv.Range
	}
	return 100 * time.Millisecond
}

func (sv SplitVote) latency() sim.Latency {
	if sv.Latency != nil {
		return sv.Latency
	}
	return sim.Fixed(time.Duration(math.Round(sv.Fraction * float64(sv.rng()))))
}

// Validate reports the first invalid field, or nil: a *sim.FieldError
// wrapping ErrInvalidConfig.
func (sv SplitVote) Validate() error {
	switch {
	case sv.Nodes < 1 || sv.Nodes > sim.MaxNodes:
		return fieldErr("Nodes", sv.Nodes, "must be in [1, %d]", sim.MaxNodes)
	case sv.Alive < 1 || sv.Alive > sv.Nodes:
		return fieldErr("Alive", sv.Alive, "must be in [1, %d] (the servers)", sv.Nodes)
	case math.IsNaN(sv.Fraction) || sv.Fraction < 0 || sv.Fraction > 1:
		return fieldErr("Fraction", sv.Fraction, "must be a fraction in [0, 1]")
	case sv.Range < 0:
		return fieldErr("Range", sv.Range, "must not be negative (0 means 100ms)")
	case sv.Model != "" && sv.Model != "race" && sv.Model != "cluster":
		return fieldErr("Model", sv.Model, "must be race or cluster")
	}
	return nil
}

// Result summarizes split-vote trials, with the thesis' rate beside them.
func (sv SplitVote) Result(outs []sim.Outcome) Result {
	model := sv.Model
	if model == "" {
		model = "race"
	}
	r := sv.rng()
	res := summarize(Result{
		Experiment:      "splitvote",
		Label:           fmt.Sprintf("n=%d s=%d l=%g", sv.Nodes, sv.Alive, sv.Fraction),
		Setup:           Setup{Nodes: sv.Nodes, TimeoutMin: r, TimeoutMax: 2 * r, Network: sim.Network{Latency: sv.latency()}},
		Alive:           sv.Alive,
		LatencyFraction: sv.Fraction,
		Model:           model,
	}, outs)
	res.Analytic = sv.Analytic()
	return res
}

// Analytic returns the probability that an election term splits in the
// experiment, by the closed form of Ongaro's thesis, or NaN if its
// latency is not fixed. With s of n servers alive, timeouts uniform over
// a range and every message taking the fixed fraction l of that range
// (section 9.3), the first server to time out gets every vote except those
// of the servers that time out within l after it (they vote for
// themselves), so the term splits when at least c = s - floor(n/2) + 1
// servers, the first included, time out within l of the first:
//
//	Pr(split) = Pr(T(c) - T(1) <= l) = Sum_{k=c-1..s} C(s,k) l^k (1-l)^(s-k)
//
// where T(i) is the i-th smallest of s uniform timeouts. (The sum is the
// probability that at least c-1 of s uniforms fall below l: the gaps
// between sorted uniforms are exchangeable, so T(c)-T(1) has the law of
// T(c-1).) It is 1 when s is not a majority of n, and l is clamped to
// [0, 1]. A single server never splits.
func (sv SplitVote) Analytic() float64 {
	if sv.Latency != nil {
		return math.NaN()
	}
	return splitRate(sv.Nodes, sv.Alive, sv.Fraction)
}

// splitRate is the closed form of Analytic.
func splitRate(n, s int, l float64) float64 {
	m := quorum.Majority(n)
	if !m.Reached(s) {
		return 1
	}
	l = min(max(l, 0), 1)
	c := s - m.Size() + 2
	if c > s {
		return 0 // the first server alone is a majority
	}
	var p float64
	for k := c - 1; k <= s; k++ {
		p += binom(s, k) * math.Pow(l, float64(k)) * math.Pow(1-l, float64(s-k))
	}
	return min(p, 1)
}

func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// Trial runs one election term.
func (sv SplitVote) Trial(ctx context.Context, i int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if sv.Model == "cluster" {
		return sv.clusterTrial(ctx, rng, trace)
	}
	return sv.raceTrial(rng, trace)
}

// raceTrial is the thesis' simulation on a virtual wheel. Every server
// times out once, so it always ends within 2*Range plus two latencies.
func (sv SplitVote) raceTrial(rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	w, err := sim.NewWheel()
	if err != nil {
		return sim.Outcome{}, err
	}
	defer w.Stop()
	s, quorum := sv.Alive, quorum.Majority(sv.Nodes).Size()
	r := sv.rng()
	lat := sv.latency()
	vote := make([]int, s) // vote[i]: server voted for, -1 none
	votes := make([]int, s)
	timers := make([]*wheel.Timer, s)
	winner, msgs := -1, 0
	var end time.Duration
	say := func(id int, what string) {
		if trace != nil {
			trace(sim.FormatEvent(w.Now(), election.ID(id+1), what))
		}
	}
	for k := range vote {
		vote[k] = -1
	}
	var grant func(cand int) func()
	grant = func(cand int) func() {
		return func() {
			votes[cand]++
			say(cand, fmt.Sprintf("vote received (%d of %d needed)", votes[cand], quorum))
			if votes[cand] >= quorum && winner < 0 {
				winner, end = cand, w.Now()
				say(cand, "wins")
			}
		}
	}
	request := func(cand, to int) func() {
		return func() {
			if vote[to] >= 0 {
				say(to, fmt.Sprintf("denies n%d (voted n%d)", cand+1, vote[to]+1))
				msgs++
				return
			}
			vote[to] = cand
			timers[to].Stop()
			say(to, fmt.Sprintf("grants n%d", cand+1))
			msgs++
			_, _ = w.AfterFunc(lat.Sample(rng), grant(cand))
		}
	}
	for k := range s {
		d := r + time.Duration(rng.Int64N(int64(r)))
		timers[k], _ = w.AfterFunc(d, func() {
			if vote[k] >= 0 {
				return
			}
			vote[k] = k
			votes[k]++
			say(k, "times out, votes for itself, requests votes")
			for j := range s {
				if j != k {
					msgs++
					_, _ = w.AfterFunc(lat.Sample(rng), request(k, j))
				}
			}
			if votes[k] >= quorum && winner < 0 {
				winner, end = k, w.Now()
			}
		})
	}
	w.RunUntilIdle()
	if err := w.Err(); err != nil {
		return sim.Outcome{}, err
	}
	if winner < 0 {
		end = w.Now()
		say(-1, "split: no candidate has a majority")
		return sim.Outcome{Time: end, Terms: 1, Splits: 1, Messages: msgs, OK: true}, nil
	}
	return sim.Outcome{Time: end, Terms: 1, Messages: msgs, OK: true}, nil
}

// clusterTrial runs election nodes and reports whether term 1 elected.
func (sv SplitVote) clusterTrial(ctx context.Context, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	r := sv.rng()
	ec := election.DefaultConfig()
	ec.ElectionTimeout = r
	ec.ElectionJitter = timeoutJitter(r, 2*r, 0, 0, nil, false)
	ec.VoteTimeout = r
	ec.HeartbeatInterval = r / 2
	ec.PreVote, ec.CheckQuorum, ec.LeaderStickiness = false, false, false
	ec.Detection = election.ResetOnHeartbeat
	var term uint64
	cfg := sim.Config{
		Nodes:    sv.Nodes,
		Election: ec,
		Network:  sim.Network{Latency: sv.latency()},
		Rand:     rng,
		Context:  ctx,
		Trace:    tracerFor(trace),
		Observer: func(e election.Event) {
			if trace != nil && e.Type != election.EventIgnored {
				trace(sim.FormatEvent(e.At, e.Node, sim.EventText(e)))
			}
			if e.Type == election.EventLeaderElected && term == 0 {
				term = e.Term
			}
		},
	}
	c, err := sim.NewCluster(cfg)
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	ids := c.IDs()[:sv.Alive]
	if err := c.Start(ids...); err != nil {
		return sim.Outcome{}, err
	}
	limit := 50 * 2 * r
	elected := c.Run(limit, func() bool { return term != 0 })
	if err := c.Err(); err != nil {
		return sim.Outcome{}, err
	}
	if !elected {
		return sim.Outcome{Time: limit, Terms: 1, Splits: 1, Messages: int(c.Stats().Sent)}, nil
	}
	o := sim.Outcome{Time: c.Now(), Terms: 1, Messages: int(c.Stats().Sent), OK: true}
	if term > 1 {
		o.Splits = 1
	}
	return o, nil
}
