package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// Stability measures what too-small timeouts cost in a healthy cluster:
// the leader never crashes, so every election is unnecessary. Each trial
//  1. starts all servers; server 1 campaigns at once (with Setup.Settle,
//     nobody does and the servers elect a leader on their own), and the
//     trial runs until every server follows one leader;
//  2. then runs the cluster for For of virtual time under the network
//     model (latency, loss, duplication) and counts, during that window,
//     the election rounds started (election.EventElectionStart that
//     increase a term), the pre-vote rounds (EventElectionStart with
//     PreVote, which change no term) and the leaders elected
//     (EventLeaderElected).
//
// If the cluster never settles within 100 times TimeoutMin+TimeoutMax,
// the window starts there anyway and the outcome is not OK; elections in
// the window are still counted.
//
// The outcome's Time is the window (For), Terms the increase of the
// highest term during it, Messages the messages sent during it.
type Stability struct {
	Setup
	// For is the measured virtual time of one trial; 0 means 10 minutes.
	// Must not be negative.
	For time.Duration
}

// DefaultStableFor is the window of a Stability trial when For is 0.
const DefaultStableFor = 10 * time.Minute

func (s Stability) window() time.Duration {
	if s.For > 0 {
		return s.For
	}
	return DefaultStableFor
}

// Validate reports the first invalid field, or nil: a *sim.FieldError
// wrapping ErrInvalidConfig.
func (s Stability) Validate() error {
	if s.For < 0 {
		return fieldErr("For", s.For, "must not be negative (0 means %v)", DefaultStableFor)
	}
	return s.Setup.Validate()
}

// Trial runs one stable window.
func (s Stability) Trial(ctx context.Context, _ int, rng *rand.Rand, trace func(string)) (sim.Outcome, error) {
	return s.trial(ctx, rng, trace, nil)
}

// trial runs one window; apply, if not nil, changes the cluster (its
// links) when the window begins, given the settled leader (None if the
// cluster never settled).
func (s Stability) trial(ctx context.Context, rng *rand.Rand, trace func(string), apply func(*sim.Cluster, election.ID)) (sim.Outcome, error) {
	st := s.Setup
	tr := newTracker(st.Nodes)
	var c *sim.Cluster
	var (
		measuring  bool
		settled    bool
		out        sim.Outcome
		term0      uint64
		lastAt     time.Duration
		leaderless bool
	)
	// account adds the time since the last instant to Leaderless and
	// records whether a leader reaches a majority now.
	account := func(at time.Duration) {
		if leaderless {
			out.Leaderless += at - lastAt
		}
		lastAt, leaderless = at, !tr.functional(c)
	}
	begin := func(at time.Duration, why string) {
		measuring = true
		term0 = tr.maxTerm
		out.Messages = -int(c.Stats().Sent)
		if trace != nil {
			trace(sim.FormatEvent(at, election.None, why))
		}
		if apply != nil {
			l, _, _, _ := tr.accepted(c)
			apply(c, l)
		}
		lastAt, leaderless = at, !tr.functional(c)
	}
	cfg := st.clusterConfig(ctx, rng, trace, tr, func(e election.Event) {
		if measuring {
			account(e.At)
			switch e.Type {
			case election.EventElectionStart:
				if e.PreVote {
					out.PreVotes++
				} else {
					out.Elections++
				}
			case election.EventLeaderElected:
				out.LeaderChanges++
			}
			return
		}
		if l, term, fol, others := tr.accepted(c); l != election.None && fol == others && others == st.Nodes-1 {
			settled = true
			begin(e.At, fmt.Sprintf("stable: leader n%d t%d; counting elections for %v", l, term, s.window()))
		}
	})
	var err error
	c, err = sim.NewCluster(cfg)
	if err != nil {
		return sim.Outcome{}, err
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		return sim.Outcome{}, err
	}
	if st.Settle == 0 {
		if err := c.Node(1).Campaign(); err != nil {
			return sim.Outcome{}, err
		}
	}
	setupLimit := st.setupLimit()
	if st.Nodes == 1 {
		// A single server leads alone; it has no follower to accept it.
		c.Run(setupLimit, func() bool { return tr.leading[1] != 0 })
		if tr.leading[1] != 0 {
			settled = true
			begin(c.Now(), "stable: single server leads")
		}
	} else {
		c.Run(setupLimit, func() bool { return measuring })
	}
	if !measuring {
		begin(setupLimit, "never stable during setup; counting anyway")
	}
	start := c.Now()
	if !settled {
		start = setupLimit
	}
	end := start + s.window()
	if end < start {
		end = math.MaxInt64 // saturate
	}
	c.Run(end, func() bool { return false })
	if err := c.Err(); err != nil {
		return sim.Outcome{}, err
	}
	account(end)
	out.Time = s.window()
	out.Terms = int(tr.maxTerm - term0)
	out.Messages += int(c.Stats().Sent)
	out.OK = settled
	return out, nil
}

// StabilitySummary aggregates the outcomes of Stability trials.
type StabilitySummary struct {
	// Trials is the number of windows measured; Unsettled of them started
	// without a leader followed by every server (Outcome.OK false).
	Trials, Unsettled int
	// Measured is the total virtual time of the windows; NodeHours is
	// Measured times the number of servers, in hours.
	Measured  time.Duration
	NodeHours float64
	// Elections, PreVotes and LeaderChanges are totals over the windows:
	// election rounds started (a term increased), pre-vote rounds started,
	// leaders elected.
	Elections, PreVotes, LeaderChanges int
	// ElectionsPerNodeHour and PreVotesPerNodeHour divide the totals by
	// NodeHours; LeaderChangesPerHour divides LeaderChanges by Measured
	// (cluster hours). All are 0 when nothing was measured.
	ElectionsPerNodeHour, PreVotesPerNodeHour, LeaderChangesPerHour float64
	// TrialsWithElection is the number of windows with at least one
	// election round.
	TrialsWithElection int
	// Leaderless is the total time of the windows during which no leader
	// reached a majority; LeaderlessPerHour is that per hour of windows.
	Leaderless        time.Duration
	LeaderlessPerHour time.Duration
}

// Summarize aggregates the outcomes of s's trials.
func (s Stability) Summarize(outs []sim.Outcome) StabilitySummary {
	return summarizeStability(s.Nodes, outs)
}

// summarizeStability aggregates the outcomes of Stability trials of a
// cluster of nodes servers.
func summarizeStability(nodes int, outs []sim.Outcome) StabilitySummary {
	return stabilityOf(nodes, sim.Summarize(outs))
}
