package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/wheel"
)

// Failover is the experiment of Figure 16 of the Raft paper (Ongaro and
// Ousterhout, extended version; Figure 14 in the USENIX ATC'14
// proceedings): a stable cluster loses its leader, and the trial measures
// the time from the crash until every surviving server accepted the new
// leader's first heartbeat.
//
// Each trial:
//  1. starts all servers; server 1 campaigns at once and the trial runs
//     until every server follows it;
//  2. gives the leader and Nodes-1-ShortLogs survivors logs one entry
//     longer than the other ShortLogs survivors (chosen at random), so the
//     short ones cannot win;
//  3. waits for the leader's next heartbeat broadcast: it resets every
//     follower's election timer at about the same time (the paper
//     synchronized the heartbeat RPCs before killing the leader, the worst
//     case for split votes);
//  4. crashes the leader (and Crash-1 other servers chosen at random, the
//     short logs going to survivors) at a uniformly random point of the
//     heartbeat interval after that broadcast, or right after it with
//     CrashAfterHeartbeat;
//  5. runs until one server leads a term above the old leader's and every
//     other survivor accepted its heartbeat (election.EventLeaderKnown), or
//     until MaxTime. Setup.Until stops the clock earlier: when the leader
//     is elected, or when it and its followers make a majority.
//
// With Setup.Settle the trial follows raftadapter's real-cluster harness
// instead: in step 1 nobody campaigns at once (the servers elect a leader
// on their own), and steps 3 and 4 become a crash Settle plus a uniform
// draw from [0, TimeoutMin/5) after step 2.
type Failover struct{ Setup }

// Result summarizes failover trials.
func (f Failover) Result(outs []sim.Outcome) Result {
	r := f.Setup.result("failover")
	r.Alive = f.Nodes - max(f.Crash, 1)
	return summarize(r, outs)
}

