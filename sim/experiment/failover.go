package experiment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/quorum"
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
//     With TimersAtCrash every survivor's election timer starts at the
//     crash instant, and the leader's heartbeats still in flight are
//     dropped (AvailSim's model);
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

// Validate reports the first invalid field of f's Setup (Setup.Validate),
// or a cluster whose survivors of the crash are no majority, which could
// never elect a new leader (Nodes, for fewer than 3 servers).
func (f Failover) Validate() error {
	if err := f.Setup.Validate(); err != nil {
		return err
	}
	if alive := f.Nodes - max(f.Crash, 1); !quorum.Majority(f.Nodes).Reached(alive) {
		return fieldErr("Nodes", f.Nodes, "cannot elect a leader after the crash: %d of %d servers running is not a majority (a failover needs at least 3 servers)", alive, f.Nodes)
	}
	return nil
}

// Result summarizes failover trials.
func (f Failover) Result(outs []sim.Outcome) Result {
	r := f.Setup.result("failover")
	r.Alive = f.Nodes - max(f.Crash, 1)
	return summarize(r, outs)
}

// Trial runs one failover.
func (f Failover) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	return RunFailover(ctx, Raftick{}, f.Setup, rng, trace)
}

// The phases of a failover trial.
const (
	electing     = iota // until every server follows the first leader
	replicating         // until the short logs are short
	waitingBeat         // until the leader's next heartbeat broadcast
	crashPending        // until the crash timer fires
	crashed             // until the stopping point
	measured
)

// RunFailover runs one trial of Failover's procedure for s on engine e.
// The trial is a function of s, e and rng's state; trace, if not nil,
// receives its event log. It returns an error for a cluster e cannot
// build or run, an invalid s (Setup.Validate's error, before anything
// runs), an interrupted run, and a *sim.SafetyError if the
// servers broke election safety.
func RunFailover(ctx context.Context, e Engine, s Setup, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := s.Validate(); err != nil {
		return sim.Outcome{}, err
	}
	var (
		c         Cluster
		phase     = electing
		leader    election.ID
		crashing  []election.ID
		ready     func() bool
		failed    error
		crashAt   time.Duration
		crashTerm uint64
		sent0     int
		endAt     time.Duration
		winTerm   uint64
		crashT    wheel.Timer
		crashDue  time.Duration // when crashT is due
		beatAt    time.Duration // the leader's last heartbeat
	)
	hb := s.heartbeat()
	crash := max(s.Crash, 1)
	until := s.Until.or(UntilAll)
	note := func(at time.Duration, id election.ID, format string, args ...any) {
		if trace != nil {
			trace(sim.FormatEvent(at, id, fmt.Sprintf(format, args...)))
		}
	}
	check := func() {
		switch phase {
		case electing:
			l, term := c.Leader()
			if l == election.None {
				return
			}
			if fol, others := c.Accepted(l, term); fol != others || others != s.Nodes-1 {
				return
			}
			leader = l
			var survivors []election.ID
			for _, id := range c.IDs() {
				if id != leader {
					survivors = append(survivors, id)
				}
			}
			// The first Crash-1 of a random order of the survivors crash
			// with the leader; the next ShortLogs get short logs.
			perm := rng.Perm(len(survivors))
			crashing = []election.ID{leader}
			for _, k := range perm[:crash-1] {
				crashing = append(crashing, survivors[k])
			}
			isShort := make([]bool, len(survivors))
			for _, k := range perm[crash-1 : crash-1+s.ShortLogs] {
				isShort[k] = true
			}
			var short []election.ID
			for k, id := range survivors {
				if isShort[k] {
					short = append(short, id)
				}
			}
			note(c.Now(), election.None, "setup done: leader n%d t%d; short logs: %v", leader, term, short)
			phase = replicating
			if ready, failed = c.ShortenLogs(leader, short); failed != nil {
				phase = measured
				return
			}
			fallthrough
		case replicating:
			if !ready() {
				return
			}
			phase = waitingBeat
			if s.Settle > 0 {
				// raftadapter's harness: no synchronized heartbeat.
				phase = crashPending
				wait := s.Settle + time.Duration(rng.Int64N(int64(max(s.TimeoutMin/5, 1))))
				note(c.Now(), leader, "settling; crash in %v", wait)
				crashDue = c.Now() + wait
				crashT.Reset(wait)
			}
		case crashed:
			l, term := c.Leader()
			var fol, others int
			if l != election.None {
				fol, others = c.Accepted(l, term)
			}
			if until.reached(l != election.None && term > crashTerm, fol, others, s.Nodes) {
				phase, endAt, winTerm = measured, c.Now(), term
			}
		}
	}
	heartbeat := func(from election.ID) {
		if from == leader {
			beatAt = c.Now()
		}
		if phase == waitingBeat && from == leader {
			phase = crashPending
			u := time.Duration(rng.Int64N(int64(hb)))
			if s.CrashAfterHeartbeat {
				u = 1 // right after the broadcast has left
			}
			note(c.Now(), leader, "heartbeat broadcast; crash in %v", u)
			crashDue = c.Now() + u
			crashT.Reset(u)
		}
	}
	c, err := e.NewCluster(ctx, s, rng, Hooks{Changed: check, Heartbeat: heartbeat, Trace: trace})
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if s.HeartbeatOffset {
		return sim.Outcome{}, errHeartbeatOffset
	}
	var starter TimerStarter
	if s.TimersAtCrash {
		var ok bool
		if starter, ok = c.(TimerStarter); !ok {
			return sim.Outcome{}, errNoTimerStarter
		}
	}
	if err := crashT.Init(c.Wheel(), func() {
		// The crash is timed from when it was due: a real-time wheel runs
		// the timer late, and the survivors cannot tell a leader that died
		// then from one that died silently since. If the leader spoke
		// meanwhile, the crash is now. (On a virtual wheel both are now.)
		crashAt, crashTerm, sent0 = c.Now(), c.Term(leader), c.Sent()
		if crashDue < crashAt && beatAt <= crashDue {
			crashAt = crashDue
		}
		phase = crashed
		for _, id := range crashing {
			c.Crash(id)
		}
		if starter != nil {
			note(c.Now(), leader, "survivors' timers start now")
			starter.StartTimersAt(leader, crashTerm, survivorsOf(c, crashing))
		}
	}); err != nil {
		return sim.Outcome{}, err
	}
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	if s.Settle == 0 {
		if err := c.Campaign(1); err != nil {
			return sim.Outcome{}, err
		}
	}
	settled := c.Run(s.setupLimit(), func() bool { return phase >= crashed })
	if err := trialErr(c, failed); err != nil {
		return sim.Outcome{}, err
	}
	if !settled {
		note(c.Now(), election.None, "setup did not finish")
		return sim.Outcome{Time: s.maxTime(), NoLeader: true}, nil
	}
	finished := c.Run(addSat(crashAt, s.maxTime()), func() bool { return phase == measured })
	if err := trialErr(c, nil); err != nil {
		return sim.Outcome{}, err
	}
	if !finished {
		terms := int(c.MaxTerm() - crashTerm)
		return sim.Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Sent() - sent0}, nil
	}
	terms := int(winTerm - crashTerm)
	return sim.Outcome{
		Time:     endAt - crashAt,
		Terms:    terms,
		Splits:   terms - 1,
		Messages: c.Sent() - sent0,
		OK:       true,
	}, nil
}

