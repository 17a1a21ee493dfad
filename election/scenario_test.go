package election_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest/scenario"
	"github.com/raftick/raftick/repeated"
)

// TestScenarios runs the stories under testdata/ in the scenario
// vocabulary of election/electiontest/scenario (cluster, start, campaign,
// crash, restart, cut, isolate, partition, heal, run, status). Each file
// opens with a comment saying what it shows. This harness's cluster and
// commands:
//
//	cluster n=3 [et=150ms] [hb=50ms] [delay=1ms] [seed=1] [prevote] [checkquorum]
//	        [sticky] [stickiness=contact|until-timeout] [detect=contact]
//	        [jitter=none|prop|extra:10ms] [vote-stepdown] [wait] [keep-timer]
//	        [hb-jitter] [hb-per-peer] [priority=(p1,p2,...)]
//	                                    create the nodes (not started); wait is
//	                                    WaitForVoteTimeout, keep-timer
//	                                    KeepTimerOnStepDown, hb-jitter heartbeats
//	                                    every [hb, 2hb)
//	log id=N index=I term=T             set a node's last log entry
//	transfer from=A to=B                leadership transfer
//	lease                               print every node's role, term and lease (QuorumContact)
//	timers                              print every node's pending election and vote deadlines
//
// Events printed by run: ElectionStart, LeaderElected, LeaderKnown,
// StepDown and VoteDenied ("run ... verbose" prints all but Ignored). Every
// command also runs the safety checker over all events so far, and "run"
// checks the lease invariant after every advance of virtual time.
func TestScenarios(t *testing.T) {
	scenario.Files(t, "testdata", func(t *testing.T, d *datadriven.TestData) (scenario.Cluster, string) {
		c, out := newScenarioCluster(t, d)
		return &scenarioCluster{c: c, t: t}, out
	})
}

// scenarioCluster is a cluster driven by a scenario file.
type scenarioCluster struct {
	c       *cluster
	t       *testing.T
	verbose bool // of the last run: later commands print as much
}

func newScenarioCluster(t *testing.T, d *datadriven.TestData) (*cluster, string) {
	dur := func(key string, def time.Duration) time.Duration { return scenario.Duration(t, d, key, def) }
	var n int
	d.ScanArgs(t, "n", &n)
	var seed uint64 = 1
	d.MaybeScanArgs(t, "seed", &seed)
	et, hb := dur("et", 150*time.Millisecond), dur("hb", 50*time.Millisecond)
	var prios []int
	if d.HasArg("priority") {
		d.ScanArgs(t, "priority", &prios)
		require.Len(t, prios, n, "one priority per node")
	}
	jitter := repeated.Proportional(1)
	var js string
	if d.MaybeScanArgs(t, "jitter", &js) {
		switch {
		case js == "none":
			jitter = repeated.None()
		case js == "prop":
		case strings.HasPrefix(js, "extra:"):
			x, err := time.ParseDuration(strings.TrimPrefix(js, "extra:"))
			require.NoError(t, err)
			jitter = repeated.UniformExtra(x)
		default:
			d.Fatalf(t, "unknown jitter %q", js)
		}
	}
	var detect, stickiness string
	d.MaybeScanArgs(t, "detect", &detect)
	d.MaybeScanArgs(t, "stickiness", &stickiness)
	c := newCluster(t, clusterOpts{n: n, delay: dur("delay", time.Millisecond), seed: seed, config: func(cfg *election.Config) {
		cfg.ElectionTimeout, cfg.HeartbeatInterval = et, hb
		cfg.VoteTimeout = et
		cfg.ElectionJitter, cfg.VoteJitter = jitter, jitter
		cfg.StepDownInterval = et / 2
		cfg.PreVote = d.HasArg("prevote")
		cfg.CheckQuorum = d.HasArg("checkquorum")
		cfg.LeaderStickiness = d.HasArg("sticky")
		cfg.Emulate.StepDownWhenVoteTimedOut = d.HasArg("vote-stepdown")
		cfg.Emulate.WaitForVoteTimeout = d.HasArg("wait")
		cfg.Emulate.KeepTimerOnStepDown = d.HasArg("keep-timer")
		cfg.Emulate.HeartbeatPerPeer = d.HasArg("hb-per-peer")
		if d.HasArg("hb-jitter") {
			cfg.HeartbeatJitter = repeated.Proportional(1)
		}
		switch stickiness {
		case "", "contact":
		case "until-timeout":
			cfg.Stickiness = election.StickyUntilTimeout
		default:
			d.Fatalf(t, "unknown stickiness %q", stickiness)
		}
		if detect == "contact" {
			cfg.Detection = election.CheckLastContact
		}
		if prios != nil {
			cfg.Priority = prios[cfg.ID-1]
			cfg.Priorities = make(map[election.ID]int)
			for i, p := range prios {
				cfg.Priorities[election.ID(i+1)] = p
			}
		}
	}})
	c.tracing = true
	c.leases = true
	return c, fmt.Sprintf("%d nodes, election timeout %v, heartbeat %v\n", n, et, hb)
}

func (s *scenarioCluster) Check() error { return s.c.check.Err() }

func (s *scenarioCluster) Start(id election.ID) (string, error) {
	if id != 0 {
		s.c.start(s.t, id)
	} else {
		s.c.startAll(s.t)
	}
	return s.c.flush(s.verbose), nil
}

