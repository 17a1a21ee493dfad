package raftmix

import (
	"fmt"
	"io"
	"log"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// ImplEtcd runs each group as three go.etcd.io/raft/v3 RawNodes (replicas
// 1, 2 and 3, on simulated nodes 1, 2 and 3) driven as CockroachDB drives
// its ranges: one goroutine ticks every RawNode every EtcdTick, with
// ElectionTick and HeartbeatTick giving the workload's timings (150ms,
// randomized by etcd to [150ms, 300ms), and 50ms), PreVote and CheckQuorum
// on. After ticking it handles every Ready (storage in raft.MemoryStorage,
// then Advance) and delivers the messages in process, coalesced per pair
// of nodes: each pair's messages of one round travel as one batch and are
// stepped into their replicas one after another, and the answers they
// cause go back in the next round of the same tick, until no message is
// left. Group g's replica g%3+1 campaigns on the first tick.
//
// etcd's leader runs its CheckQuorum every ElectionTick ticks; the
// step-down fires of an ImplEtcd run are the ticks on which each group's
// check falls (every ElectionTick ticks, groups out of phase), and their
// lateness is measured against ElectionTimeout: the check is as late as
// the tick that runs it.
const ImplEtcd = "etcd-tick"

// EtcdTick is ImplEtcd's tick.
const EtcdTick = 10 * time.Millisecond

// maxEtcdRounds bounds the delivery rounds of one tick: a heartbeat and
// its answer take two, an election four; what is left waits for the next
// tick.
const maxEtcdRounds = 8

// etcdNodes: ImplEtcd. Everything but the counters is owned by the loop.
type etcdNodes struct {
	r             *run
	electionTicks int
	groups        [][nodeReplicas]*raft.RawNode
	stores        [][nodeReplicas]*raft.MemoryStorage
	check         []int32 // ticks to each group's next CheckQuorum
	// out[from][to] are the messages of this round from node from+1 to
	// node to+1; in is the batch being delivered.
	out, in [nodeReplicas][nodeReplicas][]etcdMsg
	ready   []etcdReplica // replicas stepped into this round
	started bool
	t0      int64 // when the loop started, ns since the run's base; set by start

	hbs   atomic.Int64 // heartbeats stepped into followers
	ticks atomic.Int64
	quit  chan struct{} // closed by stop
	done  chan struct{} // closed when the loop exits
}

// etcdMsg is one message of group g in a batch.
type etcdMsg struct {
	g int32
	m *pb.Message
}

// etcdReplica names replica k+1 of group g.
type etcdReplica struct {
	g int32
	k int8
}

func newEtcd(r *run) (*etcdNodes, error) {
	et := int(ElectionTimeout / EtcdTick)
	im := &etcdNodes{
		r:             r,
		electionTicks: et,
		groups:        make([][nodeReplicas]*raft.RawNode, len(r.groups)),
		stores:        make([][nodeReplicas]*raft.MemoryStorage, len(r.groups)),
		check:         make([]int32, len(r.groups)),
		quit:          make(chan struct{}),
		done:          make(chan struct{}),
	}
	r.period, r.latePeriod = time.Duration(et)*EtcdTick, time.Duration(et)*EtcdTick
	logger := &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)}
	for i := range r.groups {
		im.check[i] = int32(im.firstCheck(i))
		for k := range nodeReplicas {
			st := raft.NewMemoryStorage()
			snap := pb.EnsureSnapshot(nil)
			snap.Metadata.Index = new(uint64(1))
			snap.Metadata.Term = new(uint64(1))
			snap.Metadata.ConfState.Voters = []uint64{1, 2, 3}
			if err := st.ApplySnapshot(snap); err != nil {
				return nil, fmt.Errorf("raftmix: group %d: %w", i, err)
			}
			rn, err := raft.NewRawNode(&raft.Config{
				ID:              uint64(k + 1),
				ElectionTick:    et,
				HeartbeatTick:   int(HeartbeatPeriod / EtcdTick),
				Storage:         st,
				MaxSizePerMsg:   1 << 20,
				MaxInflightMsgs: 256,
				CheckQuorum:     true,
				PreVote:         true,
				Logger:          logger,
			})
			if err != nil {
				return nil, fmt.Errorf("raftmix: group %d, replica %d: %w", i, k+1, err)
			}
			im.groups[i][k], im.stores[i][k] = rn, st
		}
	}
	return im, nil
}

