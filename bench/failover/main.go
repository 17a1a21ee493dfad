// Command failover measures a multi-raft cluster's mass failover in real
// time: three multiraft.Hosts, every group with all three as voters
// (ElectionTimeout 150ms, HeartbeatInterval 50ms, PreVote and CheckQuorum
// on) and leaders bootstrapped evenly; once the groups settle, one host
// stops (a crash) and the command measures how long each group it led
// takes to elect a new leader on the other two, counts the elections in
// the groups that kept their leader, and the HardStates saved and the
// durable writes (syncs) per second on the survivors from the crash until
// the last new leader.
//
//	go run ./bench/failover -groups 10000 -storage pebble -runs 3
//	go run ./bench/failover -groups 30000 -hibernate -storage pebble
//
// -storage memory keeps the states in each host's multiraft.MemoryStore;
// file gives every replica an election.FileStorage (one file per group,
// each Save a file, an fsync, a rename and a directory fsync); pebble
// gives each host a multiraft/pebblestore in -dir, which must be on a disk,
// not a tmpfs. -network memnet delivers batches by wheel timers after
// 1ms (multiraft.MemNetwork); inbox gives each host one goroutine that
// steps the batches sent to it in order, as a server's network loop would.
// -hibernate lets idle groups hibernate (after 1s) before the crash;
// without it every group stays awake.
//
// Each run prints one line; with -runs > 1 a summary of the runs follows.
// A run whose lost groups do not all elect a leader within -timeout says
// so and counts as failed.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/multiraft/pebblestore"
	"github.com/raftick/raftick/wheel"
)

type options struct {
	groups    int
	hibernate bool
	storage   string
	network   string
	runs      int
	dir       string
	settle    time.Duration
	timeout   time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.groups, "groups", 10000, "number of groups (each with a replica on all three hosts)")
	flag.BoolVar(&o.hibernate, "hibernate", false, "let idle groups hibernate before the crash")
	flag.StringVar(&o.storage, "storage", "memory", "where HardStates go: memory, file or pebble")
	flag.StringVar(&o.network, "network", "memnet", "how batches travel: memnet or inbox")
	flag.IntVar(&o.runs, "runs", 1, "number of runs")
	flag.StringVar(&o.dir, "dir", os.TempDir(), "directory for -storage file and pebble (on a disk, not a tmpfs)")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "how long the groups run before the crash, once every group has its leader (and, with -hibernate, sleeps)")
	flag.DurationVar(&o.timeout, "timeout", 120*time.Second, "how long to wait for the lost groups' new leaders")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "failover: -cpuprofile:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(2)
	}
	if err := run(os.Stdout, o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

func (o options) check() error {
	switch {
	case o.groups < 3:
		return fmt.Errorf("-groups %d: at least 3", o.groups)
	case o.storage != "memory" && o.storage != "file" && o.storage != "pebble":
		return fmt.Errorf("-storage %q: memory, file or pebble", o.storage)
	case o.network != "memnet" && o.network != "inbox":
		return fmt.Errorf("-network %q: memnet or inbox", o.network)
	case o.runs < 1:
		return fmt.Errorf("-runs %d: at least 1", o.runs)
	case o.settle < 0 || o.timeout <= 0:
		return errors.New("-settle must be >= 0 and -timeout > 0")
	}
	return nil
}

// result is one run's measurements.
type result struct {
	lost, recovered int
	p50, p99, max   time.Duration
	// elsewhere counts the elections (campaigns, not pre-votes) in groups
	// that did not lose their leader, from the crash until the end.
	elsewhere     uint64
	saves, syncs  float64 // per second on the survivors
	saveErrors    int64
	window        time.Duration
	settleElected uint64 // elections while settling (after bootstrap)
}

func run(out io.Writer, o options) error {
	fmt.Fprintf(out, "failover: %d groups, 3 hosts, ET 150ms / HB 50ms, hibernate=%v, storage=%s, network=%s\n",
		o.groups, o.hibernate, o.storage, o.network)
	var rs []result
	for i := range o.runs {
		r, err := once(o, i)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "run %d: %s\n", i+1, r)
		rs = append(rs, r)
	}
	if len(rs) > 1 {
		fmt.Fprintf(out, "runs:  p50 %s  p99 %s  max %s  elsewhere %s  saves/s %s  syncs/s %s\n",
			spread(rs, func(r result) float64 { return r.p50.Seconds() }, "%.2f"),
			spread(rs, func(r result) float64 { return r.p99.Seconds() }, "%.2f"),
			spread(rs, func(r result) float64 { return r.max.Seconds() }, "%.2f"),
			spread(rs, func(r result) float64 { return float64(r.elsewhere) }, "%.0f"),
			spread(rs, func(r result) float64 { return r.saves }, "%.0f"),
			spread(rs, func(r result) float64 { return r.syncs }, "%.0f"))
	}
	for _, r := range rs {
		if r.recovered < r.lost {
			return fmt.Errorf("%d of %d lost groups without a leader after -timeout %v", r.lost-r.recovered, r.lost, o.timeout)
		}
	}
	return nil
}

