package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestDurableEvents: events whose state was not durable when the process
// died are left out; a recovered state below a durable one is an error.
func TestDurableEvents(t *testing.T) {
	vote := func(term uint64, peer election.ID) record {
		return record{Group: 1, Type: election.EventVoteGranted.String(), Term: term, Peer: peer}
	}
	ev := func(typ election.EventType, term uint64) record {
		return record{Group: 1, Type: typ.String(), Term: term}
	}
	rec := func(typ string, term uint64, v election.ID) record {
		return record{Group: 1, Type: typ, Term: term, Leader: v}
	}
	recs := []record{
		rec(typeRecovered, 0, 0),
		rec(typeDurable, 1, 3),
		ev(election.EventTermChange, 1), // covered
		ev(election.EventTermChange, 2), // deferred, then durable below
		vote(2, 2),                      // covered by Durable(2, 2)
		rec(typeDurable, 2, 2),
		ev(election.EventTermChange, 3), // never durable: left out
		vote(3, 3),                      // never durable: left out
		rec(typeRecovered, 2, 2),        // restart: what was durable
		vote(3, 1),                      // a new life votes again in 3
		rec(typeDurable, 3, 1),
	}
	kept, errs := durableEvents(recs)
	require.Empty(t, errs)
	require.Equal(t, []record{recs[2], recs[3], recs[4], recs[9]}, kept)

	// A restart that lost a durable write.
	lost := []record{rec(typeRecovered, 0, 0), rec(typeDurable, 4, 2), rec(typeRecovered, 4, 3)}
	_, errs = durableEvents(lost)
	require.Len(t, errs, 1)
	lost[2] = rec(typeRecovered, 3, 2)
	_, errs = durableEvents(lost)
	require.Len(t, errs, 1)
}

// TestEventLogRoundTrip: what the log writes, readEvents reads back.
func TestEventLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	l, err := openEventLog(dir + "/e.jsonl")
	require.NoError(t, err)
	want := []record{
		{T: 1, Node: 2, Group: 3, Type: "VoteGranted", Term: 4, Peer: 5},
		{T: 6, Node: 7, Group: 8, Type: "RoleChange", Term: 9, Role: 3, Leader: 7, Reason: `resume "x"`},
		{T: 10, Node: 1, Group: 2, Type: typeRecovered, Term: 3, Leader: 1},
	}
	for _, r := range want {
		l.write(r)
	}
	require.NoError(t, l.close())
	var got []record
	data, err := os.ReadFile(dir + "/e.jsonl")
	require.NoError(t, err)
	require.NoError(t, readEvents(bytes.NewReader(data), func(r record) error { got = append(got, r); return nil }))
	require.Equal(t, want, got)
}
