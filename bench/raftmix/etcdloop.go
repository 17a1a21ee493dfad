package raftmix

import (
	"sync/atomic"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// ImplEtcdLoop runs each group as ImplEtcd does (three etcd RawNodes, see
// etcdReplicas) but drives every RawNode of the three simulated nodes
// from ONE goroutine, so it uses one core at most: every EtcdTick the
// loop ticks every RawNode, handles every Ready (storage in
// raft.MemoryStorage, then Advance) and delivers the messages in process,
// coalesced per pair of nodes: each pair's messages of one round travel
// as one batch and are stepped into their replicas one after another,
// and the answers they cause go back in the next round of the same tick,
// until no message is left. Group g's replica g%3+1 campaigns on the
// first tick. It is the cheapest way to drive etcd raft in one process
// (no lock, no hand-off between goroutines), not the way a server runs
// it: ImplEtcd is that.
//
// etcd's leader runs its CheckQuorum every ElectionTick ticks; the
// step-down fires of an ImplEtcdLoop run are the ticks on which each
// group's check falls (every ElectionTick ticks of the loop, groups out
// of phase, whichever replica leads), and their lateness is measured
// against ElectionTimeout: the check is as late as the tick that runs it.
const ImplEtcdLoop = "etcd-loop"

// maxEtcdRounds bounds the delivery rounds of one tick: a heartbeat and
// its answer take two, an election four; what is left waits for the next
// tick.
const maxEtcdRounds = 8

// etcdLoop: ImplEtcdLoop. Everything but the counters is owned by the
// loop.
type etcdLoop struct {
	r *run
	etcdReplicas
	check []int32 // ticks to each group's next CheckQuorum
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

// etcdReplica names replica k+1 of group g.
type etcdReplica struct {
	g int32
	k int8
}

func newEtcdLoop(r *run) (*etcdLoop, error) {
	rs, err := newEtcdReplicas(len(r.groups), false)
	if err != nil {
		return nil, err
	}
	im := &etcdLoop{
		r:            r,
		etcdReplicas: rs,
		check:        make([]int32, len(r.groups)),
		quit:         make(chan struct{}),
		done:         make(chan struct{}),
	}
	et := rs.electionTicks
	r.period, r.latePeriod = time.Duration(et)*EtcdTick, time.Duration(et)*EtcdTick
	for i := range r.groups {
		im.check[i] = int32(im.firstCheck(i))
	}
	return im, nil
}

// start starts the loop with the first group; the loop owns every RawNode
// (and check, which it may be changing already).
func (im *etcdLoop) start(i int) {
	if i == 0 {
		im.t0 = im.r.since()
	}
	// As if the check before the first had run a period before it, on
	// the loop's ticks.
	im.r.checkedAt(&im.r.groups[i], im.t0+int64(im.firstCheck(i)-im.electionTicks)*int64(EtcdTick))
	if i == 0 {
		go im.loop()
	}
}

// firstCheck is the number of ticks to group i's first CheckQuorum, so
// that the groups' checks are spread over ElectionTick ticks.
func (im *etcdLoop) firstCheck(i int) int { return 1 + i%im.electionTicks }

func (im *etcdLoop) loop() {
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
func (im *etcdLoop) tick() {
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
func (im *etcdLoop) handle(g int32, k int8) {
	rn := im.groups[g][k]
	for rn.HasReady() {
		rd := rn.Ready()
		persist(im.stores[g][k], &rd, &im.r.groups[g])
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
func (im *etcdLoop) deliver() bool {
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

func (im *etcdLoop) heartbeat(int) {} // the leaders heartbeat on their own

func (im *etcdLoop) followerHeartbeats() int64 { return im.hbs.Load() }

func (im *etcdLoop) stop() {
	close(im.quit)
	<-im.done
}

func (im *etcdLoop) wakeups() int64 { return im.ticks.Load() }