func spread(rs []result, f func(result) float64, format string) string {
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return fmt.Sprintf(format+"–"+format, lo, hi)
}

func (r result) String() string {
	s := fmt.Sprintf("%d elections while settling; lost %d, new leader p50 %.2fs p99 %.2fs max %.2fs; elections elsewhere %d; %.0f saves/s, %.0f syncs/s over %.1fs",
		r.settleElected, r.lost, r.p50.Seconds(), r.p99.Seconds(), r.max.Seconds(), r.elsewhere, r.saves, r.syncs, r.window.Seconds())
	if r.recovered < r.lost {
		s += fmt.Sprintf("; %d STILL LEADERLESS", r.lost-r.recovered)
	}
	if r.saveErrors > 0 {
		s += fmt.Sprintf("; %d write errors", r.saveErrors)
	}
	return s
}

// cluster is one run's hosts and their bookkeeping.
type cluster struct {
	w       *wheel.Wheel
	hosts   [3]*multiraft.Host
	net     *multiraft.MemNetwork
	inboxes [3]*inbox
	stores  []*pebblestore.Store
	// crashed is set at the crash; crashAt is its wall time (ns since
	// start), elected[g] when group g's first leader after it was elected
	// (0: none yet), lostG[g] whether host 1 led g when it crashed.
	start     time.Time
	crashed   atomic.Bool
	crashAt   atomic.Int64
	elected   []atomic.Int64
	lostG     []bool
	elsewhere atomic.Uint64
	campaigns atomic.Uint64
}

func once(o options, runIdx int) (result, error) {
	w, err := wheel.New(func() wheel.Config {
		c := wheel.DefaultConfig()
		c.Metrics = &metrics.BlackholeSink{}
		return c
	}())
	if err != nil {
		return result{}, err
	}
	defer w.Stop()
	c := &cluster{w: w, start: time.Now(), elected: make([]atomic.Int64, o.groups+1), lostG: make([]bool, o.groups+1)}
	var base string
	if o.storage != "memory" {
		base, err = os.MkdirTemp(o.dir, "failover-")
		if err != nil {
			return result{}, err
		}
		defer os.RemoveAll(base)
	}
	var tr [3]multiraft.Transport
	switch o.network {
	case "memnet":
		c.net = multiraft.NewMemNetwork(w, time.Millisecond)
		for i := range tr {
			tr[i] = c.net.Transport()
		}
	case "inbox":
		for i := range c.inboxes {
			c.inboxes[i] = newInbox()
		}
		for i := range tr {
			tr[i] = multiraft.TransportFunc(func(b multiraft.Batch) {
				if b.To >= 1 && b.To <= 3 {
					c.inboxes[b.To-1].put(b)
				}
			})
		}
	}
	for i := range c.hosts {
		id := election.ID(i + 1)
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.Election.ElectionTimeout = 150 * time.Millisecond
		cfg.Election.HeartbeatInterval = 50 * time.Millisecond
		cfg.Election.Metrics = &metrics.BlackholeSink{}
		// At least the lease (135ms) plus the coalescing window (25ms).
		cfg.LivenessTimeout = 300 * time.Millisecond
		cfg.Election.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Error, Output: os.Stderr})
		cfg.HibernateAfter = 0
		if o.hibernate {
			cfg.HibernateAfter = time.Second
		}
		cfg.Observer = c.observe
		if o.storage == "pebble" {
			st, err := pebblestore.Open(filepath.Join(base, fmt.Sprint("host", id)))
			if err != nil {
				return result{}, err
			}
			c.stores = append(c.stores, st)
			cfg.Store = st
		}
		h, err := multiraft.NewHost(cfg, w, tr[i])
		if err != nil {
			return result{}, err
		}
		c.hosts[i] = h
		if c.net != nil {
			c.net.Attach(h)
		} else {
			c.inboxes[i].start(h)
		}
	}
	defer func() {
		for _, h := range c.hosts {
			h.Stop()
		}
		for _, ib := range c.inboxes {
			if ib != nil {
				ib.stop()
			}
		}
		for _, st := range c.stores {
			_ = st.Close()
		}
	}()
	voters := []election.ID{1, 2, 3}
	for g := 1; g <= o.groups; g++ {
		leader := election.ID(1 + (g+runIdx)%3)
		for i, h := range c.hosts {
			gc := multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: voters, Leader: leader}
			if o.storage == "file" {
				st, err := election.NewFileStorage(filepath.Join(base, fmt.Sprintf("h%d-g%d", i+1, g)))
				if err != nil {
					return result{}, err
				}
				gc.Storage = st
			}
			if err := h.AddGroup(gc); err != nil {
				return result{}, err
			}
		}
	}
	// Settle: every group led by its bootstrap leader (or asleep under it).
	if err := c.waitSettled(o); err != nil {
		return result{}, err
	}
	time.Sleep(o.settle)
	var r result
	r.settleElected = c.campaigns.Load()
	// The groups lost are those host 1 leads when it crashes, whoever
	// their bootstrap leader was: a group may have changed leader while
	// the hosts started or settled.
	for g := 1; g <= o.groups; g++ {
		st, err := c.hosts[0].Status(multiraft.GroupID(g))
		if err != nil {
			return result{}, err
		}
		if st.Status.Role == election.Leader {
			c.lostG[g] = true
			r.lost++
		}
	}
	before := [2]multiraft.Stats{c.hosts[1].Stats(), c.hosts[2].Stats()}
	c.crashAt.Store(int64(time.Since(c.start)))
	c.crashed.Store(true)
	c.hosts[0].Stop()
	if c.net != nil {
		c.net.Detach(1)
	}
	deadline := time.Now().Add(o.timeout)
	for {
		n := 0
		for g := 1; g <= o.groups; g++ {
			if c.lostG[g] && c.elected[g].Load() != 0 {
				n++
			}
		}
		r.recovered = n
		if n == r.lost || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	end := time.Since(c.start)
	after := [2]multiraft.Stats{c.hosts[1].Stats(), c.hosts[2].Stats()}
	var ts []time.Duration
	for g := 1; g <= o.groups; g++ {
		if at := c.elected[g].Load(); c.lostG[g] && at != 0 {
			ts = append(ts, time.Duration(at-c.crashAt.Load()))
		}
	}
	slices.Sort(ts)
	if len(ts) > 0 {
		r.p50, r.p99, r.max = ts[len(ts)*50/100], ts[min(len(ts)-1, len(ts)*99/100)], ts[len(ts)-1]
	}
	r.window = end - time.Duration(c.crashAt.Load())
	for i := range after {
		r.saves += float64(after[i].Saves - before[i].Saves)
		r.syncs += float64(after[i].Syncs - before[i].Syncs)
		r.saveErrors += after[i].SaveErrors - before[i].SaveErrors
	}
	r.saves /= r.window.Seconds()
	r.syncs /= r.window.Seconds()
	r.elsewhere = c.elsewhere.Load()
	return r, nil
}

