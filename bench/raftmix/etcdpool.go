package raftmix

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// ImplEtcd runs each group as three go.etcd.io/raft/v3 RawNodes (replicas
// 1, 2 and 3 on simulated nodes 1, 2 and 3; see etcdReplicas) and each
// simulated node as a CockroachDB server runs its ranges:
//
//   - a raft scheduler per node (raftScheduler) with Config.EtcdWorkers
//     workers (default GOMAXPROCS), so that the nodes use every core;
//   - a tick loop per node that enqueues a tick for every one of its
//     replicas every EtcdTick (at most maxEtcdTicks owed per replica,
//     beyond that they are dropped);
//   - a worker processing a replica steps the messages in its inbox
//     first, then its ticks, handling the Ready after each (storage in
//     raft.MemoryStorage, then Advance), and queues the messages on the
//     link to their node;
//   - a goroutine per link (ordered pair of nodes) carries what has
//     queued on it as one batch, coalesced per node pair as a transport
//     stream is: it appends each message to its replica's inbox and
//     enqueues the replicas with a request in one call.
//
// Group g's replica g%3+1 campaigns on its (1 + g%(ElectionTick-1))-th
// tick, so that the groups' leaders, and their checks, are out of phase.
//
// etcd's leader runs its CheckQuorum every ElectionTick of its ticks,
// counted from when it became leader; the step-down fires of an ImplEtcd
// run are the leaders' ticks on which that check falls, and their
// lateness is measured against ElectionTimeout from the previous check
// (or from becoming leader): a check is as late as the tick that runs
// it, and a dropped tick delays it a tick.
const ImplEtcd = "etcd-tick"

// maxEtcdTicks bounds the ticks a replica of ImplEtcd can owe: a
// heartbeat interval's. A node further behind drops ticks, and its
// replicas' clocks fall behind real time, as CockroachDB's scheduler
// bounds the ticks it queues.
const maxEtcdTicks = int(HeartbeatPeriod / EtcdTick)

// etcdPool: ImplEtcd.
type etcdPool struct {
	r *run
	etcdReplicas
	servers [nodeReplicas]*etcdServer
	all     []int32 // every group, the tick loops' batch
	ticks   atomic.Int64
	quit    chan struct{} // closed by stop
	wg      sync.WaitGroup
}

// etcdServer is simulated node k+1: its replicas, its scheduler and its
// links to the other nodes.
type etcdServer struct {
	p     *etcdPool
	k     int
	sched *raftScheduler
	reps  []etcdPoolReplica      // by group
	out   [nodeReplicas]etcdLink // out[j] carries to node j+1; out[k] is unused
	work  []etcdWorker           // by worker
	hbs   atomic.Int64           // heartbeats stepped into its replicas
}

// etcdPoolReplica is one replica's state; all but inbox is owned by the
// worker processing the replica (the scheduler serializes them).
type etcdPoolReplica struct {
	rn *raft.RawNode
	st *raft.MemoryStorage

	mu    sync.Mutex
	inbox []*pb.Message // guarded by mu: delivered, not yet stepped

	spare      []*pb.Message // the inbox's other buffer
	campaignIn int16         // ticks until it campaigns; 0: it does not
	leader     bool          // as of its last Ready's soft state
	check      int32         // a leader's ticks to its next CheckQuorum
}

// etcdLink queues the messages of one node to another.
type etcdLink struct {
	mu   sync.Mutex
	msgs []etcdMsg
	wake chan struct{} // a token when msgs turned non-empty
}

// etcdWorker is one worker's scratch: the messages of the Ready being
// handled, by destination node.
type etcdWorker struct {
	out [nodeReplicas][]etcdMsg
}

func newEtcdPool(r *run) (*etcdPool, error) {
	rs, err := newEtcdReplicas(len(r.groups), true)
	if err != nil {
		return nil, err
	}
	n := len(r.groups)
	p := &etcdPool{r: r, etcdReplicas: rs, all: make([]int32, n), quit: make(chan struct{})}
	et := rs.electionTicks
	r.period, r.latePeriod = time.Duration(et)*EtcdTick, time.Duration(et)*EtcdTick
	for i := range p.all {
		p.all[i] = int32(i)
	}
	workers := r.cfg.etcdWorkers()
	for k := range p.servers {
		s := &etcdServer{p: p, k: k, reps: make([]etcdPoolReplica, n), work: make([]etcdWorker, workers)}
		s.sched = newRaftScheduler(n, workers, maxEtcdTicks, s.process)
		for i := range s.reps {
			s.reps[i].rn, s.reps[i].st = rs.groups[i][k], rs.stores[i][k]
		}
		for j := range s.out {
			s.out[j].wake = make(chan struct{}, 1)
		}
		p.servers[k] = s
	}
	for i := range n {
		p.servers[i%nodeReplicas].reps[i].campaignIn = int16(1 + i%(et-1))
	}
	return p, nil
}

// start starts the nodes with the first group: every replica is ticked
// from then on.
func (p *etcdPool) start(i int) {
	if i != 0 {
		return
	}
	for _, s := range p.servers {
		s.sched.start()
		p.wg.Add(1)
		go s.tickLoop()
		for j := range s.out {
			if j != s.k {
				p.wg.Add(1)
				go p.carry(s, p.servers[j])
			}
		}
	}
}

