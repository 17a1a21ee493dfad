package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/pebblestore"
	"github.com/raftick/raftick/multiraft/tcptransport"
	"github.com/raftick/raftick/wheel"
)

// status is the JSON line printed every report interval (and once with
// Ready set when the host is up, once with Stopped set at the end).
type status struct {
	T           int64       `json:"t"` // wall clock, Unix nanoseconds
	Node        election.ID `json:"node"`
	Ready       bool        `json:"ready,omitempty"`
	Stopped     bool        `json:"stopped,omitempty"`
	Groups      int         `json:"groups"`
	Leading     int         `json:"leading"`     // groups this node leads
	Led         int         `json:"led"`         // groups whose replica here knows a leader
	Hibernating int         `json:"hibernating"` // groups asleep here
	// StartupMS is how long loading the groups took (Ready only).
	StartupMS float64 `json:"startup_ms,omitempty"`
	// Failovers counts the groups that learned a new leader while their
	// old leader's node was silent (since start); the FailoverMS
	// percentiles are of the time from the last batch heard from that
	// node to learning the new leader.
	Failovers     int     `json:"failovers"`
	FailoverP50MS float64 `json:"failover_p50_ms,omitempty"`
	FailoverP99MS float64 `json:"failover_p99_ms,omitempty"`
	FailoverMaxMS float64 `json:"failover_max_ms,omitempty"`
	// Dropped counts batches the transport dropped (since start).
	Dropped int64 `json:"dropped"`
}

// server is one running node.
type server struct {
	cfg       config
	start     time.Time
	log       *eventLog
	w         *wheel.Wheel
	tr        *tcptransport.Transport
	h         *multiraft.Host
	heard     map[election.ID]*atomic.Int64 // last batch from each peer, Unix ns
	writes    atomic.Int64                  // hard-state writes, for --crash-at-write
	mu        sync.Mutex                    // guards leaders and failovers
	leaders   map[multiraft.GroupID]election.ID
	failovers []time.Duration
}

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	s := &server{cfg: cfg, start: time.Now(), heard: map[election.ID]*atomic.Int64{},
		leaders: make(map[multiraft.GroupID]election.ID, cfg.groups)}
	for id := range cfg.peers {
		s.heard[id] = new(atomic.Int64)
		s.heard[id].Store(s.start.UnixNano())
	}
	if err := os.MkdirAll(cfg.dataDir, 0o755); err != nil {
		return err
	}
	var err error
	if s.log, err = openEventLog(cfg.events); err != nil {
		return err
	}
	defer s.log.close()
	logger := hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("raftick-host.%d", cfg.id), Output: stderr})
	wcfg := wheel.DefaultConfig()
	wcfg.Metrics = &metrics.BlackholeSink{}
	wcfg.Logger = logger.Named("wheel")
	if s.w, err = wheel.New(wcfg); err != nil {
		return err
	}
	defer s.w.Stop()
	tcfg := tcptransport.DefaultConfig()
	tcfg.ID, tcfg.Listen, tcfg.Peers = cfg.id, cfg.listen, cfg.peers
	tcfg.Logger = logger.Named("tcp")
	if s.tr, err = tcptransport.New(tcfg); err != nil {
		return err
	}
	defer s.tr.Close()
	store, err := pebblestore.Open(filepath.Join(cfg.dataDir, "store"))
	if err != nil {
		return err
	}
	defer store.Close()
	hcfg := hostConfig(cfg, logger)
	hcfg.Observer = s.observe
	hcfg.Store = &crashStore{Store: store, s: s}
	if s.h, err = multiraft.NewHost(hcfg, s.w, s.tr); err != nil {
		return err
	}
	defer s.h.Stop()
	if err := s.tr.Start(s.step); err != nil {
		return err
	}
	if err := s.addGroups(store); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	ready := s.status()
	ready.Ready, ready.StartupMS = true, ms(time.Since(s.start))
	if err := enc.Encode(ready); err != nil {
		return err
	}
	tick := time.NewTicker(cfg.report)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.h.Stop()
			_ = s.tr.Close()
			st := s.status()
			st.Stopped = true
			return enc.Encode(st)
		case <-tick.C:
			if err := enc.Encode(s.status()); err != nil {
				return err
			}
		}
	}
}

// hostConfig is the Host's configuration for cfg, without Observer.
func hostConfig(cfg config, logger hclog.Logger) multiraft.Config {
	hcfg := multiraft.DefaultConfig()
	hcfg.ID = cfg.id
	hcfg.Election.ElectionTimeout = cfg.electionTO
	hcfg.Election.HeartbeatInterval = cfg.heartbeat
	hcfg.Election.Metrics = &metrics.BlackholeSink{}
	elog := logger.Named("election")
	elog.SetLevel(hclog.Warn) // not a line per election of 10k groups
	hcfg.Election.Logger = elog
	hcfg.HibernateAfter = cfg.hibernateAfter
	return hcfg
}