// trialErr returns why a trial's run cannot be trusted: the cluster's
// error (a panic, broken election safety, an interruption), or failed.
func trialErr(c Cluster, failed error) error {
	if err := c.Err(); err != nil {
		return err
	}
	return failed
}

// Bootstrap is the cold-start experiment: every server starts fresh at the
// same instant, with equal logs, or with ShortLogs servers chosen at
// random one entry behind the others (so they cannot win); a trial
// measures the time until a leader is known to a majority (the leader and enough followers that accepted
// its first heartbeat), or MaxTime. Setup.Until stops the clock when the
// leader is elected, or when every server accepted it, instead. The
// procedure is RunBootstrap's, the same on every Engine, with Failover's
// safety check.
type Bootstrap struct{ Setup }

// Result summarizes cold starts.
func (b Bootstrap) Result(outs []sim.Outcome) Result {
	return summarize(b.Setup.result("bootstrap"), outs)
}

// Trial runs one cold start.
func (b Bootstrap) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	return RunBootstrap(ctx, Raftick{}, b.Setup, rng, trace)
}

// RunBootstrap runs one trial of Bootstrap's procedure for s on engine e
// (see RunFailover).
func RunBootstrap(ctx context.Context, e Engine, s Setup, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	if err := s.Validate(); err != nil {
		return sim.Outcome{}, err
	}
	var c Cluster
	var done bool
	var endAt time.Duration
	var winTerm uint64
	until := s.Until.or(UntilMajority)
	check := func() {
		if done {
			return
		}
		l, term := c.Leader()
		if l == election.None {
			return
		}
		if fol, others := c.Accepted(l, term); until.reached(true, fol, others, s.Nodes) {
			done, endAt, winTerm = true, c.Now(), term
		}
	}
	c, err := e.NewCluster(ctx, s, rng, Hooks{Changed: check, Trace: trace})
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if s.ShortLogs > 0 {
		ids := c.IDs()
		var short []election.ID
		for _, k := range rng.Perm(len(ids))[:s.ShortLogs] {
			short = append(short, ids[k])
		}
		if trace != nil {
			trace(sim.FormatEvent(c.Now(), election.None, fmt.Sprintf("short logs: %v", short)))
		}
		ready, err := c.ShortenLogs(election.None, short)
		if err != nil {
			return sim.Outcome{}, err
		}
		if !ready() {
			return sim.Outcome{}, errors.New("experiment: the engine cannot shorten logs before the servers start")
		}
	}
	var offset time.Duration
	if s.HeartbeatOffset {
		offset = time.Duration(rng.Int64N(int64(max(s.heartbeat(), 1))))
		if trace != nil {
			trace(sim.FormatEvent(offset, election.None, "the clock starts (heartbeat offset)"))
		}
	}
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	finished := c.Run(s.maxTime(), func() bool { return done })
	if err := trialErr(c, nil); err != nil {
		return sim.Outcome{}, err
	}
	if !finished {
		terms := int(c.MaxTerm())
		return sim.Outcome{Time: s.maxTime(), Terms: terms, Splits: terms, Messages: c.Sent()}, nil
	}
	terms := int(winTerm)
	return sim.Outcome{Time: max(endAt-offset, 0), Terms: terms, Splits: terms - 1, Messages: c.Sent(), OK: true}, nil
}

// survivorsOf returns the servers of c that are not in crashed.
func survivorsOf(c Cluster, crashed []election.ID) []election.ID {
	var out []election.ID
	for _, id := range c.IDs() {
		down := false
		for _, x := range crashed {
			down = down || x == id
		}
		if !down {
			out = append(out, id)
		}
	}
	return out
}
