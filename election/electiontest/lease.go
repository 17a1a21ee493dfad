package electiontest

import (
	"fmt"

	"github.com/raftick/raftick/election"
)

// A LeaseView is what one node of a group says at one instant: its ID,
// its term, whether it is leader, and whether it holds the leader lease
// (election.Node.QuorumContact). Build the views of every live node at the
// same instant (on a virtual wheel, between two advances).
type LeaseView struct {
	ID     election.ID
	Term   uint64
	Leader bool
	Lease  bool
}

// Leases checks the lease invariant on the views of a group's nodes taken
// at one instant: no node holds a lease in term t while another node leads
// a term above t, whether that leader is among the views or was elected
// earlier (its EventLeaderElected observed, or SetLeader called). A lease
// promises that no other leader exists in a later term until it ends, so a
// lease holder may answer reads alone; a violation means such a read could
// miss a write of the newer leader. A view with Lease and not Leader is a
// violation too: only a leader holds a lease.
func (c *Checker) Leases(views []LeaseView) {
	for _, v := range views {
		if !v.Lease {
			continue
		}
		if !v.Leader {
			c.failLease(v, "holds a lease but is not leader")
			continue
		}
		for _, w := range views {
			if w.Leader && w.ID != v.ID && w.Term > v.Term {
				c.failLease(v, "holds a lease while n%d leads term %d", w.ID, w.Term)
			}
		}
		if c.topTerm > v.Term && c.topLeader != v.ID {
			c.failLease(v, "holds a lease while n%d was elected leader of term %d", c.topLeader, c.topTerm)
		}
	}
}

func (c *Checker) failLease(v LeaseView, format string, args ...any) {
	c.failures++
	if len(c.violations) == maxListed {
		return
	}
	s := fmt.Sprintf("lease: n%d (term %d) %s", v.ID, v.Term, fmt.Sprintf(format, args...))
	if c.name != "" {
		s = c.name + " " + s
	}
	c.violations = append(c.violations, s)
}
