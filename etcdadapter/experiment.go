package etcdadapter

import (
	"fmt"
	"math/rand/v2"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/trial"
	"github.com/raftick/raftick/wheel"
)

// Setup describes a simulated etcd cluster for the failover and bootstrap
// trials. The trials follow package sim's experiments step by step, so the
// simulator can run them as its etcd engine and compare them with its own.
type Setup struct {
	// Nodes is the number of nodes; in [1, 1000] (failover: at least 2).
	Nodes int
	// Node holds the timing and options of every node (ElectionTick,
	// HeartbeatTick, PreVote, CheckQuorum, TickInterval, Logger); its ID,
	// Peers, Rand and Disk are set per trial.
	Node Config
	// Latency is the one-way message delay; nil means none.
	Latency LatencyFunc
	// Loss and Duplicate are the per-message loss and duplication
	// probabilities (see ClusterConfig).
	Loss, Duplicate float64
	// Disk is each node's storage write time; nil means instantaneous.
	Disk DiskFunc
	// AlignedTicks ticks every node at the same instants instead of
	// independent phases (see ClusterConfig.AlignedTicks).
	AlignedTicks bool
	// ShortLogs is the number of surviving nodes whose logs miss the last
	// entry, so they cannot win (failover only); in [0, Nodes-2]. The
	// paper uses 2 of 4 survivors.
	ShortLogs int
	// MaxTime bounds one trial's measured interval in virtual time; a
	// trial that reaches it is not OK and reports MaxTime. 0 means 60s.
	MaxTime time.Duration
	// Observer, if set, receives every node's events of the trial (for
	// counting elections, checking invariants, or a tracker like sim's).
	Observer func(election.Event)
}

// Outcome is the result of one trial; it has the fields of package sim's
// Outcome that the failover and bootstrap experiments fill.
type Outcome struct {
	// Time is the measured interval: for failover from the crash until
	// every surviving node accepted the new leader; for bootstrap from the
	// start until a majority knows the first leader. If OK is false the
	// trial hit MaxTime (or never reached the point where the measurement
	// starts) and Time is MaxTime.
	Time time.Duration
	// Terms is the number of election terms the measurement spanned (the
	// winner's term minus the term before the first election); Splits is
	// how many of them ended without a leader (Terms-1).
	Terms, Splits int
	// Messages is the number of messages sent during the measurement.
	Messages int
	// OK is false if the trial ran into its time limit.
	OK bool
}

// DefaultSetup returns 5 nodes with etcd's server defaults (DefaultConfig),
// no latency, two short logs.
func DefaultSetup() Setup {
	return Setup{Nodes: 5, Node: DefaultConfig(), ShortLogs: 2}
}

func (s Setup) maxTime() time.Duration { return trial.MaxTime(s.MaxTime) }

// Validate reports the first invalid field of s, or nil: a *FieldError
// wrapping ErrInvalidConfig, whose Field is a field of Setup ("Nodes") or
// of its node template ("Node.ElectionTick").
func (s Setup) Validate() error {
	if err := validateNet(s.Nodes, s.Loss, s.Duplicate); err != nil {
		return err
	}
	switch {
	case !trial.ShortLogsFit(s.ShortLogs, s.Nodes):
		return fieldErr("ShortLogs", s.ShortLogs, "must be in [0, Nodes-2] (a leader and one more survivor need full logs)")
	case s.MaxTime < 0:
		return fieldErr("MaxTime", s.MaxTime, "must not be negative (0 means 60s)")
	}
	return nodeField("Node", s.Node.validateTiming())
}

// cluster builds the trial's cluster.
func (s Setup) cluster(rng *rand.Rand, trace func(time.Duration, uint64, string), drop func(*pb.Message) bool, onSend func(*pb.Message)) (*Cluster, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: nil random source", ErrInvalidConfig)
	}
	return NewCluster(ClusterConfig{
		Nodes:        s.Nodes,
		Node:         s.Node,
		Rand:         rng,
		Latency:      s.Latency,
		Loss:         s.Loss,
		Duplicate:    s.Duplicate,
		Drop:         drop,
		Disk:         s.Disk,
		AlignedTicks: s.AlignedTicks,
		OnSend:       onSend,
		Observer:     s.Observer,
		Trace:        trace,
	})
}

