package electiontest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

func vote(node, cand election.ID, term uint64) election.Event {
	return election.Event{Type: election.EventVoteGranted, Node: node, Peer: cand, Term: term}
}

func elected(node election.ID, term uint64) election.Event {
	return election.Event{Type: election.EventLeaderElected, Node: node, Term: term, Role: election.Leader, Leader: node}
}

// TestCheckerAcceptsAnElection: a majority-elected leader and its
// followers break nothing.
func TestCheckerAcceptsAnElection(t *testing.T) {
	c := NewChecker(3)
	for _, e := range []election.Event{
		{Type: election.EventTermChange, Node: 1, Term: 1},
		vote(1, 1, 1), vote(2, 1, 1),
		{Type: election.EventVoteGranted, Node: 3, Peer: 2, Term: 2, PreVote: true}, // pre-votes bind nothing
		elected(1, 1),
		{Type: election.EventLeaderKnown, Node: 2, Term: 1, Leader: 1},
		{Type: election.EventRoleChange, Node: 1, Term: 1, Role: election.Leader, Reason: election.ReasonResume},
	} {
		c.Observe(e)
	}
	require.NoError(t, c.Err())
	require.Equal(t, 1, c.Elected())
	v, ok := c.VoteOf(2, 1)
	require.True(t, ok)
	require.Equal(t, election.ID(1), v)
}

// TestCheckerFindsViolations: each broken property is reported.
func TestCheckerFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []election.Event
		want   string
	}{
		{"two votes", []election.Event{vote(1, 1, 2), vote(1, 2, 2)}, "second vote in term 2"},
		{"two leaders", []election.Event{vote(1, 1, 1), vote(2, 1, 1), vote(2, 3, 1), vote(3, 3, 1), elected(1, 1), elected(3, 1)}, "two leaders in term 1"},
		{"minority", []election.Event{vote(1, 1, 1), elected(1, 1)}, "leader with 1 votes, quorum is 2"},
		{"term back", []election.Event{{Type: election.EventTermChange, Node: 1, Term: 3}, {Type: election.EventStepDown, Node: 1, Term: 2}}, "term went back from 3"},
		{"wrong leader", []election.Event{vote(1, 1, 1), vote(2, 1, 1), elected(1, 1), {Type: election.EventLeaderKnown, Node: 3, Term: 1, Leader: 2}}, "follows 2 but 1 leads term 1"},
		{"resume unwon", []election.Event{{Type: election.EventRoleChange, Node: 2, Term: 4, Role: election.Leader, Reason: election.ReasonResume}}, "did not win"},
		{"max term", []election.Event{{Type: election.EventTermChange, Node: 1, Term: election.MaxTerm + 1}}, "term above MaxTerm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(3)
			for _, e := range tc.events {
				c.Observe(e)
			}
			require.ErrorContains(t, c.Err(), tc.want)
		})
	}
}

// TestCheckerForgedLeaders: ForgedLeaders turns off the follower check
// only.
func TestCheckerForgedLeaders(t *testing.T) {
	c := NewChecker(0)
	c.ForgedLeaders = true
	c.Observe(elected(1, 1))
	c.Observe(election.Event{Type: election.EventLeaderKnown, Node: 3, Term: 1, Leader: 2})
	require.NoError(t, c.Err(), "voters 0: no majority check; forged leaders: no follower check")
	c.Observe(elected(2, 1))
	require.ErrorContains(t, c.Err(), "two leaders")
}

// TestGroups: groups are checked apart, and errors name their group.
func TestGroups(t *testing.T) {
	g := NewGroups(func(int) int { return 3 })
	g.Group(7).SetLeader(1, 2)
	g.Observe(5, elected(1, 1)) // group 5 has no votes: minority
	g.Observe(7, election.Event{Type: election.EventLeaderKnown, Node: 1, Term: 1, Leader: 2})
	err := g.Err()
	require.ErrorContains(t, err, "g5 ")
	require.NotContains(t, err.Error(), "g7 ")
	g.Observe(7, election.Event{Type: election.EventLeaderKnown, Node: 3, Term: 1, Leader: 1})
	require.ErrorContains(t, g.Err(), "g7 ")
}

// TestCheckerLeases: a lease in term t is a violation while another node
// leads a later term, seen in the views or elected earlier.
func TestCheckerLeases(t *testing.T) {
	type lv = LeaseView
	for _, tc := range []struct {
		name    string
		elected []election.Event // observed before the views
		views   []LeaseView
		want    string // "" for no violation
	}{
		{"lease alone", nil, []lv{{ID: 1, Term: 1, Leader: true, Lease: true}, {ID: 2, Term: 1}, {ID: 3, Term: 1}}, ""},
		{"old leader without lease", nil, []lv{{ID: 1, Term: 1, Leader: true}, {ID: 2, Term: 2, Leader: true}}, ""},
		{"lease and an older leader", nil, []lv{{ID: 1, Term: 1, Leader: true}, {ID: 2, Term: 2, Leader: true, Lease: true}}, ""},
		{"newer leader in view", nil, []lv{{ID: 1, Term: 1, Leader: true, Lease: true}, {ID: 2, Term: 2, Leader: true}, {ID: 3, Term: 2}},
			"lease: n1 (term 1) holds a lease while n2 leads term 2"},
		{"newer leader elected", []election.Event{vote(2, 2, 3), vote(3, 2, 3), elected(2, 3)},
			[]lv{{ID: 1, Term: 1, Leader: true, Lease: true}, {ID: 2, Term: 3}, {ID: 3, Term: 3}},
			"lease: n1 (term 1) holds a lease while n2 was elected leader of term 3"},
		{"lease of a follower", nil, []lv{{ID: 1, Term: 1, Lease: true}}, "lease: n1 (term 1) holds a lease but is not leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChecker(3)
			for _, e := range tc.elected {
				c.Observe(e)
			}
			require.NoError(t, c.Err())
			c.Leases(tc.views)
			if tc.want == "" {
				require.NoError(t, c.Err())
			} else {
				require.ErrorContains(t, c.Err(), tc.want)
			}
		})
	}
}

// TestGroupsLeases: a group's lease violation names the group.
func TestGroupsLeases(t *testing.T) {
	g := NewGroups(func(string) int { return 3 })
	g.Leases("a", []LeaseView{{ID: 1, Term: 1, Leader: true, Lease: true}, {ID: 2, Term: 1}})
	g.Leases("b", []LeaseView{{ID: 1, Term: 4, Leader: true}})
	require.NoError(t, g.Err())
	g.Leases("b", []LeaseView{{ID: 1, Term: 4, Leader: true}, {ID: 3, Term: 3, Leader: true, Lease: true}})
	require.ErrorContains(t, g.Err(), "gb lease: n3 (term 3) holds a lease while n1 leads term 4")
}
