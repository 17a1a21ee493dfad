package electiontest

import (
	"errors"
	"fmt"

	"github.com/raftick/raftick/election"
)

// Groups checks the groups of multi-group hosts, one Checker per group,
// made on the group's first event or SetLeader. Like a Checker it is fed
// from one goroutine at a time.
type Groups[K comparable] struct {
	voters func(K) int
	m      map[K]*Checker
	order  []K
}

// NewGroups returns a Groups whose Checkers check majorities of
// voters(group) votes; voters nil means no majority check.
func NewGroups[K comparable](voters func(K) int) *Groups[K] {
	return &Groups[K]{voters: voters, m: make(map[K]*Checker)}
}

// Group returns the Checker of group k.
func (g *Groups[K]) Group(k K) *Checker {
	c := g.m[k]
	if c == nil {
		n := 0
		if g.voters != nil {
			n = g.voters(k)
		}
		c = NewChecker(n)
		c.name = fmt.Sprintf("g%v", k)
		g.m[k] = c
		g.order = append(g.order, k)
	}
	return c
}

// Observe checks e, an event of group k.
func (g *Groups[K]) Observe(k K, e election.Event) { g.Group(k).Observe(e) }

// Err returns nil if every group is safe, else the groups' errors joined
// in the order the groups were first seen.
func (g *Groups[K]) Err() error {
	var errs []error
	for _, k := range g.order {
		if err := g.m[k].Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Leases checks the lease invariant of group k (see Checker.Leases) on
// views of its nodes taken at one instant.
func (g *Groups[K]) Leases(k K, views []LeaseView) { g.Group(k).Leases(views) }
