package etcd

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/etcdadapter"
)

// TestScenarios runs the stories in testdata/*.txt: each command drives a
// Cluster in virtual time and prints what happened since the previous
// command (elections, leaders, step-downs, faults). Regenerate after a
// deliberate change with -rewrite and review the diff.
//
// Commands:
//
//	cluster n=N [seed=S] [tick=DUR] [et=T] [hb=T] [prevote] [checkquorum] [aligned] [all]
//	start | campaign id=N | propose id=N
//	run until=leader | run for=DUR
//	crash id=N | restart id=N | isolate id=N | heal
//	status
//
// "all" prints every event (votes too); by default the trace shows
// ElectionStart, LeaderElected, LeaderKnown and StepDown.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		t.Cleanup(s.close)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type scenario struct {
	c        *Cluster
	isolated map[uint64]bool
	all      bool
	out      strings.Builder
}

func (s *scenario) close() {
	if s.c != nil {
		s.c.Close()
	}
}

func (s *scenario) trace(at time.Duration, node uint64, what string) {
	if !s.all && node != 0 && !isFaultLine(what) {
		keep := false
		for _, p := range []string{"ElectionStart", "LeaderElected", "LeaderKnown", "StepDown"} {
			keep = keep || strings.HasPrefix(what, p)
		}
		if !keep {
			return
		}
	}
	fmt.Fprintf(&s.out, "%10.3fms n%d %s\n", millis(at), node, what)
}

func millis(d time.Duration) float64 { return float64(d) / 1e6 }

func isFaultLine(what string) bool { return what == "crash" || what == "restart" }

func (s *scenario) flush() string {
	r := s.out.String()
	s.out.Reset()
	return r
}

func (s *scenario) id(t *testing.T, d *datadriven.TestData) uint64 {
	var id uint64
	d.ScanArgs(t, "id", &id)
	if s.c.Node(id) == nil {
		d.Fatalf(t, "no node %d", id)
	}
	return id
}

func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "cluster" && s.c == nil {
		d.Fatalf(t, "%s before cluster", d.Cmd)
	}
	switch d.Cmd {
	case "cluster":
		var n int
		seed := uint64(1)
		tick := "10ms"
		cfg := etcdadapter.DefaultConfig()
		d.ScanArgs(t, "n", &n)
		d.MaybeScanArgs(t, "seed", &seed)
		d.MaybeScanArgs(t, "tick", &tick)
		d.MaybeScanArgs(t, "et", &cfg.ElectionTick)
		d.MaybeScanArgs(t, "hb", &cfg.HeartbeatTick)
		var err error
		if cfg.TickInterval, err = time.ParseDuration(tick); err != nil {
			d.Fatalf(t, "tick: %v", err)
		}
		cfg.PreVote, cfg.CheckQuorum = d.HasArg("prevote"), d.HasArg("checkquorum")
		s.all = d.HasArg("all")
		s.isolated = map[uint64]bool{}
		s.close()
		s.c, err = NewCluster(ClusterConfig{
			Nodes: n, Node: cfg, Rand: rand.New(rand.NewPCG(seed, 0)), AlignedTicks: d.HasArg("aligned"),
			Drop:  func(m *pb.Message) bool { return s.isolated[m.GetFrom()] || s.isolated[m.GetTo()] },
			Trace: s.trace,
		})
		if err != nil {
			return err.Error()
		}
		lo, hi := cfg.ElectionRange()
		return fmt.Sprintf("%d nodes, tick %v, election timeouts %d-%d ticks (%v-%v), heartbeat every %d ticks, prevote=%v checkquorum=%v\n",
			n, cfg.TickInterval, cfg.ElectionTick, 2*cfg.ElectionTick-1, lo, hi-cfg.TickInterval, cfg.HeartbeatTick, cfg.PreVote, cfg.CheckQuorum)
	case "start":
		if err := s.c.Start(); err != nil {
			return err.Error()
		}
	case "campaign":
		if err := s.c.Node(s.id(t, d)).Campaign(); err != nil {
			return err.Error()
		}
	case "propose":
		if err := s.c.Node(s.id(t, d)).Propose([]byte("x")); err != nil {
			return err.Error()
		}
	case "run":
		var until, dur string
		switch {
		case d.MaybeScanArgs(t, "until", &until):
			if until != "leader" {
				d.Fatalf(t, "until=%s: want leader", until)
			}
			from := s.c.Now()
			var leader, term uint64
			ok := s.c.Run(from+time.Minute, func() bool {
				leader, term = s.c.Leader()
				if leader == 0 {
					return false
				}
				fol, others := s.c.Accepted(leader, term)
				return fol == others
			})
			if !ok {
				return s.flush() + "no leader within a minute\n"
			}
			return s.flush() + fmt.Sprintf("leader n%d t%d accepted by all after %.3fms\n", leader, term, millis(s.c.Now()-from))
		case d.MaybeScanArgs(t, "for", &dur):
			dd, err := time.ParseDuration(dur)
			if err != nil {
				d.Fatalf(t, "for: %v", err)
			}
			s.c.Wheel().AdvanceTo(s.c.Now() + dd)
		default:
			d.Fatalf(t, "run needs until= or for=")
		}
	case "crash":
		s.c.Crash(s.id(t, d))
	case "restart":
		id := s.id(t, d)
		if err := s.c.Restart(id); err != nil {
			return err.Error()
		}
		st := s.c.Node(id).Status()
		return s.flush() + fmt.Sprintf("n%d: %v term=%d vote=%d\n", id, st.Role, st.Term, st.Vote)
	case "isolate":
		id := s.id(t, d)
		s.isolated[id] = true
		fmt.Fprintf(&s.out, "%10.3fms n%d isolated\n", millis(s.c.Now()), id)
	case "heal":
		clear(s.isolated)
		fmt.Fprintf(&s.out, "%10.3fms    healed\n", millis(s.c.Now()))
	case "status":
		for _, id := range s.c.IDs() {
			st := s.c.Node(id).Status()
			if !st.Running {
				fmt.Fprintf(&s.out, "n%d: down\n", id)
				continue
			}
			fmt.Fprintf(&s.out, "n%d: %v term=%d vote=%d leader=%d commit=%d timeout=%d elapsed=%d\n",
				id, st.Role, st.Term, st.Vote, st.Leader, st.Commit, st.ElectionTimeout, st.ElectionElapsed)
		}
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return s.flush()
}