// tickLoop enqueues a tick for every replica of s every EtcdTick.
func (s *etcdServer) tickLoop() {
	defer s.p.wg.Done()
	t := time.NewTicker(EtcdTick)
	defer t.Stop()
	for {
		select {
		case <-s.p.quit:
			return
		case <-t.C:
		}
		s.sched.enqueueN(schedTick, s.p.all)
		s.p.ticks.Add(1)
	}
}

// carry moves what queues on from's link to node to into to's replicas'
// inboxes, a batch at a time, and enqueues those replicas.
func (p *etcdPool) carry(from, to *etcdServer) {
	defer p.wg.Done()
	link := &from.out[to.k]
	var batch []etcdMsg
	var gs []int32
	for {
		select {
		case <-p.quit:
			return
		case <-link.wake:
		}
		link.mu.Lock()
		batch, link.msgs = link.msgs, batch[:0]
		link.mu.Unlock()
		gs = gs[:0]
		for i, e := range batch {
			rep := &to.reps[e.g]
			rep.mu.Lock()
			rep.inbox = append(rep.inbox, e.m)
			rep.mu.Unlock()
			gs = append(gs, e.g)
			batch[i] = etcdMsg{}
		}
		to.sched.enqueueN(schedRequest, gs)
	}
}

// process is s's scheduler's processing of replica g: as CockroachDB's
// worker, the messages first, then the ticks, then the Ready.
func (s *etcdServer) process(w int, g int32, st schedState) {
	rep := &s.reps[g]
	ready := st.flags&schedReady != 0
	if st.flags&schedRequest != 0 {
		rep.mu.Lock()
		msgs := rep.inbox
		rep.inbox = rep.spare[:0]
		rep.mu.Unlock()
		hbs := 0
		for i, m := range msgs {
			if m.GetType() == pb.MsgHeartbeat {
				hbs++
			}
			_ = rep.rn.Step(m)
			msgs[i] = nil
		}
		rep.spare = msgs[:0]
		if hbs > 0 {
			s.hbs.Add(int64(hbs))
		}
		if len(msgs) > 0 {
			// Before the ticks, so that a leader made by these messages
			// counts them.
			s.handle(&s.work[w], g)
			ready = false
		}
	}
	for range st.ticks {
		rep.rn.Tick()
		ready = true
		if rep.campaignIn > 0 {
			if rep.campaignIn--; rep.campaignIn == 0 {
				_ = rep.rn.Campaign()
			}
		}
		if rep.leader {
			if rep.check--; rep.check == 0 {
				rep.check = int32(s.p.electionTicks)
				s.p.r.stepDownNow(&s.p.r.groups[g])
			}
		}
	}
	if ready {
		s.handle(&s.work[w], g)
	}
}

// handle handles replica g's Readys, if it has any, and queues their
// messages on s's links.
func (s *etcdServer) handle(w *etcdWorker, g int32) {
	rep := &s.reps[g]
	grp := &s.p.r.groups[g]
	for rep.rn.HasReady() {
		rd := rep.rn.Ready()
		persist(rep.st, &rd, grp)
		if ss := rd.SoftState; ss != nil {
			leader := ss.RaftState == raft.StateLeader
			if leader && !rep.leader {
				// etcd's leader counts its CheckQuorum ticks from here.
				rep.check = int32(s.p.electionTicks)
				s.p.r.checkFrom(grp)
			}
			rep.leader = leader
		}
		for _, m := range rd.Messages {
			if to := int(m.GetTo()); to >= 1 && to <= nodeReplicas && to-1 != s.k {
				w.out[to-1] = append(w.out[to-1], etcdMsg{g: g, m: m})
			}
		}
		rep.rn.Advance(rd)
	}
	for j := range w.out {
		if len(w.out[j]) == 0 {
			continue
		}
		link := &s.out[j]
		link.mu.Lock()
		wake := len(link.msgs) == 0
		link.msgs = append(link.msgs, w.out[j]...)
		link.mu.Unlock()
		clear(w.out[j])
		w.out[j] = w.out[j][:0]
		if wake {
			select {
			case link.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (p *etcdPool) heartbeat(int) {} // the leaders heartbeat on their own

func (p *etcdPool) followerHeartbeats() int64 {
	var n int64
	for _, s := range p.servers {
		n += s.hbs.Load()
	}
	return n
}

// droppedTicks returns the ticks the nodes have dropped so far.
func (p *etcdPool) droppedTicks() int64 {
	var n int64
	for _, s := range p.servers {
		n += s.sched.droppedTicks()
	}
	return n
}

func (p *etcdPool) stop() {
	close(p.quit)
	for _, s := range p.servers {
		s.sched.stop()
	}
	p.wg.Wait()
}

// wakeups returns the tick loops' ticks, summed over the nodes.
func (p *etcdPool) wakeups() int64 { return p.ticks.Load() }

// etcdWorkers returns the workers of each node's scheduler of ImplEtcd.
func (c Config) etcdWorkers() int {
	if c.EtcdWorkers > 0 {
		return c.EtcdWorkers
	}
	return runtime.GOMAXPROCS(0)
}