// start starts the loop with the first group; the loop owns every RawNode
// (and check, which it may be changing already).
func (im *etcdNodes) start(i int) {
	if i == 0 {
		im.t0 = im.r.since()
	}
	// As if the check before the first had run a period before it, on
	// the loop's ticks.
	g := &im.r.groups[i]
	prev := im.t0 + int64(im.firstCheck(i)-im.electionTicks)*int64(EtcdTick)
	g.lastFire.Store(prev)
	if s := g.sample; s != nil {
		s.mu.Lock()
		s.prev = prev
		s.mu.Unlock()
	}
	if i == 0 {
		go im.loop()
	}
}

// firstCheck is the number of ticks to group i's first CheckQuorum, so
// that the groups' checks are spread over ElectionTick ticks.
func (im *etcdNodes) firstCheck(i int) int { return 1 + i%im.electionTicks }

func (im *etcdNodes) loop() {
	defer close(im.done)
	t := time.NewTicker(EtcdTick)
	defer t.Stop()
	for {
		select {
		case <-im.quit:
			return
		case <-t.C:
		}
		im.tick()
		im.ticks.Add(1)
	}
}

// tick ticks every replica, handles their Readys and delivers what they
// send, round after round.
func (im *etcdNodes) tick() {
	if !im.started {
		im.started = true
		for i := range im.groups {
			_ = im.groups[i][i%nodeReplicas].Campaign()
		}
	}
	for i := range im.groups {
		g := &im.r.groups[i]
		for k, rn := range im.groups[i] {
			rn.Tick()
			im.handle(int32(i), int8(k))
		}
		if im.check[i]--; im.check[i] == 0 {
			im.check[i] = int32(im.electionTicks)
			im.r.stepDownNow(g)
		}
	}
	for round := 0; round < maxEtcdRounds; round++ {
		if !im.deliver() {
			break
		}
	}
}

// handle processes replica k+1 of group g's Ready, if it has one, and
// queues its messages.
func (im *etcdNodes) handle(g int32, k int8) {
	rn := im.groups[g][k]
	for rn.HasReady() {
		rd := rn.Ready()
		st := im.stores[g][k]
		if len(rd.Entries) > 0 {
			_ = st.Append(rd.Entries)
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			_ = st.SetHardState(rd.HardState)
		}
		if ss := rd.SoftState; ss != nil &&
			(ss.RaftState == raft.StatePreCandidate || ss.RaftState == raft.StateCandidate) {
			im.r.groups[g].elections.Add(1)
		}
		for _, m := range rd.Messages {
			to := m.GetTo()
			if to < 1 || to > nodeReplicas {
				continue
			}
			im.out[k][to-1] = append(im.out[k][to-1], etcdMsg{g: g, m: m})
		}
		rn.Advance(rd)
	}
}

// deliver steps this round's batches into their replicas and handles the
// Readys that causes, whose messages make the next round; it reports
// whether there was anything to deliver.
func (im *etcdNodes) deliver() bool {
	sent := false
	for from := range im.out {
		for to := range im.out[from] {
			im.in[from][to], im.out[from][to] = im.out[from][to], im.in[from][to][:0]
			sent = sent || len(im.in[from][to]) > 0
		}
	}
	if !sent {
		return false
	}
	im.ready = im.ready[:0]
	for from := range im.in {
		for to := range im.in[from] {
			batch := im.in[from][to]
			for j, e := range batch {
				if e.m.GetType() == pb.MsgHeartbeat {
					im.hbs.Add(1)
				}
				_ = im.groups[e.g][to].Step(e.m)
				im.ready = append(im.ready, etcdReplica{g: e.g, k: int8(to)})
				batch[j] = etcdMsg{}
			}
		}
	}
	for _, rp := range im.ready {
		im.handle(rp.g, rp.k)
	}
	return true
}

func (im *etcdNodes) heartbeat(int) {} // the leaders heartbeat on their own

func (im *etcdNodes) followerHeartbeats() int64 { return im.hbs.Load() }

func (im *etcdNodes) stop() {
	close(im.quit)
	<-im.done
}

func (im *etcdNodes) wakeups() int64 { return im.ticks.Load() }
