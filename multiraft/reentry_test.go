package multiraft_test

import (
	"testing"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// reentryHosts returns n hosts (IDs 1..n) on one virtual wheel sending
// through tr, each with group 1 of all n voters and obs as Observer.
func reentryHosts(t *testing.T, n int, tr func(hosts []*multiraft.Host) multiraft.Transport,
	obs func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event)) ([]*multiraft.Host, *testWheel) {
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
		require.NoError(t, hosts[i].AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters}))
	}
	return hosts, v
}

func dropAll([]*multiraft.Host) multiraft.Transport {
	return multiraft.TransportFunc(func(multiraft.Batch) {})
}

// TestObserverCallsHost: an Observer may call every method of its Host
// from any event, the ones raised inside a Host method included: no
// call-out runs under the host's lock.
func TestObserverCallsHost(t *testing.T) {
	var errs []error
	calls := 0
	hosts, v := reentryHosts(t, 1, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(g multiraft.GroupID, e election.Event) {
			h := hosts[0]
			if h == nil || calls > 50 {
				return
			}
			calls++
			_, err := h.Status(g)
			errs = append(errs, err)
			errs = append(errs, h.Touch(g))
			_ = h.Stats()
			h.Step(multiraft.Batch{From: 2, To: 1})
			if e.Type == election.EventLeaderElected && g == 1 {
				errs = append(errs, h.AddGroup(multiraft.GroupConfig{ID: 2, Voters: []election.ID{1}}))
				errs = append(errs, h.Campaign(2))
				errs = append(errs, h.TransferLeadership(2, 1))
			}
		}
	})
	h := hosts[0]
	errs = nil
	require.NoError(t, h.Campaign(1)) // a one-voter group: elected once its vote is durable
	v.AdvanceBy(10 * 1e6)
	require.NotZero(t, calls)
	for _, err := range errs {
		require.NoError(t, err)
	}
	for _, g := range []multiraft.GroupID{1, 2} {
		st, err := h.Status(g)
		require.NoError(t, err)
		require.Equal(t, election.Leader, st.Status.Role, "group %d", g)
	}
	// Stop from an Observer.
	hosts[0] = nil
	stopper, v2 := reentryHosts(t, 1, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(_ multiraft.GroupID, e election.Event) {
			if e.Type == election.EventLeaderElected {
				hosts[0].Stop()
			}
		}
	})
	require.NoError(t, stopper[0].Campaign(1))
	v2.AdvanceBy(10 * 1e6)
	require.ErrorIs(t, stopper[0].Campaign(1), multiraft.ErrStopped)
}

// TestSynchronousTransport: a Transport that delivers into the receiving
// Host on the sender's goroutine; the groups elect their leaders and every
// host stays usable.
func TestSynchronousTransport(t *testing.T) {
	hosts, v := reentryHosts(t, 3, func(hosts []*multiraft.Host) multiraft.Transport {
		return multiraft.TransportFunc(func(b multiraft.Batch) { hosts[b.To-1].Step(b) })
	}, nil)
	require.NoError(t, hosts[0].Campaign(1))
	v.AdvanceBy(3e9)
	st, err := hosts[0].Status(1)
	require.NoError(t, err)
	require.Equal(t, election.Leader, st.Status.Role)
	for _, h := range hosts[1:] {
		st, err := h.Status(1)
		require.NoError(t, err)
		require.Equal(t, election.ID(1), st.Status.Leader)
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
	hosts, _ := reentryHosts(t, 2, dropAll, func(hosts []*multiraft.Host) func(multiraft.GroupID, election.Event) {
		return func(multiraft.GroupID, election.Event) {
			if armed && !added {
				added = true
				addErr = hosts[0].AddGroup(multiraft.GroupConfig{ID: 2, Voters: []election.ID{1, 2}})
			}
		}
	})
	armed = true
	hosts[0].Step(multiraft.Batch{From: 2, To: 1, Heartbeats: []multiraft.Heartbeat{{Group: 1, Term: 5}}})
	require.True(t, added, "the heartbeat raised an event")
	require.NoError(t, addErr)
	st, err := hosts[0].Status(2)
	require.NoError(t, err)
	require.Equal(t, multiraft.GroupID(2), st.Group)
}
