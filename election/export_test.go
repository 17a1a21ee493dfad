package election

import "time"

// TimerDeadlines returns the pending deadlines of the node's election and
// vote timers (ok false: not pending), for tests of the timer semantics.
func (n *Node) TimerDeadlines() (election time.Duration, electionOK bool, vote time.Duration, voteOK bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	election, electionOK = n.electionT.Deadline()
	vote, voteOK = n.voteT.Deadline()
	return
}
