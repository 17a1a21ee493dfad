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
)

// A Trialer runs one trial at a time. Trial must depend only on the
// receiver's fields, i and rng, so a trial can run on any goroutine and
// be reproduced alone. If trace is not nil it receives the trial's event
// log, one line per call. ctx interrupts a long trial (it then returns
// ctx's error); a trial whose cluster broke (a callback panicked)
// returns the error too, never an outcome.
type Trialer interface {
	Trial(ctx context.Context, i int, rng *rand.Rand, trace func(string)) (sim.Outcome, error)
}

// An Experiment is a Trialer whose outcomes summarize into a Result.
type Experiment interface {
	Trialer
	// Result summarizes outs (nil: just the description of the
	// experiment, with an empty Summary).
	Result(outs []sim.Outcome) Result
}

// Result is what an experiment measured: what ran and the summary of its
// trials.
type Result struct {
	// Experiment names the experiment: "failover", "bootstrap",
	// "splitvote".
	Experiment string
	// Label names the row, e.g. "150-155ms".
	Label string
	// Setup is the simulated cluster, with its Heartbeat made explicit (0
	// only where no heartbeat applies).
	Setup Setup
	// Alive is the number of servers running during the measurement.
	Alive int
	// Model names what was simulated when Setup does not say it:
	// splitvote's "race" or "cluster", "hashicorp-engine" for real
	// hashicorp/raft nodes.
	Model string
	// LatencyFraction (splitvote) is the fixed latency as a fraction of
	// the timeout range: the thesis' l.
	LatencyFraction float64
	// Seed is the root seed of the run (sim.RunOptions.Seed).
	Seed uint64
	sim.Summary
	// Analytic (splitvote) is the thesis' closed-form split-vote rate for
	// these parameters, or NaN when it does not apply.
	Analytic float64
	// Paper holds the figures the Raft paper quotes for this row, if any.
	Paper []PaperFigure
}

// MessagesMeasured reports whether r's MessagesPerElection was measured:
// not on real hashicorp/raft nodes (Model "hashicorp-engine"), whose
// messages the engine does not count.
func (r Result) MessagesMeasured() bool { return r.Model != "hashicorp-engine" }

// JobOf returns the sim.Job that runs trials of e.
func JobOf(e Trialer, trials int) sim.Job {
	return sim.Job{Trials: trials, Trial: func(ctx context.Context, i int, rng *rand.Rand) (sim.Outcome, error) {
		return e.Trial(ctx, i, rng, nil)
	}}
}

// Run runs trials[i] trials of exps[i] through sim.Summaries and returns
// their Results, in order, with Seed set; memory does not grow with the
// number of trials (see sim.SampleCap). It first validates every
// experiment that has a Validate method (Setup's, for Failover, Bootstrap
// and the paper's rows): an invalid one runs nothing and Run returns its
// error, a *sim.FieldError wrapping ErrInvalidConfig, with no Results. On
// an interruption or a failed trial it returns the Results of what
// finished and the error.
func Run(ctx context.Context, exps []Experiment, trials []int, opts sim.RunOptions) ([]Result, error) {
	if err := Validate(exps, trials); err != nil {
		return nil, err
	}
	accs := Accumulate(ctx, exps, trials, opts)
	return Results(exps, accs.Accs, opts.Seed), accs.Err
}

