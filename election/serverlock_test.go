package election_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// fakeLock is a ServerLock that is busy while busy is set: it keeps the
// deferred timers for the test to run, and reports a fixed term delay.
type fakeLock struct {
	busy     bool
	deferred []func()
	termIn   time.Duration
}

func (sl *fakeLock) DeferTimer(run func()) bool {
	if sl.busy {
		sl.deferred = append(sl.deferred, run)
	}
	return sl.busy
}

func (sl *fakeLock) TermDurableIn() time.Duration { return sl.termIn }

// release ends the busy period and runs what was deferred.
func (sl *fakeLock) release() {
	sl.busy = false
	runs := sl.deferred
	sl.deferred = nil
	for _, r := range runs {
		r()
	}
}

func lockProbe(t *testing.T, sl *fakeLock, keep bool) *probe {
	return newProbe(t, func(c *election.Config) {
		c.ElectionJitter = repeated.None() // every timeout is exactly et
		c.Emulate.WaitForVoteTimeout = true
		c.Emulate.KeepTimerOnStepDown = keep
		c.Emulate.ServerLock = sl
	}).start(t)
}

func TestServerLockDefersADueTimerUntilReleased(t *testing.T) {
	sl := &fakeLock{busy: true}
	p := lockProbe(t, sl, false)
	p.v.AdvanceTo(et)
	require.Equal(t, election.Follower, p.n.Status().Role, "due while the server is busy: deferred")
	require.Len(t, sl.deferred, 1)
	p.v.AdvanceTo(et + 5*time.Millisecond)
	sl.release()
	require.Equal(t, election.Candidate, p.n.Status().Role, "acts when released")
	// The round counts from the release: the next round starts et later.
	at := p.runToElection2At(t)
	require.Equal(t, 2*et+5*time.Millisecond, at)
}

// runToElection2At advances until node 1 starts its next round and
// returns when.
func (p *probe) runToElection2At(t *testing.T) time.Duration {
	t.Helper()
	start := p.n.Stats().Elections
	for p.n.Stats().Elections == start {
		require.NotZero(t, p.v.AdvanceToNext(), "wheel idle")
	}
	return p.v.Now()
}

func TestServerLockDeferredTimerVoidedByEarlierHeartbeat(t *testing.T) {
	sl := &fakeLock{busy: true}
	p := lockProbe(t, sl, false)
	p.v.AdvanceTo(et)
	require.Len(t, sl.deferred, 1)
	// A heartbeat that reached the server before the deadline is handled
	// first, and re-arms the timer: the expiry is void.
	p.v.AdvanceTo(et + 3*time.Millisecond)
	sl.busy = false
	p.n.Step(election.Message{Type: election.MsgHeartbeat, From: 2, To: 1, Term: 1})
	sl.release()
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.Equal(t, election.ID(2), p.n.Status().Leader)
	p.v.AdvanceTo(2*et + 2*time.Millisecond)
	require.Equal(t, election.Follower, p.n.Status().Role, "timer counts from the heartbeat")
	p.v.AdvanceTo(2*et + 3*time.Millisecond)
	require.Equal(t, election.Candidate, p.n.Status().Role)
}

func TestServerLockDeferredVoteTimerKeptOnStepDown(t *testing.T) {
	sl := &fakeLock{}
	p := lockProbe(t, sl, true)
	p.v.AdvanceTo(et)
	require.Equal(t, election.Candidate, p.n.Status().Role)
	sl.busy = true
	p.v.AdvanceTo(2 * et) // the round's deadline, deferred
	require.Len(t, sl.deferred, 1)
	require.Equal(t, uint64(1), p.n.Status().Term)
	// A higher term reaches the candidate before its deferred timer runs:
	// it steps down and keeps the round's (past) deadline, so its
	// follower timer fires at once; the deferred round is dropped.
	sl.busy = false
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5, LastLogIndex: 0})
	require.Equal(t, election.Follower, p.n.Status().Role)
	sl.release()
	require.Equal(t, uint64(5), p.n.Status().Term, "the deferred round of term 1 is void")
	p.v.AdvanceTo(2*et + time.Millisecond)
	require.Equal(t, election.Follower, p.n.Status().Role, "granted the vote: a fresh timeout")
	// Not granted (log behind): the kept deadline fires at once.
	sl2 := &fakeLock{}
	p2 := lockProbe(t, sl2, true)
	p2.log.index, p2.log.term = 5, 1
	p2.v.AdvanceTo(et)
	sl2.busy = true
	p2.v.AdvanceTo(2 * et)
	sl2.busy = false
	p2.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 5})
	require.Equal(t, election.Follower, p2.n.Status().Role)
	sl2.release()
	p2.v.AdvanceTo(2*et + time.Microsecond)
	require.Equal(t, election.Candidate, p2.n.Status().Role, "the kept deadline was already due")
	require.Equal(t, uint64(6), p2.n.Status().Term)
}

func TestServerLockGrantAtNewTermRearmsAfterTermWrite(t *testing.T) {
	for _, keep := range []bool{false, true} { // with KeepTimerOnStepDown too
		sl := &fakeLock{termIn: 4 * time.Millisecond}
		p := lockProbe(t, sl, keep)
		p.v.AdvanceTo(et / 2)
		p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 3})
		require.Equal(t, election.ID(2), p.n.Status().Vote)
		at := p.runToElection2At(t)
		require.Equal(t, et/2+4*time.Millisecond+et, at, "timeout counts from the end of the term write (keep %v)", keep)
	}
	// A grant in the current term (no term write) re-arms from now.
	sl2 := &fakeLock{termIn: 4 * time.Millisecond}
	p2 := lockProbe(t, sl2, false)
	p2.log.index, p2.log.term = 1, 1
	p2.n.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 3}) // log behind: term only
	require.Equal(t, election.None, p2.n.Status().Vote)
	p2.v.AdvanceTo(et / 2)
	p2.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 3, LastLogIndex: 1, LastLogTerm: 1})
	require.Equal(t, election.ID(2), p2.n.Status().Vote)
	require.Equal(t, et/2+et, p2.runToElection2At(t))
}

// TestServerLockDeferredTimerOfPreCandidateRunsOn: a pre-candidate's due
// election timer, deferred by the server lock and then run while nothing
// may start (here the host lags), is re-armed as a follower's is; it used
// to be left unarmed, and the pre-candidate never ran another round.
func TestServerLockDeferredTimerOfPreCandidateRunsOn(t *testing.T) {
	sl := &fakeLock{}
	lagging := false
	p := newProbe(t, func(c *election.Config) {
		c.ElectionJitter = repeated.None()
		c.PreVote = true
		c.Emulate.ServerLock = sl
		c.Lagging = func(election.Silence) bool { return lagging }
	}).start(t)
	require.NoError(t, p.n.Campaign())
	require.Equal(t, election.PreCandidate, p.n.Status().Role)
	rounds := p.n.Stats().PreVotes
	sl.busy = true
	p.v.AdvanceTo(p.v.Now() + et)
	require.Len(t, sl.deferred, 1, "the pre-candidate's timer came due while the server was busy")
	lagging = true
	sl.release()
	lagging = false
	p.v.AdvanceTo(p.v.Now() + 2*et)
	require.Greater(t, p.n.Stats().PreVotes, rounds, "the timer ran on and started another round")
}
