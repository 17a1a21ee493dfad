package election

import (
	"os"
	"time"
)

// TimerDeadlines returns the pending deadlines of the node's election and
// vote timers (ok false: not pending), for tests of the timer semantics.
func (n *Node) TimerDeadlines() (election time.Duration, electionOK bool, vote time.Duration, voteOK bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	election, electionOK = n.electionT.Deadline()
	vote, voteOK = n.voteT.Deadline()
	return
}

// SetTryHeartbeatHook sets the function TryHeartbeat runs between its
// first load of the gate and its record of the contact, for a test, and
// returns the function that clears it.
func SetTryHeartbeatHook(f func()) (restore func()) {
	tryHeartbeatHook = f
	return func() { tryHeartbeatHook = nil }
}

// SetSyncDir replaces FileStorage's directory sync for a test and returns
// the function that restores it.
func SetSyncDir(f func(dir string) error) (restore func()) {
	old := syncDir
	syncDir = f
	return func() { syncDir = old }
}

// SetSyncFile replaces FileStorage's file sync for a test and returns
// the function that restores it.
func SetSyncFile(f func(*os.File) error) (restore func()) {
	old := syncFile
	syncFile = f
	return func() { syncFile = old }
}

// HeartbeatTimers returns how many heartbeat timers the node has.
func (n *Node) HeartbeatTimers() int {
	k := len(n.peerHeartbeatT)
	if n.heartbeatT != nil {
		k++
	}
	return k
}

// HeartbeatReArm reports whether a heartbeat would re-arm the election
// timer by Reset (true) rather than Restart now.
func (n *Node) HeartbeatReArm() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.detection == ResetOnHeartbeat && n.fastReset && n.electionOn && n.electionFresh
}
