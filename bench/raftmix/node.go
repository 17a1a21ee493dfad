package raftmix

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// ImplNode runs each group as three election.Nodes (replicas 1, 2 and 3)
// on one real-time wheel, with election.DefaultConfig at the workload's
// timings (election timeout 150ms randomized to [150ms, 300ms), heartbeats
// every 50ms, a CheckQuorum step-down check every 75ms). Messages are
// delivered in process: a node's Send steps the message into the addressed
// replica at once, on the sending goroutine (for heartbeats and their
// answers, the wheel's driver). Group g's replica g%3+1 campaigns when the
// group starts, so leaders are balanced over the replica IDs. The
// heartbeats are the leaders' own; the step-down fires are the leaders'
// CheckQuorum checks, observed through a metrics sink per group that the
// group's replicas share (election's raftick.election.leader.last_contact
// sample, taken at every check), so a fire counts for the group whichever
// replica leads.
const ImplNode = "raftick-node"

// nodeReplicas is the number of replicas per group of ImplNode and
// ImplEtcd.
const nodeReplicas = 3

// nodes: ImplNode.
type nodes struct {
	r      *run
	w      *wheel.Wheel
	rnd    *rand.Rand // election.Config.Rand of every node, consumed in NewNode
	groups [][nodeReplicas]*election.Node
	sinks  []checkSink
	hbs    atomic.Int64 // heartbeats stepped into followers
}

func newNodes(r *run) (*nodes, error) {
	w, err := wheel.New(r.cfg.wheelConfig())
	if err != nil {
		return nil, err
	}
	im := &nodes{
		r:      r,
		w:      w,
		rnd:    rand.New(rand.NewPCG(r.cfg.Seed, 0x6e6f6465)),
		groups: make([][nodeReplicas]*election.Node, len(r.groups)),
		sinks:  make([]checkSink, len(r.groups)),
	}
	for i := range r.groups {
		if err := im.add(i); err != nil {
			im.stop()
			return nil, err
		}
	}
	return im, nil
}

// add creates group i's nodes (not started).
func (im *nodes) add(i int) error {
	g := &im.r.groups[i]
	im.sinks[i] = checkSink{onCheck: func() { im.r.stepDownNow(g) }}
	voters := []election.ID{1, 2, 3}
	observe := func(e election.Event) {
		if e.Type == election.EventElectionStart {
			g.elections.Add(1)
		}
	}
	for k := range nodeReplicas {
		c := election.DefaultConfig()
		c.ID, c.Voters = election.ID(k+1), voters
		c.ElectionTimeout, c.HeartbeatInterval = ElectionTimeout, HeartbeatPeriod
		c.Rand = im.rnd
		c.Observer = observe
		c.Metrics = &im.sinks[i]
		c.Logger = quietLogger // the run counts step-downs; printing each would cost more than they do
		n, err := election.NewNode(c, im.w, election.TransportFunc(func(m election.Message) { im.deliver(i, m) }),
			election.NewMemoryStorage(), election.StaticLog{})
		if err != nil {
			return fmt.Errorf("raftmix: group %d, replica %d: %w", i, k+1, err)
		}
		im.groups[i][k] = n
	}
	return nil
}

// deliver steps m, sent in group i, into its addressee.
func (im *nodes) deliver(i int, m election.Message) {
	if m.To < 1 || int(m.To) > nodeReplicas {
		return
	}
	if m.Type == election.MsgHeartbeat {
		im.hbs.Add(1)
	}
	im.groups[i][m.To-1].Step(m)
}

// start starts group i's nodes and has one of them campaign; with
// in-process delivery it leads when Campaign returns.
func (im *nodes) start(i int) {
	for _, n := range im.groups[i] {
		_ = n.Start()
	}
	im.r.groups[i].lastFire.Store(im.r.since())
	_ = im.groups[i][i%nodeReplicas].Campaign()
}

func (im *nodes) heartbeat(int) {} // the leaders heartbeat on their own

func (im *nodes) followerHeartbeats() int64 { return im.hbs.Load() }

func (im *nodes) stop() {
	for _, g := range im.groups {
		for _, n := range g {
			if n != nil {
				n.Stop()
			}
		}
	}
	im.w.Stop()
	<-im.w.Done()
}

func (im *nodes) wakeups() int64 { return im.w.Stats().Wakeups }

// checkSink is a go-metrics sink that sees only a leader's step-down
// checks: election samples raftick.election.leader.last_contact at every
// one, and the sink calls onCheck. It drops everything else.
type checkSink struct{ onCheck func() }

// isCheck reports whether key is raftick.election.leader.last_contact.
func isCheck(key []string) bool {
	return len(key) == 4 && key[3] == "last_contact" && key[2] == "leader" && key[1] == "election" && key[0] == "raftick"
}

func (s *checkSink) AddSampleWithLabels(key []string, _ float32, _ []metrics.Label) {
	if isCheck(key) {
		s.onCheck()
	}
}

func (s *checkSink) AddSample(key []string, val float32)                    { s.AddSampleWithLabels(key, val, nil) }
func (*checkSink) SetGauge([]string, float32)                               {}
func (*checkSink) SetGaugeWithLabels([]string, float32, []metrics.Label)    {}
func (*checkSink) EmitKey([]string, float32)                                {}
func (*checkSink) IncrCounter([]string, float32)                            {}
func (*checkSink) IncrCounterWithLabels([]string, float32, []metrics.Label) {}
