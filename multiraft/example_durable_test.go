package multiraft_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/pebblestore"
	"github.com/raftick/raftick/wheel"
)

// A durable host: each host keeps its groups' terms and votes in a
// pebblestore, written in group commits before any vote or heartbeat that
// depends on them leaves. Host 1 crashes and restarts on its store: every
// group comes back in the term it had, with its vote.
func Example_durable() {
	dir, err := os.MkdirTemp("", "raftick-durable")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	v, _ := wheel.NewVirtual(wheel.DefaultConfig())
	defer v.Stop()
	net := multiraft.NewMemNetwork(v.Wheel, time.Millisecond)
	voters := []election.ID{1, 2, 3}
	start := func(id election.ID) (*multiraft.Host, *pebblestore.Store) {
		st, err := pebblestore.Open(filepath.Join(dir, fmt.Sprint("host", id)))
		if err != nil {
			panic(err)
		}
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Store = st
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		cfg.Rand = rand.New(rand.NewPCG(uint64(id), 1))
		h, _ := multiraft.NewHost(cfg, v.Wheel, net.Transport())
		net.Attach(h)
		for g := range multiraft.GroupID(100) {
			if err := h.AddGroup(multiraft.GroupConfig{ID: g, Voters: voters}); err != nil {
				panic(err)
			}
		}
		return h, st
	}
	hosts := map[election.ID]*multiraft.Host{}
	stores := map[election.ID]*pebblestore.Store{}
	for _, id := range voters {
		hosts[id], stores[id] = start(id)
	}
	v.AdvanceBy(5 * time.Second) // every group elects a leader
	before, _ := hosts[1].Status(42)
	s := hosts[1].Stats()
	fmt.Printf("host 1 wrote %d states in fewer syncs: %v\n", s.Saves, s.Syncs < s.Saves)

	hosts[1].Stop() // a crash
	net.Detach(1)
	_ = stores[1].Close()
	hosts[1], stores[1] = start(1)
	after, _ := hosts[1].Status(42)
	fmt.Printf("group 42: term %d before the crash, %d after, vote for %d\n",
		before.Status.Term, after.Status.Term, after.Status.Vote)
	for _, id := range voters {
		hosts[id].Stop()
		_ = stores[id].Close()
	}
	// Output:
	// host 1 wrote 100 states in fewer syncs: true
	// group 42: term 1 before the crash, 1 after, vote for 2
}