// Trial runs one failover.
func (f Failover) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	s := f.Setup
	tr := newTracker(s.Nodes)
	var c *sim.Cluster
	var (
		phase     int // 0 setup, 1 waiting for the heartbeat, 2 crash scheduled, 3 crashed, 4 done
		leader    election.ID
		crashing  []election.ID
		crashAt   time.Duration
		crashTerm uint64
		sent0     int
		endAt     time.Duration
		winTerm   uint64
	)
	hb := s.heartbeat()
	crash := max(s.Crash, 1)
	until := s.Until.or(UntilAll)
	var crashTimer *wheel.Timer
	check := func(at time.Duration) {
		switch phase {
		case 0:
			l, term, fol, others := tr.accepted(c)
			if l != election.None && fol == others && others == s.Nodes-1 {
				leader = l
				phase = 1
				// Logs: the leader and the first survivors in a random order
				// are one entry longer than the ShortLogs others.
				for _, id := range c.IDs() {
					c.Log(id).Set(10, 1)
				}
				var survivors []election.ID
				for _, id := range c.IDs() {
					if id != leader {
						survivors = append(survivors, id)
					}
				}
				perm := rng.Perm(len(survivors))
				// The first Crash-1 of the permutation crash with the
				// leader; the next ShortLogs get short logs.
				crashing = []election.ID{leader}
				for _, k := range perm[:crash-1] {
					crashing = append(crashing, survivors[k])
				}
				for _, k := range perm[crash-1 : crash-1+s.ShortLogs] {
					c.Log(survivors[k]).Set(9, 1)
				}
				if trace != nil {
					trace(sim.FormatEvent(at, election.None, fmt.Sprintf("setup done: leader n%d t%d; short logs: %v", leader, term, shortList(c, survivors))))
				}
				if s.Settle > 0 {
					// raftadapter's harness: no synchronized heartbeat.
					phase = 2
					wait := s.Settle + time.Duration(rng.Int64N(int64(max(s.TimeoutMin/5, 1))))
					if trace != nil {
						trace(sim.FormatEvent(at, leader, fmt.Sprintf("settling; crash in %v", wait)))
					}
					crashTimer.Reset(wait)
				}
			}
		case 3:
			l, term, fol, others := tr.accepted(c)
			if until.reached(l != election.None && term > crashTerm, fol, others, s.Nodes) {
				phase, endAt, winTerm = 4, at, term
			}
		}
	}
	cfg := s.clusterConfig(ctx, rng, trace, tr, func(e election.Event) { check(e.At) })
	cfg.OnSend = func(m election.Message) {
		if phase == 1 && m.From == leader && m.Type == election.MsgHeartbeat {
			phase = 2
			u := time.Duration(rng.Int64N(int64(hb)))
			if s.CrashAfterHeartbeat {
				u = 1 // right after the broadcast has left
			}
			if trace != nil {
				trace(sim.FormatEvent(c.Now(), leader, fmt.Sprintf("heartbeat broadcast; crash in %v", u)))
			}
			crashTimer.Reset(u)
		}
	}
	var err error
	c, err = sim.NewCluster(cfg)
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	crashTimer = new(wheel.Timer)
	if err := crashTimer.Init(c.Wheel().Wheel, func() {
		crashAt, crashTerm, sent0 = c.Now(), c.Node(leader).Status().Term, c.Stats().Sent
		phase = 3
		for _, id := range crashing {
			c.Crash(id)
		}
	}); err != nil {
		return sim.Outcome{}, err
	}
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	if s.Settle == 0 {
		if err := c.Node(1).Campaign(); err != nil {
			return sim.Outcome{}, err
		}
	}
	if !c.Run(s.setupLimit(), func() bool { return phase >= 3 }) {
		if err := c.Err(); err != nil {
			return sim.Outcome{}, err
		}
		return sim.Outcome{Time: s.maxTime(), NoLeader: true}, nil
	}
	if !c.RunFor(s.maxTime(), func() bool { return phase == 4 }) {
		if err := c.Err(); err != nil {
			return sim.Outcome{}, err
		}
		terms := int(tr.maxTerm - crashTerm)
		return sim.Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Stats().Sent - sent0}, nil
	}
	if err := c.Err(); err != nil {
		return sim.Outcome{}, err
	}
	terms := int(winTerm - crashTerm)
	return sim.Outcome{
		Time:     endAt - crashAt,
		Terms:    terms,
		Splits:   terms - 1,
		Messages: c.Stats().Sent - sent0,
		OK:       true,
	}, nil
}

func shortList(c *sim.Cluster, ids []election.ID) []election.ID {
	var out []election.ID
	for _, id := range ids {
		if i, _ := c.Log(id).Last(); i < 10 {
			out = append(out, id)
		}
	}
	return out
}

// Bootstrap is the cold-start experiment: every server starts fresh at the
// same instant with an empty log; a trial measures the time until a leader
// is known to a majority (the leader and enough followers that accepted
// its first heartbeat), or MaxTime. Setup.Until stops the clock when the
// leader is elected, or when every server accepted it, instead.
type Bootstrap struct{ Setup }

// Result summarizes cold starts.
func (b Bootstrap) Result(outs []sim.Outcome) Result {
	return summarize(b.Setup.result("bootstrap"), outs)
}

// Trial runs one cold start.
func (b Bootstrap) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	s := b.Setup
	tr := newTracker(s.Nodes)
	var c *sim.Cluster
	var done bool
	var endAt time.Duration
	var winTerm uint64
	until := s.Until.or(UntilMajority)
	cfg := s.clusterConfig(ctx, rng, trace, tr, func(e election.Event) {
		if !done {
			if l, term, fol, others := tr.accepted(c); until.reached(l != election.None, fol, others, s.Nodes) {
				done, endAt, winTerm = true, e.At, term
			}
		}
	})
	c, err := sim.NewCluster(cfg)
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	finished := c.Run(s.maxTime(), func() bool { return done })
	if err := c.Err(); err != nil {
		return sim.Outcome{}, err
	}
	if !finished {
		terms := int(tr.maxTerm)
		return sim.Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Stats().Sent}, nil
	}
	terms := int(winTerm)
	return sim.Outcome{Time: endAt, Terms: terms, Splits: terms - 1, Messages: c.Stats().Sent, OK: true}, nil
}
