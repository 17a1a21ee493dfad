package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
)

// An Experiment is a value with its parameters that runs one trial at a
// time. Trial must depend only on the experiment's fields, i and rng, so a
// trial can run on any goroutine and be reproduced alone.
type Experiment interface {
	// Params describes the experiment for output.
	Params() Params
	// Trial runs trial i with its own random source. If trace is not nil
	// it receives the trial's event log, one line per call.
	Trial(i int, rng *rand.Rand, trace func(string)) Outcome
}

// JobOf returns the Job that runs trials of e.
func JobOf(e Experiment, trials int) Job {
	return Job{Trials: trials, Trial: func(i int, rng *rand.Rand) Outcome { return e.Trial(i, rng, nil) }}
}

// FormatEvent formats one line of a trace: time (ms with µs precision),
// node and what happened.
func FormatEvent(at time.Duration, node election.ID, what string) string {
	who := "  -"
	if node != election.None {
		who = fmt.Sprintf("n%-2d", node)
	}
	return fmt.Sprintf("%12.3fms  %s  %s", float64(at)/1e6, who, what)
}

// eventText formats an election.Event without its time and node.
func eventText(e election.Event) string {
	s := fmt.Sprintf("%s t%d %s", e.Type, e.Term, e.Role)
	if e.Leader != election.None {
		s += fmt.Sprintf(" leader=%d", e.Leader)
	}
	if e.Peer != election.None {
		s += fmt.Sprintf(" peer=%d", e.Peer)
	}
	if e.PreVote {
		s += " prevote"
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// tracker follows who leads and who follows whom, from node events.
type tracker struct {
	c       *Cluster
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
func (t *tracker) accepted(c *Cluster) (leader election.ID, term uint64, followers, others int) {
	for id := 1; id < len(t.leading); id++ {
		if tl := t.leading[id]; tl != 0 && c.Up(election.ID(id)) && tl >= term {
			leader, term = election.ID(id), tl
		}
	}
	if leader == election.None {
		return
	}
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

func tracerFor(trace func(string)) func(time.Duration, election.ID, string) {
	if trace == nil {
		return nil
	}
	return func(at time.Duration, id election.ID, what string) { trace(FormatEvent(at, id, what)) }
}
