package multiraft_test

import (
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// reentryHosts returns n hosts (IDs 1..n) on one virtual wheel sending
// through tr, each with group 1 of all n voters and obs as Observer.
func reentryHosts(t *testing.T, n int, tr func(hosts []*multiraft.Host) multiraft.Transport,
	obs func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event)) []*multiraft.Host {
	v := newTestWheel(t)
	hosts := make([]*multiraft.Host, n)
	var voters []election.ID
	for i := range n {
		voters = append(voters, election.ID(i+1))
	}
	for i := range n {
		cfg := multiraft.DefaultConfig()
		cfg.ID = election.ID(i + 1)
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		if obs != nil {
			cfg.Observer = obs(hosts)
		}
		h, err := multiraft.NewHost(cfg, v.Wheel, tr(hosts))
		require.NoError(t, err)
		t.Cleanup(h.Stop)
		hosts[i] = h
	}
	for i := range n {
		require.NoError(t, hosts[i].AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters, Storage: election.NewMemoryStorage()}))
	}
	return hosts
}

func dropAll([]*multiraft.Host) multiraft.Transport {
	return multiraft.TransportFunc(func(multiraft.Batch) {})
}

// TestObserverCallsHost: an Observer that calls its Host from an event
// raised inside a Host method gets ErrReentrant (or, from Step, a panic
// with it) instead of waiting forever for the host's lock, and the host
// works on afterwards.
func TestObserverCallsHost(t *testing.T) {
	var errs []error
	hosts := reentryHosts(t, 1, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(g multiraft.GroupID, e election.Event) {
			_, err := hosts[0].Status(g)
			errs = append(errs, err)
		}
	})
	h := hosts[0]
	errs = nil
	require.NoError(t, h.Campaign(1)) // a one-voter group: elected at once
	require.NotEmpty(t, errs)
	for _, err := range errs {
		require.ErrorIs(t, err, multiraft.ErrReentrant)
	}
	st, err := h.Status(1)
	require.NoError(t, err)
	require.True(t, st.Lease || st.Status.Role == election.Leader)

	armed := false
	stepper := reentryHosts(t, 1, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(multiraft.GroupID, election.Event) {
			if armed {
				hosts[0].Step(multiraft.Batch{From: 2, To: 1})
			}
		}
	})[0]
	armed = true
	require.PanicsWithError(t, multiraft.ErrReentrant.Error(), func() { _ = stepper.Campaign(1) })
	_, err = stepper.Status(1)
	require.NoError(t, err, "the host's lock was released by the panic")
}

// TestSynchronousTransport: a Transport that delivers into the receiving
// Host on the sender's goroutine comes back to the sender while it holds
// its lock (a vote request answered at once); Step panics with
// ErrReentrant instead of hanging, and both hosts stay usable.
func TestSynchronousTransport(t *testing.T) {
	hosts := reentryHosts(t, 2, func(hosts []*multiraft.Host) multiraft.Transport {
		return multiraft.TransportFunc(func(b multiraft.Batch) { hosts[b.To-1].Step(b) })
	}, nil)
	require.PanicsWithError(t, multiraft.ErrReentrant.Error(), func() { _ = hosts[0].Campaign(1) })
	done := make(chan struct{})
	go func() { // a hang would show as the test's timeout, not a wrong answer
		defer close(done)
		for _, h := range hosts {
			_, err := h.Status(1)
			require.NoError(t, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a host's lock stayed held after the panic")
	}
}

// TestObserverAddsGroupFromHeartbeat: a heartbeat of an awake group is
// stepped without the host's lock; an Observer that adds a group from the
// events it raises (a higher term) must not wait for the group index's
// read lock its own Step holds. It used to hang.
func TestObserverAddsGroupFromHeartbeat(t *testing.T) {
	armed := false
	var addErr error
	added := false
	hosts := reentryHosts(t, 2, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(multiraft.GroupID, election.Event) {
			if armed && !added {
				added = true
				addErr = hosts[0].AddGroup(multiraft.GroupConfig{ID: 2, Voters: []election.ID{1, 2}, Storage: election.NewMemoryStorage()})
			}
		}
	})
	armed = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		hosts[0].Step(multiraft.Batch{From: 2, To: 1, Heartbeats: []multiraft.Heartbeat{{Group: 1, Term: 5}}})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a timing assertion
		t.Fatal("Step did not return: the Observer's AddGroup waited for Step's lock")
	}
	require.True(t, added, "the heartbeat raised an event")
	require.NoError(t, addErr)
	st, err := hosts[0].Status(2)
	require.NoError(t, err)
	require.Equal(t, multiraft.GroupID(2), st.Group)
}