// observe records elections: after the crash, a lost group's first
// leader, and the campaigns of groups that kept theirs.
func (c *cluster) observe(g multiraft.GroupID, e election.Event) {
	switch {
	case e.Type == election.EventElectionStart && !e.PreVote:
		c.campaigns.Add(1)
		if c.crashed.Load() && !c.lostG[g] {
			c.elsewhere.Add(1)
		}
	case e.Type == election.EventLeaderElected && c.crashed.Load() && c.lostG[g]:
		c.elected[g].CompareAndSwap(0, int64(time.Since(c.start)))
	}
}

// waitSettled waits until the three replicas of every group agree on its
// term and on a leader that knows it leads, and, with -hibernate, every
// group sleeps.
func (c *cluster) waitSettled(o options) error {
	deadline := time.Now().Add(o.timeout)
	for !time.Now().After(deadline) {
		if c.settled(o) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the groups did not settle within -timeout %v", o.timeout)
}

func (c *cluster) settled(o options) bool {
	if o.hibernate {
		for _, h := range c.hosts {
			if h.Stats().Hibernating < int64(o.groups) {
				return false
			}
		}
	}
	for g := 1; g <= o.groups; g++ {
		var sts [3]multiraft.GroupStatus
		for i, h := range c.hosts {
			st, err := h.Status(multiraft.GroupID(g))
			if err != nil {
				return false
			}
			sts[i] = st
		}
		l := sts[0].Status.Leader
		if l < 1 || l > 3 || sts[l-1].Status.Role != election.Leader {
			return false
		}
		for _, st := range sts[1:] {
			if st.Status.Leader != l || st.Status.Term != sts[0].Status.Term {
				return false
			}
		}
	}
	return true
}

// inbox is a host's network loop: one goroutine stepping the batches sent
// to it, in order.
type inbox struct {
	mu   sync.Mutex
	q    []multiraft.Batch
	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newInbox() *inbox {
	return &inbox{wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

func (ib *inbox) put(b multiraft.Batch) {
	ib.mu.Lock()
	ib.q = append(ib.q, b)
	ib.mu.Unlock()
	select {
	case ib.wake <- struct{}{}:
	default:
	}
}

func (ib *inbox) start(h *multiraft.Host) {
	go func() {
		defer close(ib.done)
		var q []multiraft.Batch
		for {
			select {
			case <-ib.quit:
				return
			case <-ib.wake:
			}
			ib.mu.Lock()
			q, ib.q = ib.q, q[:0]
			ib.mu.Unlock()
			for _, b := range q {
				h.Step(b)
			}
			clear(q)
		}
	}()
}

func (ib *inbox) stop() {
	close(ib.quit)
	<-ib.done
}
