// Package electiontest holds test support that the tests of several
// packages share: Checker, which verifies Raft's election safety from the
// events of every node of a group (one leader per term, one vote per node
// per term, terms never decrease nor exceed election.MaxTerm, a leader
// elected by a majority), Groups, which runs one Checker per group of a
// multi-group host, and helpers for datadriven scenario files.
//
// It is an ordinary package so that the tests of election, multiraft and
// the engines can import it; nothing but tests should.
package electiontest
