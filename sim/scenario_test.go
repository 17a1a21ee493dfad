package sim_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
)

// TestScenarios runs the stories in testdata/*.txt: a cluster on a virtual
// wheel, driven step by step, printing what happened. The commands use
// the election package's scenario words (election/testdata) where they
// mean the same. Rewrite the expected output with:
// go test ./sim -run TestScenarios -rewrite
//
// Commands:
//
//	cluster n=3 [latency=SPEC] [disk=SPEC] [timeout=150ms-300ms] [seed=N] [blocking] [wait] [loss=P] [dup=P]
//	        create the servers (not started): n, latency, disk, timeout, loss
//	        and dup are experiment.Setup settings (Setup.Set); blocking is
//	        DiskBlocks, wait is CandidatesWait (WaitForVoteTimeout)
//	start                             start every server
//	campaign id=N                     server N campaigns now
//	crash id=N / restart id=N         stop a server / start it again on the same storage
//	pause id=N for=D                  freeze a server for D
//	partition groups=1,2/3 / cut from=A to=B / heal   network faults
//	run for=D                         advance virtual time, printing node events
//	status                            role, term, vote and leader of every server
//	stats                             network counters
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var c *sim.Cluster
		var log []string
		defer func() {
			if c != nil {
				c.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			arg := func(key string) (string, bool) {
				for _, a := range d.CmdArgs {
					if a.Key == key {
						if len(a.Vals) == 0 {
							return "", true
						}
						return a.Vals[0], true
					}
				}
				return "", false
			}
			id := func() election.ID {
				v, _ := arg("id")
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: id=%q", d.Pos, v)
				}
				return election.ID(n)
			}
			dur := func(key string) time.Duration {
				v, _ := arg(key)
				x, err := time.ParseDuration(v)
				if err != nil {
					t.Fatalf("%s: %s=%q", d.Pos, key, v)
				}
				return x
			}
			flush := func() string {
				out := strings.Join(log, "\n")
				log = log[:0]
				if out == "" {
					return "ok"
				}
				return out
			}
			switch d.Cmd {
			case "cluster":
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
				cfg := s.Config(sim.TrialRand(seed, 0))
				cfg.Observer = func(e election.Event) {
					switch e.Type {
					case election.EventElectionStart, election.EventLeaderElected, election.EventLeaderKnown,
						election.EventStepDown, election.EventVoteGranted, election.EventVoteDenied:
						log = append(log, sim.FormatEvent(e.At, e.Node, sim.EventText(e)))
					}
				}
				cfg.Trace = func(at time.Duration, n election.ID, what string) { log = append(log, sim.FormatEvent(at, n, what)) }
				var err error
				c, err = sim.NewCluster(cfg)
				if err != nil {
					return "error: " + err.Error()
				}
				return "ok"
			case "start":
				if err := c.Start(); err != nil {
					return "error: " + err.Error()
				}
				return flush()
			case "campaign":
				if err := c.Node(id()).Campaign(); err != nil {
					return "error: " + err.Error()
				}
				return flush()
			case "crash":
				c.Crash(id())
				return flush()
			case "restart":
				if err := c.Restart(id()); err != nil {
					return "error: " + err.Error()
				}
				return flush()
			case "pause":
				if err := c.Pause(id(), dur("for")); err != nil {
					return "error: " + err.Error()
				}
				return flush()
			case "partition":
				v, _ := arg("groups")
				var groups [][]election.ID
				for _, g := range strings.Split(v, "/") {
					var ids []election.ID
					for _, s := range strings.Split(g, ",") {
						n, _ := strconv.Atoi(s)
						ids = append(ids, election.ID(n))
					}
					groups = append(groups, ids)
				}
				c.Partition(groups...)
				return flush()
			case "cut":
				f, _ := arg("from")
				to, _ := arg("to")
				a, _ := strconv.Atoi(f)
				b, _ := strconv.Atoi(to)
				c.Cut(election.ID(a), election.ID(b))
				return flush()
			case "heal":
				c.Heal()
				return flush()
			case "run":
				c.Run(c.Now()+dur("for"), func() bool { return false })
				c.Wheel().AdvanceTo(c.Now()) // nothing pending beyond: settle the clock
				return flush()
			case "status":
				var b strings.Builder
				for _, n := range c.IDs() {
					st := c.Node(n).Status()
					state := "up"
					if !c.Up(n) {
						state = "down"
					}
					fmt.Fprintf(&b, "n%d %-4s %-9s term=%d vote=%d leader=%d\n", n, state, st.Role, st.Term, st.Vote, st.Leader)
				}
				return strings.TrimSpace(b.String())
			case "stats":
				s := c.Stats()
				return fmt.Sprintf("sent=%d delivered=%d duplicated=%d lost=%d partitioned=%d down=%d held=%d disk-writes=%d",
					s.Sent, s.Delivered, s.Duplicated, s.DroppedLoss, s.DroppedPartition, s.DroppedDown, s.Held, s.DiskWrites)
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

const ms = time.Millisecond
