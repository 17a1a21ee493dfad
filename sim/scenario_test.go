package sim_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/election/electiontest/scenario"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// TestScenarios runs the stories in testdata/*.txt, in the scenario
// vocabulary of election/electiontest/scenario (cluster, start, campaign,
// crash, restart, cut, isolate, partition, heal, run, status): a cluster
// on a virtual wheel, driven step by step, printing what happened, with
// the election safety checker over every event after every command.
// Rewrite the expected output with:
// go test ./sim -run TestScenarios -rewrite
//
// This harness's cluster and commands:
//
//	cluster n=3 [latency=SPEC] [disk=SPEC] [timeout=150ms-300ms] [seed=N] [blocking] [wait] [loss=P] [dup=P]
//	        create the servers (not started): n, latency, disk, timeout, loss
//	        and dup are experiment.Setup settings (Setup.Set); blocking is
//	        DiskBlocks, wait is CandidatesWait (WaitForVoteTimeout)
//	pause id=N for=D                  freeze a server for D
//	stats                             network counters
func TestScenarios(t *testing.T) {
	scenario.Files(t, "testdata", func(t *testing.T, d *datadriven.TestData) (scenario.Cluster, string) {
		s := experiment.Setup{Nodes: 3, TimeoutMin: 150 * ms, TimeoutMax: 300 * ms, Network: sim.Network{Latency: sim.Fixed(ms)}}
		seed := uint64(1)
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "seed":
				seed, _ = strconv.ParseUint(a.Vals[0], 10, 64)
			case "blocking":
				s.DiskBlocks = true
			case "wait":
				s.CandidatesWait = true
			case "n":
				if err := s.Set("nodes", a.Vals[0]); err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
			default:
				if err := s.Set(a.Key, a.Vals[0]); err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
			}
		}
		h := &simCluster{check: electiontest.NewChecker(s.Nodes)}
		cfg := s.Config(sim.TrialRand(seed, 0))
		cfg.Observer = func(e election.Event) {
			h.check.Observe(e)
			switch e.Type {
			case election.EventElectionStart, election.EventLeaderElected, election.EventLeaderKnown,
				election.EventStepDown, election.EventVoteGranted, election.EventVoteDenied:
				h.log = append(h.log, sim.FormatEvent(e.At, e.Node, sim.EventText(e)))
			}
		}
		cfg.Trace = func(at time.Duration, n election.ID, what string) {
			h.log = append(h.log, sim.FormatEvent(at, n, what))
		}
		c, err := sim.NewCluster(cfg)
		if err != nil {
			return h, "error: " + err.Error()
		}
		h.c = c
		t.Cleanup(c.Close)
		return h, "ok"
	})
}

// simCluster is a sim.Cluster driven by a scenario file.
type simCluster struct {
	c     *sim.Cluster
	check *electiontest.Checker
	log   []string // events and traces not printed yet
}

// flush returns the events since the last command, or "ok".
func (h *simCluster) flush() string {
	out := strings.Join(h.log, "\n")
	h.log = h.log[:0]
	if out == "" {
		return "ok"
	}
	return out
}

func (h *simCluster) Check() error { return h.check.Err() }

func (h *simCluster) Start(id election.ID) (string, error) {
	if id != 0 {
		return "", scenario.ErrUnsupported
	}
	err := h.c.Start()
	return h.flush(), err
}

func (h *simCluster) Campaign(id election.ID, _ int) (string, error) {
	if err := h.c.Node(id).Campaign(); err != nil {
		return "", err
	}
	return h.flush(), nil
}

func (h *simCluster) Crash(id election.ID) (string, error) {
	h.c.Crash(id)
	return h.flush(), nil
}

func (h *simCluster) Restart(id election.ID) (string, error) {
	if err := h.c.Restart(id); err != nil {
		return "", err
	}
	return h.flush(), nil
}

func (h *simCluster) Cut(from, to election.ID) (string, error) {
	h.c.Cut(from, to)
	return h.flush(), nil
}

func (h *simCluster) Isolate(id election.ID) (string, error) {
	var others []election.ID
	for _, n := range h.c.IDs() {
		if n != id {
			others = append(others, n)
		}
	}
	h.c.Partition([]election.ID{id}, others)
	return h.flush(), nil
}

func (h *simCluster) Partition(groups [][]election.ID) (string, error) {
	h.c.Partition(groups...)
	return h.flush(), nil
}

func (h *simCluster) Heal() (string, error) {
	h.c.Heal()
	return h.flush(), nil
}

func (h *simCluster) Run(r scenario.Run) (string, error) {
	if r.UntilLeader {
		return "", scenario.ErrUnsupported
	}
	h.c.Run(h.c.Now()+r.For, func() bool { return false })
	h.c.Wheel().AdvanceTo(h.c.Now()) // nothing pending beyond: settle the clock
	return h.flush(), nil
}

func (h *simCluster) Status() (string, error) {
	var b strings.Builder
	for _, n := range h.c.IDs() {
		st := h.c.Node(n).Status()
		state := "up"
		if !h.c.Up(n) {
			state = "down"
		}
		fmt.Fprintf(&b, "n%d %-4s %-9s term=%d vote=%d leader=%d\n", n, state, st.Role, st.Term, st.Vote, st.Leader)
	}
	return strings.TrimSpace(b.String()), nil
}

func (h *simCluster) Command(t *testing.T, d *datadriven.TestData) (string, bool) {
	switch d.Cmd {
	case "pause":
		if err := h.c.Pause(scenario.ID(t, d, "id"), scenario.Duration(t, d, "for", 0)); err != nil {
			return "error: " + err.Error(), true
		}
		return h.flush(), true
	case "stats":
		s := h.c.Stats()
		return fmt.Sprintf("sent=%d delivered=%d duplicated=%d lost=%d partitioned=%d down=%d held=%d disk-writes=%d",
			s.Sent, s.Delivered, s.Duplicated, s.DroppedLoss, s.DroppedPartition, s.DroppedDown, s.Held, s.DiskWrites), true
	}
	return "", false
}

const ms = time.Millisecond