// step hands a peer's batch to the host, noting when the peer was last
// heard.
func (s *server) step(b multiraft.Batch) {
	if at := s.heard[b.From]; at != nil {
		at.Store(time.Now().UnixNano())
	}
	s.h.Step(b)
}

// addGroups logs the hard state each group recovered from the store and
// adds the groups; a group with no state yet starts led by its bootstrap
// leader.
func (s *server) addGroups(st multiraft.Store) error {
	recovered := make(map[multiraft.GroupID]election.HardState)
	if err := st.LoadAll(func(g multiraft.GroupID, hs election.HardState) error {
		recovered[g] = hs
		return nil
	}); err != nil {
		return fmt.Errorf("load the groups' states: %w", err)
	}
	now := time.Now().UnixNano()
	recs := make([]record, 0, s.cfg.groups)
	for i := range s.cfg.groups {
		gid := multiraft.GroupID(i + 1)
		hs := recovered[gid]
		recs = append(recs, record{T: now, Node: s.cfg.id, Group: uint64(gid), Type: typeRecovered, Term: hs.Term, Leader: hs.Vote})
	}
	s.log.write(recs...)
	for i := range s.cfg.groups {
		gid := multiraft.GroupID(i + 1)
		leader := bootstrapLeader(s.cfg.voters, gid)
		if recovered[gid].Term == 0 {
			s.mu.Lock()
			s.leaders[gid] = leader
			s.mu.Unlock()
		}
		if err := s.h.AddGroup(multiraft.GroupConfig{ID: gid, Voters: s.cfg.voters, Leader: leader}); err != nil {
			return fmt.Errorf("group %d: %w", gid, err)
		}
	}
	return nil
}

// bootstrapLeader is the leader of group g's term 1 in a new cluster.
func bootstrapLeader(voters []election.ID, g multiraft.GroupID) election.ID {
	return voters[int((uint64(g)-1)%uint64(len(voters)))]
}

// crashStore logs each hard state written (a Durable record, after the
// write returned and before the host releases what depends on it),
// counts the writes (group commits) and, at --crash-at-write, kills the
// process inside one.
type crashStore struct {
	multiraft.Store
	s    *server
	recs []record // Save's, reused: the host calls Save from one goroutine
}

func (c *crashStore) Save(states []multiraft.GroupState) error {
	crash := c.s.cfg.crashAt > 0 && c.s.writes.Add(1) == int64(c.s.cfg.crashAt)
	if crash && c.s.cfg.crashBefore {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	err := c.Store.Save(states)
	if crash {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if err == nil {
		now := time.Now().UnixNano()
		c.recs = c.recs[:0]
		for _, gs := range states {
			c.recs = append(c.recs, record{T: now, Node: c.s.cfg.id, Group: uint64(gs.Group), Type: typeDurable, Term: gs.State.Term, Leader: gs.State.Vote})
		}
		c.s.log.write(c.recs...)
	}
	return err
}

// observe logs e and tracks each group's leader for the failover times.
// It runs on the goroutine that caused e, before any message that
// depends on e leaves.
func (s *server) observe(g multiraft.GroupID, e election.Event) {
	if !logged(e) {
		return
	}
	s.log.event(g, e)
	var leader election.ID
	switch e.Type {
	case election.EventLeaderElected:
		leader = e.Node
	case election.EventLeaderKnown:
		leader = e.Leader
	default:
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.leaders[g]
	s.leaders[g] = leader
	if at := s.heard[old]; at != nil && old != leader {
		silent := now.Sub(time.Unix(0, at.Load()))
		if silent > s.cfg.electionTO {
			s.failovers = append(s.failovers, silent)
		}
	}
}

// status counts the groups' roles and the failovers.
func (s *server) status() status {
	st := status{T: time.Now().UnixNano(), Node: s.cfg.id, Groups: s.cfg.groups, Dropped: s.tr.Stats().Dropped}
	for i := range s.cfg.groups {
		gs, err := s.h.Status(multiraft.GroupID(i + 1))
		if err != nil {
			continue
		}
		if gs.Status.Role == election.Leader {
			st.Leading++
		}
		if gs.Status.Leader != election.None {
			st.Led++
		}
		if gs.Hibernating {
			st.Hibernating++
		}
	}
	s.mu.Lock()
	fo := slices.Clone(s.failovers)
	s.mu.Unlock()
	if len(fo) > 0 {
		slices.Sort(fo)
		st.Failovers = len(fo)
		st.FailoverP50MS = ms(fo[len(fo)/2])
		st.FailoverP99MS = ms(fo[min(len(fo)-1, len(fo)*99/100)])
		st.FailoverMaxMS = ms(fo[len(fo)-1])
	}
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
