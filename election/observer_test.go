package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// soloConfig is a one-voter group (it elects itself at its first timeout)
// with a short election timeout, for real-time tests.
func soloConfig() election.Config {
	c := election.DefaultConfig()
	c.Logger = hclog.NewNullLogger() // quiet tests: warnings go to stderr by default
	c.ID, c.Voters = 1, []election.ID{1}
	c.ElectionTimeout = 5 * time.Millisecond
	return c
}

func newSolo(t *testing.T, w *wheel.Wheel, c election.Config) *election.Node {
	t.Helper()
	n, err := election.NewNode(c, w, election.TransportFunc(func(election.Message) {}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	t.Cleanup(n.Stop)
	return n
}

// TestBlockingObserverNeverStallsTheWheel runs two groups on one real-time
// wheel. Group A has a blocking Observer on an unbuffered channel that
// nobody reads until the end, and a non-blocking one that nobody reads at
// all. A's Start must return, and group B, on the same wheel, must still
// elect its leader: A's observers never hold the wheel's driver. (With
// Config.Observer doing "ch <- e", Start deadlocked and every timer on the
// wheel stalled.) Afterwards the blocking observer delivers all of A's
// events in order, and the non-blocking one has counted its drops.
func TestBlockingObserverNeverStallsTheWheel(t *testing.T) {
	w, err := wheel.New(wheel.DefaultConfig())
	require.NoError(t, err)
	defer w.Stop()

	a := newSolo(t, w, soloConfig())
	blockingCh := make(chan election.Event)
	blocking := election.NewObserver(blockingCh, true, nil)
	lossy := election.NewObserver(make(chan election.Event), false, nil)
	a.RegisterObserver(blocking)
	a.RegisterObserver(blocking) // twice: no effect
	a.RegisterObserver(lossy)
	started := make(chan error, 1)
	go func() { started <- a.Start() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case err := <-started:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("Start of the group with a blocking observer did not return")
	}
	_, err = a.WaitLeader(ctx)
	require.NoError(t, err, "group A elects itself although nobody reads its observer")

	b := newSolo(t, w, soloConfig())
	leaderB := b.LeaderCh()
	require.NoError(t, b.Start())
	id, err := b.WaitLeader(ctx)
	require.NoError(t, err, "group B on the same wheel is not stalled by A's observer")
	require.Equal(t, election.ID(1), id)
	select {
	case v := <-leaderB:
		require.True(t, v)
	case <-ctx.Done():
		t.Fatal("LeaderCh did not report B's leadership")
	}
	fired := make(chan struct{})
	_, err = w.AfterFunc(time.Millisecond, func() { close(fired) })
	require.NoError(t, err)
	select {
	case <-fired:
	case <-ctx.Done():
		t.Fatal("a plain timer on the wheel did not fire")
	}

	// Now read A's blocking observer: every event up to leadership, in
	// order, none dropped.
	var seq uint64
	for {
		var e election.Event
		select {
		case e = <-blockingCh:
		case <-ctx.Done():
			t.Fatal("the blocking observer did not deliver A's events")
		}
		require.Equal(t, seq+1, e.Seq, "in order, none missing: %v", e)
		seq = e.Seq
		if e.Type == election.EventLeaderElected {
			break
		}
	}
	require.Zero(t, blocking.Dropped())
	require.GreaterOrEqual(t, blocking.Observed(), int64(seq))
	require.Equal(t, lossy.Observed(), lossy.Dropped(), "nobody reads the lossy observer: every event dropped and counted")
	require.GreaterOrEqual(t, lossy.Dropped(), int64(seq))

	// Deregistering ends delivery; a second Deregister does nothing.
	a.DeregisterObserver(blocking)
	a.DeregisterObserver(blocking)
	a.DeregisterObserver(lossy)
}

// TestObserverFilterAndDeregister on a virtual wheel: the filter selects
// events, a deregistered observer gets nothing more, and a blocking
// observer deregistered with events still queued discards and counts them.
func TestObserverFilterAndDeregister(t *testing.T) {
	v := newVirtual(t)
	defer v.Stop()
	c := soloConfig()
	n := newSolo(t, v.Wheel, c)
	leaders := make(chan election.Event, 10)
	only := election.NewObserver(leaders, false, func(e election.Event) bool { return e.Type == election.EventLeaderElected })
	stuck := election.NewObserver(make(chan election.Event), true, nil)
	counter := election.NewObserver(nil, false, nil)
	n.RegisterObserver(only)
	n.RegisterObserver(stuck)
	n.RegisterObserver(counter)
	n.RegisterObserver(nil)
	require.NoError(t, n.Start())
	v.AdvanceTo(time.Second)
	require.Len(t, leaders, 1)
	e := <-leaders
	require.Equal(t, election.EventLeaderElected, e.Type)
	require.EqualValues(t, 1, only.Observed())
	require.Zero(t, only.Dropped())
	require.Positive(t, counter.Observed(), "an observer without a channel only counts")

	n.DeregisterObserver(only)
	n.DeregisterObserver(stuck)
	n.DeregisterObserver(counter)
	require.NoError(t, n.ObserveTerm(5, election.None)) // a step-down: more events
	require.Empty(t, leaders, "a deregistered observer gets nothing")
	require.Eventually(t, func() bool { return stuck.Dropped() == stuck.Observed() }, 10*time.Second, time.Millisecond,
		"a blocking observer deregistered from its last node discards what it held")
}

// TestLeaderChLatestValueWins: LeaderCh holds one value, the latest.
func TestLeaderChLatestValueWins(t *testing.T) {
	v := newVirtual(t)
	defer v.Stop()
	n := newSolo(t, v.Wheel, soloConfig())
	ch := n.LeaderCh()
	require.Equal(t, ch, n.LeaderCh(), "always the same channel")
	require.NoError(t, n.Start())
	v.AdvanceTo(time.Second)
	require.Equal(t, election.Leader, n.Status().Role)
	// Became leader, then lost it, and nobody read in between: only the
	// latest value, false, is there.
	require.NoError(t, n.ObserveTerm(n.Status().Term+1, election.None))
	require.Len(t, ch, 1)
	require.False(t, <-ch)
	v.AdvanceTo(2 * time.Second) // leader again
	require.Equal(t, election.Leader, n.Status().Role)
	require.True(t, <-ch)
	n.Stop()
	require.False(t, <-ch, "Stop ends leadership")
	require.Empty(t, ch)

	// A node that is leader when LeaderCh is first called finds true.
	v2 := newVirtual(t)
	defer v2.Stop()
	m := newSolo(t, v2.Wheel, soloConfig())
	require.NoError(t, m.Start())
	v2.AdvanceTo(time.Second)
	require.True(t, <-m.LeaderCh())
}

// TestWaitLeader: it returns the leader once known, ctx.Err() when the
// context ends first, and ErrStopped when the node stops.
func TestWaitLeader(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 3, delay: time.Millisecond, seed: 3})
	c.startAll(t)
	got := make(chan election.ID, 3)
	for _, id := range c.ids {
		n := c.nodes[id]
		go func() {
			l, err := n.WaitLeader(context.Background())
			if err != nil {
				l = 0
			}
			got <- l
		}()
	}
	// Let the waiters block before any leader exists; with or without the
	// wait, each must return the leader.
	require.True(t, c.runUntil(10*time.Second, func() bool { _, ok := c.stableLeader(); return ok }))
	leader, _ := c.stableLeader()
	for range c.ids {
		select {
		case l := <-got:
			require.Equal(t, leader, l)
		case <-time.After(30 * time.Second):
			t.Fatal("WaitLeader did not return")
		}
	}

	v := newVirtual(t)
	defer v.Stop()
	n := newSolo(t, v.Wheel, soloConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := n.WaitLeader(ctx)
	require.ErrorIs(t, err, context.Canceled)
	done := make(chan error, 1)
	go func() { _, err := n.WaitLeader(context.Background()); done <- err }()
	n.Stop()
	require.ErrorIs(t, <-done, election.ErrStopped)
	_, err = n.WaitLeader(context.Background())
	require.ErrorIs(t, err, election.ErrStopped)
}

// TestWaitLeaderOther is issue 35: right after the leader crashed,
// WaitLeader returns the dead leader (the followers still know it);
// WaitLeaderOther waits for a leader other than it.
func TestWaitLeaderOther(t *testing.T) {
	c := newCluster(t, clusterOpts{n: 3, delay: time.Millisecond, seed: 3})
	c.startAll(t)
	require.True(t, c.runUntil(10*time.Second, func() bool { _, ok := c.stableLeader(); return ok }))
	old, _ := c.stableLeader()
	c.crash(old)
	var survivor *election.Node
	for _, id := range c.ids {
		if id != old {
			survivor = c.nodes[id]
		}
	}
	l, err := survivor.WaitLeader(context.Background())
	require.NoError(t, err)
	require.Equal(t, old, l, "WaitLeader returns the leader the follower still knows")

	got := make(chan election.ID, 1)
	go func() {
		l, err := survivor.WaitLeaderOther(context.Background(), old)
		if err != nil {
			l = election.None
		}
		got <- l
	}()
	require.True(t, c.runUntil(c.v.Now()+10*time.Second, func() bool { l, ok := c.stableLeader(); return ok && l != old }))
	next, _ := c.stableLeader()
	select {
	case l := <-got:
		require.Equal(t, next, l)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitLeaderOther did not return")
	}
	l, err = survivor.WaitLeaderOther(context.Background(), election.None)
	require.NoError(t, err)
	require.Equal(t, next, l, "None: any leader")
}

func TestEventsOrderAndSeq(t *testing.T) {
	v := newVirtual(t)
	var events []election.Event
	var eventsAtSend []int
	cfg := validConfig()
	cfg.Voters = []election.ID{1, 2}
	cfg.PreVote = false
	cfg.Observer = func(e election.Event) { events = append(events, e) }
	n, err := election.NewNode(cfg, v.Wheel, election.TransportFunc(func(m election.Message) {
		eventsAtSend = append(eventsAtSend, len(events))
	}), election.NewMemoryStorage(), election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n.Start())
	require.NoError(t, n.Campaign())
	n.Step(election.Message{Type: election.MsgVoteResp, From: 2, To: 1, Term: 1, Granted: true})
	require.Equal(t, election.Leader, n.Status().Role)
	for i, e := range events {
		require.Equal(t, uint64(i+1), e.Seq)
		require.Equal(t, election.ID(1), e.Node)
	}
	var types []election.EventType
	for _, e := range events {
		types = append(types, e.Type)
	}
	require.Equal(t, []election.EventType{
		election.EventRoleChange,    // start
		election.EventTermChange,    // term 1
		election.EventRoleChange,    // candidate
		election.EventElectionStart, // campaign
		election.EventVoteGranted,   // self
		election.EventRoleChange,    // leader
		election.EventLeaderElected,
	}, types)
	// Events of a step reach the observer before its messages reach the transport.
	require.Equal(t, []int{5, 7}, eventsAtSend)
}
