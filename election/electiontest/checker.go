package electiontest

import (
	"fmt"
	"strings"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/quorum"
)

// maxListed bounds the violations an error lists; it counts them all.
const maxListed = 20

// A Checker verifies Raft's election safety for one group from the events
// of all its nodes, across restarts and hibernation:
//   - at most one leader per term (a leader that resumes from hibernation
//     must be the leader its term elected);
//   - a node grants at most one vote per term;
//   - a node's term never decreases;
//   - a leader was elected with votes from a majority of the voters;
//   - no term exceeds election.MaxTerm;
//   - unless ForgedLeaders is set, a follower follows its term's leader;
//   - given the nodes' views with Leases, no node holds a leader lease in
//     a term below that of another leader.
//
// Feed it every event with Observe (from one goroutine at a time), the
// views of every node with Leases as often as the test can (after each
// step), and ask Err at the end or after each step.
type Checker struct {
	// ForgedLeaders turns off the follower check, for tests that inject
	// messages forged in the name of other nodes: an injected heartbeat
	// can make a follower believe any voter leads.
	ForgedLeaders bool

	name    string // prefixes violations ("g3"); empty for one group
	quorum  int    // 0: no majority check
	leaders map[uint64]election.ID
	// topTerm is the highest term with a known leader, topLeader its
	// leader (Leases).
	topTerm    uint64
	topLeader  election.ID
	voteOf     map[voteKey]election.ID
	grants     map[uint64]map[election.ID]map[election.ID]bool // term -> candidate -> voters
	term       map[election.ID]uint64
	violations []string
	failures   int
	elected    int
}

type voteKey struct {
	node election.ID
	term uint64
}

// NewChecker returns a Checker for a group of voters voting members; with
// voters 0 it does not check that leaders had a majority.
func NewChecker(voters int) *Checker {
	c := &Checker{
		leaders: make(map[uint64]election.ID),
		voteOf:  make(map[voteKey]election.ID),
		grants:  make(map[uint64]map[election.ID]map[election.ID]bool),
		term:    make(map[election.ID]uint64),
	}
	if voters > 0 {
		c.quorum = quorum.Majority(voters).Size()
	}
	return c
}

func (c *Checker) fail(e election.Event, format string, args ...any) {
	c.failures++
	if len(c.violations) == maxListed {
		return
	}
	s := fmt.Sprintf("%v: %s", e, fmt.Sprintf(format, args...))
	if c.name != "" {
		s = c.name + " " + s
	}
	c.violations = append(c.violations, s)
}

// Observe checks e against the events seen so far.
func (c *Checker) Observe(e election.Event) {
	// Vote events carry the request's term and pre-vote events a future
	// term; all others carry the node's current term.
	if e.Type != election.EventVoteGranted && e.Type != election.EventVoteDenied && !e.PreVote &&
		e.Type != election.EventIgnored {
		if e.Term < c.term[e.Node] {
			c.fail(e, "term went back from %d", c.term[e.Node])
		}
		c.term[e.Node] = e.Term
	}
	if e.Term > election.MaxTerm {
		c.fail(e, "term above MaxTerm")
	}
	resumed := e.Type == election.EventRoleChange && e.Role == election.Leader && e.Reason == election.ReasonResume
	switch {
	case e.Type == election.EventVoteGranted:
		if e.PreVote {
			return
		}
		k := voteKey{e.Node, e.Term}
		if prev, ok := c.voteOf[k]; ok && prev != e.Peer {
			c.fail(e, "second vote in term %d: first for %d, now for %d", e.Term, prev, e.Peer)
		}
		c.voteOf[k] = e.Peer
		if c.grants[e.Term] == nil {
			c.grants[e.Term] = make(map[election.ID]map[election.ID]bool)
		}
		if c.grants[e.Term][e.Peer] == nil {
			c.grants[e.Term][e.Peer] = make(map[election.ID]bool)
		}
		c.grants[e.Term][e.Peer][e.Node] = true
	case e.Type == election.EventLeaderElected:
		c.elected++
		if l, ok := c.leaders[e.Term]; ok && l != e.Node {
			c.fail(e, "two leaders in term %d: %d and %d", e.Term, l, e.Node)
		}
		c.setLeader(e.Term, e.Node)
		if got := len(c.grants[e.Term][e.Node]); got < c.quorum {
			c.fail(e, "leader with %d votes, quorum is %d", got, c.quorum)
		}
	case resumed:
		if l, ok := c.leaders[e.Term]; !ok || l != e.Node {
			c.fail(e, "resumed as leader of term %d, which it did not win", e.Term)
		}
	case e.Type == election.EventLeaderKnown:
		if l, ok := c.leaders[e.Term]; ok && l != e.Leader && !c.ForgedLeaders {
			c.fail(e, "follows %d but %d leads term %d", e.Leader, l, e.Term)
		}
	}
}

// SetLeader records that id leads term without an election the events
// show, as a group bootstrapped with a leader starts.
func (c *Checker) SetLeader(term uint64, id election.ID) { c.setLeader(term, id) }

func (c *Checker) setLeader(term uint64, id election.ID) {
	c.leaders[term] = id
	if term >= c.topTerm {
		c.topTerm, c.topLeader = term, id
	}
}

// VoteOf returns the node node voted for in term, if it voted.
func (c *Checker) VoteOf(node election.ID, term uint64) (election.ID, bool) {
	v, ok := c.voteOf[voteKey{node, term}]
	return v, ok
}

// Elected returns the number of EventLeaderElected events seen.
func (c *Checker) Elected() int { return c.elected }

// Err returns nil if no event broke a property, else an error listing the
// first violations.
func (c *Checker) Err() error {
	if c.failures == 0 {
		return nil
	}
	return fmt.Errorf("%d safety violations:\n%s", c.failures, strings.Join(c.violations, "\n"))
}

// Crashed tells the checker that node crashed with hs as its durable
// HardState: a deferred node (election.NewDeferredNode) forgets on a crash
// the terms and votes it had not made durable, and, since it sent nothing
// that depended on them, no other node saw them. The checker forgets them
// too: the node's term goes back to hs.Term, and its votes in later terms
// (or another vote in hs.Term) no longer count.
func (c *Checker) Crashed(node election.ID, hs election.HardState) {
	if c.term[node] > hs.Term {
		c.term[node] = hs.Term
	}
	for k, cand := range c.voteOf {
		if k.node != node || k.term < hs.Term || (k.term == hs.Term && cand == hs.Vote) {
			continue
		}
		delete(c.voteOf, k)
		delete(c.grants[k.term][cand], node)
	}
}
