package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/sim"
)

// A Shape is a named network partition, laid out around the leader a
// healthy cluster settled on.
type Shape struct {
	// Name is the shape's command-line name.
	Name string
	// Doc says in one line what is cut.
	Doc   string
	apply func(c *sim.Cluster, leader election.ID, followers []election.ID)
}

// Shapes returns the partition shapes: follower-cut, bare-quorum,
// leader-minority, chain and one-way.
func Shapes() []Shape {
	both := func(c *sim.Cluster, a, b election.ID) { c.Cut(a, b); c.Cut(b, a) }
	return []Shape{
		{Name: "follower-cut", Doc: "one follower is cut from the leader (both ways) and still reaches the others",
			apply: func(c *sim.Cluster, l election.ID, f []election.ID) { both(c, l, f[0]) }},
		{Name: "bare-quorum", Doc: "the leader reaches only a bare majority; the others are cut from it and still reach everyone else",
			apply: func(c *sim.Cluster, l election.ID, f []election.ID) {
				for _, id := range f[quorum.Majority(len(c.IDs())).Size()-1:] { // the leader and Size-1 followers stay linked
					both(c, l, id)
				}
			}},
		{Name: "leader-minority", Doc: "a full partition with the leader on the minority side",
			apply: func(c *sim.Cluster, l election.ID, f []election.ID) {
				minority := append([]election.ID{l}, f[:quorum.Majority(len(c.IDs())).Spare()-1]...)
				c.Partition(minority)
			}},
		{Name: "chain", Doc: "the servers in a line with the leader in the middle; each reaches only its neighbours",
			apply: func(c *sim.Cluster, l election.ID, f []election.ID) {
				h := len(f) / 2
				line := append(append(append([]election.ID(nil), f[:h]...), l), f[h:]...)
				for i, a := range line {
					for j, b := range line {
						if i-j > 1 || j-i > 1 {
							c.Cut(a, b)
						}
					}
				}
			}},
		{Name: "one-way", Doc: "the leader's messages no longer reach one follower, whose messages still reach everyone",
			apply: func(c *sim.Cluster, l election.ID, f []election.ID) { c.Cut(l, f[0]) }},
	}
}

// ShapeNames returns the shapes' names, comma-separated.
func ShapeNames() string {
	var names []string
	for _, s := range Shapes() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// ShapeNamed returns the shape called name, or a *sim.FieldError (Field
// "Shape") wrapping ErrInvalidConfig.
func ShapeNamed(name string) (Shape, error) {
	for _, s := range Shapes() {
		if s.Name == name {
			return s, nil
		}
	}
	return Shape{}, fieldErr("Shape", name, "unknown shape (want %s)", ShapeNames())
}

// Partition measures what a network partition costs a cluster that had a
// leader: each trial settles a leader as Stability does, then cuts the
// links of Shape around it and runs for For (0: 10 minutes) of virtual
// time, counting election rounds, pre-vote rounds, leaders elected and
// the time without a leader that reaches a majority (Outcome.Leaderless).
// Summarize with Stability.Summarize (or SummarizePartition).
type Partition struct {
	Stability
	Shape Shape
}

// Validate reports the first invalid field, or nil: a *sim.FieldError
// wrapping ErrInvalidConfig.
func (p Partition) Validate() error {
	if p.Shape.apply == nil {
		return fieldErr("Shape", p.Shape.Name, "unknown shape (want %s)", ShapeNames())
	}
	if p.Nodes < 3 {
		return fieldErr("Nodes", p.Nodes, "must be at least 3 for a partition shape")
	}
	return p.Stability.Validate()
}

// Trial runs one partitioned window.
func (p Partition) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	return p.trial(ctx, rng, trace, func(c *sim.Cluster, l election.ID) {
		if l == election.None {
			l = 1 // never settled: lay the shape out around server 1
		}
		var f []election.ID
		for _, id := range c.IDs() {
			if id != l {
				f = append(f, id)
			}
		}
		p.Shape.apply(c, l, f)
		if trace != nil {
			trace(sim.FormatEvent(c.Now(), l, fmt.Sprintf("partition %s around leader n%d", p.Shape.Name, l)))
		}
	})
}

// Result describes partition trials ("partition", labelled with the
// shape's name); the figures of interest are those of
// Stability.Summarize.
func (p Partition) Result(outs []sim.Outcome) Result {
	r := p.Setup.result("partition")
	r.Label = p.Shape.Name
	return summarize(r, outs)
}