// Failover runs one trial of the failover experiment of Figure 16 of the
// Raft paper on real etcd raft nodes in virtual time, step by step as
// package sim's Failover does it for its own engine:
//
//  1. all nodes start (each ticker with its own phase); node 1 campaigns
//     at once, and the trial runs until every node follows it;
//  2. ShortLogs survivors, chosen at random, are made to miss the last
//     entry: the leader proposes one, and its appends to them are dropped
//     from then until the crash (its heartbeats still reach them), so they
//     cannot win; the trial waits until the other survivors stored it;
//  3. it waits for the leader's next heartbeat broadcast (MsgHeartbeat),
//     which resets every follower's election timer at about the same time;
//  4. it crashes the leader at a uniformly random point of the heartbeat
//     interval (HeartbeatTick*TickInterval) after that broadcast;
//  5. it runs until one node leads a term above the old leader's and every
//     other survivor accepted it (Node.Accepted: it stepped the new
//     leader's first append or heartbeat), or until MaxTime.
//
// Time is measured from the crash to the end of step 5. The trial is a
// function of s and rng's state. trace, if not nil, receives the trial's
// events and faults. Failover returns an error only for an invalid s.
func (s Setup) Failover(rng *rand.Rand, trace func(at time.Duration, node uint64, what string)) (Outcome, error) {
	if s.Nodes < 2 {
		return Outcome{}, fieldErr("Nodes", s.Nodes, "must be at least 2 for a failover (a survivor to elect)")
	}
	const (
		electing = iota
		replicating
		waitHeartbeat
		crashPending
		crashed
		done
	)
	var (
		c         *Cluster
		phase     = electing
		leader    uint64
		short     = make(map[uint64]bool)
		longs     []uint64
		target    uint64
		crashAt   time.Duration
		crashTerm uint64
		sent0     int
		endAt     time.Duration
		winTerm   uint64
		crashT    wheel.Timer
	)
	hb := s.Node.HeartbeatInterval()
	drop := func(m *pb.Message) bool {
		return phase < crashed && m.GetFrom() == leader && m.GetType() == pb.MsgApp && short[m.GetTo()]
	}
	onSend := func(m *pb.Message) {
		if phase == waitHeartbeat && m.GetFrom() == leader && m.GetType() == pb.MsgHeartbeat {
			phase = crashPending
			u := time.Duration(rng.Int64N(int64(hb)))
			if trace != nil {
				trace(c.Now(), leader, fmt.Sprintf("heartbeat broadcast; crash in %v", u))
			}
			crashT.Reset(u)
		}
	}
	var err error
	c, err = s.cluster(rng, trace, drop, onSend)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	if err := crashT.Init(c.Wheel().Wheel, func() {
		crashAt, sent0 = c.Now(), c.Stats().Sent
		crashTerm = c.Node(leader).Status().Term
		phase = crashed
		c.Crash(leader)
	}); err != nil {
		return Outcome{}, err
	}
	step := func() bool {
		switch phase {
		case electing:
			l, term := c.Leader()
			if l == 0 {
				return false
			}
			if fol, others := c.Accepted(l, term); fol < others || others != s.Nodes-1 {
				return false
			}
			leader, phase = l, replicating
			survivors := sortedOthers(c.IDs(), leader)
			perm := rng.Perm(len(survivors))
			for k, p := range perm {
				if k < s.ShortLogs {
					short[survivors[p]] = true
				} else {
					longs = append(longs, survivors[p])
				}
			}
			last, _ := c.Node(leader).Storage().LastIndex()
			target = last + 1
			if trace != nil {
				trace(c.Now(), 0, fmt.Sprintf("setup: leader n%d t%d; short logs: %v", leader, term, shortIDs(survivors, short)))
			}
			_ = c.Node(leader).Propose([]byte("failover"))
		case replicating:
			for _, id := range append(longs, leader) {
				if last, _ := c.Node(id).Storage().LastIndex(); last < target {
					return false
				}
			}
			phase = waitHeartbeat
		case crashed:
			l, term := c.Leader()
			if l == 0 || term <= crashTerm {
				return false
			}
			if fol, others := c.Accepted(l, term); fol < others {
				return false
			}
			phase, endAt, winTerm = done, c.Now(), term
		}
		return phase == done
	}
	if err := c.Start(); err != nil {
		return Outcome{}, err
	}
	_ = c.Node(1).Campaign()
	lo, hi := s.Node.ElectionRange()
	if !c.Run(100*(lo+hi), func() bool { step(); return phase >= crashed }) {
		if trace != nil {
			trace(c.Now(), 0, "setup did not finish")
		}
		return Outcome{Time: s.maxTime()}, nil
	}
	if !c.Run(crashAt+s.maxTime(), step) {
		terms := int(c.MaxTerm() - crashTerm)
		return Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Stats().Sent - sent0}, nil
	}
	terms := int(winTerm - crashTerm)
	return Outcome{Time: endAt - crashAt, Terms: terms, Splits: terms - 1, Messages: c.Stats().Sent - sent0, OK: true}, nil
}

func shortIDs(ids []uint64, short map[uint64]bool) []uint64 {
	var out []uint64
	for _, id := range ids {
		if short[id] {
			out = append(out, id)
		}
	}
	return out
}

// Bootstrap runs one cold start: every node starts fresh at time 0 (each
// ticker with its own phase unless AlignedTicks) and the trial measures
// the time until a leader is known to a majority (the leader and enough
// followers that accepted its first append or heartbeat), as package
// sim's Bootstrap does, or MaxTime. Bootstrap returns an error only for
// an invalid s.
func (s Setup) Bootstrap(rng *rand.Rand, trace func(at time.Duration, node uint64, what string)) (Outcome, error) {
	c, err := s.cluster(rng, trace, nil, nil)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	quorum := s.Nodes/2 + 1
	var winTerm uint64
	elected := func() bool {
		l, term := c.Leader()
		if l == 0 {
			return false
		}
		if fol, _ := c.Accepted(l, term); 1+fol < quorum {
			return false
		}
		winTerm = term
		return true
	}
	if err := c.Start(); err != nil {
		return Outcome{}, err
	}
	if !c.Run(s.maxTime(), elected) {
		terms := int(c.MaxTerm())
		return Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Stats().Sent}, nil
	}
	terms := int(winTerm)
	return Outcome{Time: c.Now(), Terms: terms, Splits: terms - 1, Messages: c.Stats().Sent, OK: true}, nil
}
