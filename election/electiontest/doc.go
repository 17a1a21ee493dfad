// Package electiontest verifies Raft's election safety from the events of
// the nodes of a group: Checker holds one leader per term, one vote per
// node per term, terms that never decrease nor exceed election.MaxTerm,
// and a leader elected by a majority, and from the nodes' views
// (LeaseView) no leader lease held in a term below another leader's;
// Groups runs one Checker per group of a multi-group host.
//
// It is plain code (it imports neither testing nor a test framework), so
// that the tests of election and multiraft, the fuzzers and the simulator
// share one checker, as etcd has rafttest and Go net/http/httptest.
package electiontest