// Validate reports the first of exps that is invalid, or a trials that
// does not match exps: Run's check before it runs anything. An
// experiment is checked by its Validate method, if it has one.
func Validate(exps []Experiment, trials []int) error {
	if len(trials) != len(exps) {
		return fmt.Errorf("%w: %d trial counts for %d experiments", ErrInvalidConfig, len(trials), len(exps))
	}
	for i, e := range exps {
		if trials[i] < 0 {
			return fieldErr("trials", trials[i], "must not be negative (experiment %d)", i)
		}
		v, ok := e.(interface{ Validate() error })
		if !ok {
			continue
		}
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Accumulate runs the trials of Run but returns the accumulators (to
// merge shards, see sim.RunOptions.Shard) instead of the Results. Like
// Run it validates exps first; an invalid one runs nothing and its error
// is the Accumulated's, with an empty accumulator per experiment.
func Accumulate(ctx context.Context, exps []Experiment, trials []int, opts sim.RunOptions) sim.Accumulated {
	if err := Validate(exps, trials); err != nil {
		return sim.Accumulated{Accs: make([]sim.Accumulator, len(exps)), Err: err}
	}
	jobs := make([]sim.Job, len(exps))
	for i, e := range exps {
		jobs[i] = JobOf(e, trials[i])
	}
	return sim.Accumulate(ctx, jobs, opts)
}

// Results returns the Results of exps from their accumulators (one each,
// in order), with Seed set.
func Results(exps []Experiment, accs []sim.Accumulator, seed uint64) []Result {
	rs := make([]Result, len(exps))
	for i, e := range exps {
		rs[i] = e.Result(nil)
		rs[i].Summary = accs[i].Summary()
		rs[i].Seed = seed
	}
	return rs
}

// summarize returns the Result of outs with the description d.
func summarize(d Result, outs []sim.Outcome) Result {
	d.Summary = sim.Summarize(outs)
	d.Analytic = math.NaN()
	return d
}

// tracker follows who leads and who follows whom, from node events.
type tracker struct {
	leading []uint64 // leading[id]: term in which id is leader, 0 if not
	known   []known  // known[id]: leader id accepted, and its term
	maxTerm uint64
}

type known struct {
	term   uint64
	leader election.ID
}

func newTracker(n int) *tracker {
	return &tracker{leading: make([]uint64, n+1), known: make([]known, n+1)}
}

func (t *tracker) observe(e election.Event) {
	t.maxTerm = max(t.maxTerm, e.Term)
	switch e.Type {
	case election.EventLeaderElected:
		t.leading[e.Node] = e.Term
		t.known[e.Node] = known{e.Term, e.Node}
	case election.EventLeaderKnown:
		t.known[e.Node] = known{e.Term, e.Leader}
	case election.EventStepDown:
		t.leading[e.Node] = 0
	case election.EventRoleChange:
		if e.Role != election.Leader {
			t.leading[e.Node] = 0
		}
	}
}

// accepted returns a leader L and its term such that L is up and leads,
// and the number of other running servers that accepted L in that term.
func (t *tracker) accepted(c *sim.Cluster) (leader election.ID, term uint64, followers, others int) {
	for id := 1; id < len(t.leading); id++ {
		if tl := t.leading[id]; tl != 0 && c.Up(election.ID(id)) && tl >= term {
			leader, term = election.ID(id), tl
		}
	}
	if leader == election.None {
		return
	}
	followers, others = t.acceptedBy(c, leader, term)
	return
}

// acceptedBy returns the number of running servers other than leader
// that accepted it in term, and the number of other running servers.
func (t *tracker) acceptedBy(c *sim.Cluster, leader election.ID, term uint64) (followers, others int) {
	for id := 1; id < len(t.known); id++ {
		if election.ID(id) == leader || !c.Up(election.ID(id)) {
			continue
		}
		others++
		if k := t.known[id]; k.term == term && k.leader == leader {
			followers++
		}
	}
	return
}

// functional reports whether a running leader reaches a majority of the
// cluster: itself and the followers that accepted it in its term over
// links that work both ways.
func (t *tracker) functional(c *sim.Cluster) bool {
	l, term, _, _ := t.accepted(c)
	if l == election.None {
		return false
	}
	n := 1
	for id := 1; id < len(t.known); id++ {
		f := election.ID(id)
		if f != l && c.Up(f) && t.known[id] == (known{term, l}) && c.Linked(l, f) && c.Linked(f, l) {
			n++
		}
	}
	return quorum.Majority(len(t.known) - 1).Reached(n)
}

func tracerFor(trace func(string)) func(time.Duration, election.ID, string) {
	if trace == nil {
		return nil
	}
	return func(at time.Duration, id election.ID, what string) { trace(sim.FormatEvent(at, id, what)) }
}