func (s *scenarioCluster) Campaign(id election.ID, _ int) (string, error) {
	err := s.c.nodes[id].Campaign()
	return s.c.flush(s.verbose), err
}

func (s *scenarioCluster) Crash(id election.ID) (string, error) {
	s.c.crash(id)
	return fmt.Sprintf("%v n%d crashed\n", fmtAt(s.c.v.Now()), id), nil
}

func (s *scenarioCluster) Restart(id election.ID) (string, error) {
	s.c.start(s.t, id)
	return s.c.flush(s.verbose) + s.c.statusOf(id), nil
}

func (s *scenarioCluster) Cut(from, to election.ID) (string, error) {
	s.c.net.Cut(from, to)
	return fmt.Sprintf("link %d->%d down\n", from, to), nil
}

func (s *scenarioCluster) Isolate(id election.ID) (string, error) {
	s.c.net.Isolate(id, s.c.ids...)
	return fmt.Sprintf("n%d isolated\n", id), nil
}

func (s *scenarioCluster) Partition(groups [][]election.ID) (string, error) {
	s.c.net.Partition(groups...)
	return fmt.Sprintf("partition %v\n", groups), nil
}

func (s *scenarioCluster) Heal() (string, error) {
	s.c.net.Heal()
	return "network healed\n", nil
}

func (s *scenarioCluster) Run(r scenario.Run) (string, error) {
	c := s.c
	s.verbose = r.Verbose
	if !r.UntilLeader {
		c.runUntil(c.v.Now()+r.For, func() bool { return false })
		return c.flush(s.verbose), nil
	}
	start := c.v.Now()
	ok := c.runUntil(start+r.Limit, func() bool { _, ok := c.stableLeader(); return ok })
	out := c.flush(s.verbose)
	if l, _ := c.stableLeader(); ok {
		return out + fmt.Sprintf("stable leader n%d after %v\n", l, (c.v.Now()-start).Round(time.Microsecond)), nil
	}
	return out + "no stable leader\n", nil
}

func (s *scenarioCluster) Status() (string, error) {
	var b strings.Builder
	for _, n := range s.c.ids {
		b.WriteString(s.c.statusOf(n))
	}
	return b.String(), nil
}

func (s *scenarioCluster) Command(t *testing.T, d *datadriven.TestData) (string, bool) {
	c := s.c
	id := func(key string) election.ID { return scenario.ID(t, d, key) }
	var b strings.Builder
	switch d.Cmd {
	case "log":
		var idx, term uint64
		d.ScanArgs(t, "index", &idx)
		d.ScanArgs(t, "term", &term)
		l := c.logs[id("id")]
		l.index, l.term = idx, term
		fmt.Fprintf(&b, "n%d log (%d, %d)\n", id("id"), idx, term)
	case "transfer":
		if err := c.nodes[id("from")].TransferLeadership(id("to")); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		b.WriteString(c.flush(s.verbose))
	case "lease":
		for _, v := range c.leaseViews() {
			fmt.Fprintf(&b, "n%d: term=%d leader=%v lease=%v\n", v.ID, v.Term, v.Leader, v.Lease)
		}
		c.checkLeases()
	case "timers":
		for _, id := range c.ids {
			n := c.nodes[id]
			if n == nil {
				fmt.Fprintf(&b, "n%d: down\n", id)
				continue
			}
			el, elOK, vote, voteOK := n.TimerDeadlines()
			show := func(d time.Duration, ok bool) string {
				if !ok {
					return "-"
				}
				return d.Round(time.Microsecond).String()
			}
			fmt.Fprintf(&b, "n%d: %s election timer %s, vote timer %s\n", id, n.Status().Role, show(el, elOK), show(vote, voteOK))
		}
	default:
		return "", false
	}
	return b.String(), true
}

func fmtAt(at time.Duration) string {
	return fmt.Sprintf("%10s", at.Round(time.Microsecond))
}

func (c *cluster) statusOf(id election.ID) string {
	n := c.nodes[id]
	if n == nil {
		return fmt.Sprintf("n%d: down\n", id)
	}
	st := n.Status()
	return fmt.Sprintf("n%d: %s term=%d vote=%d leader=%d\n", id, st.Role, st.Term, st.Vote, st.Leader)
}

// flush formats and forgets the traced events.
func (c *cluster) flush(verbose bool) string {
	var b strings.Builder
	for _, e := range c.trace {
		switch e.Type {
		case election.EventElectionStart, election.EventLeaderElected, election.EventLeaderKnown,
			election.EventStepDown, election.EventVoteDenied:
		case election.EventIgnored:
			continue
		default:
			if !verbose {
				continue
			}
		}
		b.WriteString(fmtEvent(e))
	}
	c.trace = c.trace[:0]
	return b.String()
}

func fmtEvent(e election.Event) string {
	s := fmt.Sprintf("%s n%d %s t%d", fmtAt(e.At), e.Node, e.Type, e.Term)
	switch e.Type {
	case election.EventRoleChange:
		s += " " + e.Role.String()
	case election.EventLeaderKnown:
		s += " leader=" + strconv.FormatUint(uint64(e.Leader), 10)
	case election.EventVoteGranted, election.EventVoteDenied:
		s += " to=" + strconv.FormatUint(uint64(e.Peer), 10)
	}
	if e.PreVote {
		s += " pre-vote"
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s + "\n"
}
