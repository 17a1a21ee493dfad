package multiraft_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// flakyStore is a MemoryStore whose Save fails while fail is set, and
// blocks while gate is not nil (until it is closed).
type flakyStore struct {
	*multiraft.MemoryStore
	mu    sync.Mutex
	fail  bool
	gate  chan struct{}
	calls int
}

func (s *flakyStore) Save(states []multiraft.GroupState) error {
	s.mu.Lock()
	s.calls++
	fail, gate := s.fail, s.gate
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail {
		return errors.New("disk on fire")
	}
	return s.MemoryStore.Save(states)
}

func (s *flakyStore) set(fail bool, gate chan struct{}) {
	s.mu.Lock()
	s.fail, s.gate = fail, gate
	s.mu.Unlock()
}

// recorder is a Transport that keeps what it is given.
type recorder struct {
	mu   sync.Mutex
	sent []multiraft.Batch
}

func (r *recorder) Send(b multiraft.Batch) {
	r.mu.Lock()
	r.sent = append(r.sent, b)
	r.mu.Unlock()
}

func (r *recorder) votes() (grants []election.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.sent {
		for _, gm := range b.Msgs {
			if gm.Msg.Type == election.MsgVoteResp && gm.Msg.Granted {
				grants = append(grants, gm.Msg)
			}
		}
	}
	return grants
}

func storeHost(t *testing.T, w *wheel.Wheel, st multiraft.Store, tr multiraft.Transport) *multiraft.Host {
	cfg := multiraft.DefaultConfig()
	cfg.ID = 1
	cfg.Store = st
	cfg.HibernateAfter = 0
	cfg.Election.Metrics = &metrics.BlackholeSink{}
	cfg.Election.Logger = hclog.NewNullLogger()
	h, err := multiraft.NewHost(cfg, w, tr)
	require.NoError(t, err)
	t.Cleanup(h.Stop)
	return h
}

// TestStoreRestart restarts a host on the same Store: every group's term
// and vote come back, the bootstrapped groups' term 1 included, and
// LoadAll lists them.
func TestStoreRestart(t *testing.T) {
	v := newTestWheel(t)
	st := multiraft.NewMemoryStore()
	h := storeHost(t, v.Wheel, st, multiraft.TransportFunc(func(multiraft.Batch) {}))
	voters := []election.ID{1, 2, 3}
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters, Leader: 2}))
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 2, Voters: voters}))
	h.Step(multiraft.Batch{From: 3, To: 1, Msgs: []multiraft.GroupMessage{{Group: 2, Msg: election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 7}}}})
	v.AdvanceBy(time.Millisecond)
	s := h.Stats()
	require.Equal(t, int64(2), s.Saves)
	require.Equal(t, int64(1), s.Syncs, "the bootstrap and the vote: one write")
	h.Stop()

	h2 := storeHost(t, v.Wheel, st, multiraft.TransportFunc(func(multiraft.Batch) {}))
	require.NoError(t, h2.AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters, Leader: 2}))
	require.NoError(t, h2.AddGroup(multiraft.GroupConfig{ID: 2, Voters: voters}))
	for g, want := range map[multiraft.GroupID]election.HardState{1: {Term: 1, Vote: 2}, 2: {Term: 7, Vote: 3}} {
		gs, err := h2.Status(g)
		require.NoError(t, err)
		require.Equal(t, want.Term, gs.Status.Term, "group %d", g)
		require.Equal(t, want.Vote, gs.Status.Vote, "group %d", g)
	}
	all := map[multiraft.GroupID]election.HardState{}
	require.NoError(t, st.LoadAll(func(g multiraft.GroupID, hs election.HardState) error { all[g] = hs; return nil }))
	require.Equal(t, map[multiraft.GroupID]election.HardState{1: {Term: 1, Vote: 2}, 2: {Term: 7, Vote: 3}}, all)
}

// TestStoreGroupCommit: the states that change in one Step are written
// with one Store.Save.
func TestStoreGroupCommit(t *testing.T) {
	v := newTestWheel(t)
	st := &flakyStore{MemoryStore: multiraft.NewMemoryStore()}
	rec := &recorder{}
	h := storeHost(t, v.Wheel, st, rec)
	voters := []election.ID{1, 2, 3}
	var msgs []multiraft.GroupMessage
	for g := multiraft.GroupID(1); g <= 100; g++ {
		require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: g, Voters: voters}))
		msgs = append(msgs, multiraft.GroupMessage{Group: g, Msg: election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2}})
	}
	h.Step(multiraft.Batch{From: 3, To: 1, Msgs: msgs})
	require.Empty(t, rec.votes(), "no grant before its vote is durable")
	v.AdvanceBy(time.Millisecond)
	require.Len(t, rec.votes(), 100)
	s := h.Stats()
	require.Equal(t, int64(100), s.Saves)
	require.Equal(t, int64(1), s.Syncs)
}

// TestStoreFailureHolds: a Store that fails is retried; the grants wait
// until a write succeeds, and the failures are counted.
func TestStoreFailureHolds(t *testing.T) {
	v := newTestWheel(t)
	st := &flakyStore{MemoryStore: multiraft.NewMemoryStore(), fail: true}
	rec := &recorder{}
	h := storeHost(t, v.Wheel, st, rec)
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 1, Voters: []election.ID{1, 2, 3}}))
	h.Step(multiraft.Batch{From: 3, To: 1, Msgs: []multiraft.GroupMessage{{Group: 1, Msg: election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2}}}})
	v.AdvanceBy(100 * time.Millisecond)
	require.Empty(t, rec.votes(), "a grant left without a durable vote")
	s := h.Stats()
	require.Greater(t, s.SaveErrors, int64(1), "retried")
	require.Zero(t, s.Saves)
	st.set(false, nil)
	v.AdvanceBy(100 * time.Millisecond)
	require.Len(t, rec.votes(), 1)
	hs, err := st.Load(1)
	require.NoError(t, err)
	require.Equal(t, election.HardState{Term: 2, Vote: 3}, hs)
}

// TestStepDoesNotWaitForDisk: on a real-time wheel, a Store whose write
// hangs holds up neither Step nor the host's other calls; the grant leaves
// when the write returns.
func TestStepDoesNotWaitForDisk(t *testing.T) {
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	w, err := wheel.New(wcfg)
	require.NoError(t, err)
	defer w.Stop()
	gate := make(chan struct{})
	st := &flakyStore{MemoryStore: multiraft.NewMemoryStore(), gate: gate}
	rec := &recorder{}
	h := storeHost(t, w, st, rec)
	voters := []election.ID{1, 2, 3}
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 1, Voters: voters}))
	require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: 2, Voters: voters}))
	vote := func(g multiraft.GroupID) {
		h.Step(multiraft.Batch{From: 3, To: 1, Msgs: []multiraft.GroupMessage{{Group: g, Msg: election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 2}}}})
	}
	vote(1) // the persister takes it and hangs in Save
	vote(2) // gathers behind it
	_, err = h.Status(1)
	require.NoError(t, err)
	require.Empty(t, rec.votes())
	st.set(false, nil)
	close(gate)
	require.Eventually(t, func() bool { return len(rec.votes()) == 2 }, time.Minute, time.Millisecond)
	h.Stop() // waits for no write: none is in progress, and no other starts
}
