package etcd

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest/scenario"
	"github.com/raftick/raftick/etcdadapter"
)

// TestScenarios runs the stories in testdata/*.txt in the scenario
// vocabulary of election/electiontest/scenario: each command drives a
// Cluster of real etcd raft nodes in virtual time and prints what
// happened since the previous command (elections, leaders, step-downs,
// faults); after each, no two nodes may have led one term. Regenerate
// after a deliberate change with -rewrite and review the diff.
//
// This harness's cluster and commands:
//
//	cluster n=N [seed=S] [tick=DUR] [et=T] [hb=T] [prevote] [checkquorum] [aligned] [all]
//	propose id=N
//
// "all" prints every event (votes too); by default the trace shows
// ElectionStart, LeaderElected, LeaderKnown and StepDown.
func TestScenarios(t *testing.T) {
	scenario.Files(t, "testdata", func(t *testing.T, d *datadriven.TestData) (scenario.Cluster, string) {
		s := &etcdScenario{leaders: map[uint64]uint64{}}
		t.Cleanup(s.close)
		return s, s.create(t, d)
	})
}

type etcdScenario struct {
	t        *testing.T
	leaders  map[uint64]uint64 // term -> the node that led it
	c        *Cluster
	isolated map[uint64]bool
	all      bool
	out      strings.Builder
}

func (s *etcdScenario) close() {
	if s.c != nil {
		s.c.Close()
	}
}

func (s *etcdScenario) trace(at time.Duration, node uint64, what string) {
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

func (s *etcdScenario) flush() string {
	r := s.out.String()
	s.out.Reset()
	return r
}

// Check reports two nodes that led one term.
func (s *etcdScenario) Check() error {
	if s.c == nil {
		return nil
	}
	for _, id := range s.c.IDs() {
		st := s.c.Node(id).Status()
		if !st.Running || st.Leader != id {
			continue
		}
		if l, ok := s.leaders[st.Term]; ok && l != id {
			return fmt.Errorf("term %d has two leaders: n%d and n%d", st.Term, l, id)
		}
		s.leaders[st.Term] = id
	}
	return nil
}

func (s *etcdScenario) node(id election.ID) (uint64, error) {
	if s.c.Node(uint64(id)) == nil {
		return 0, fmt.Errorf("no node %d", id)
	}
	return uint64(id), nil
}

func (s *etcdScenario) create(t *testing.T, d *datadriven.TestData) string {
	s.t = t
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
}

func (s *etcdScenario) Start(id election.ID) (string, error) {
	if id != 0 {
		return "", scenario.ErrUnsupported
	}
	if err := s.c.Start(); err != nil {
		return err.Error(), nil
	}
	return s.flush(), nil
}

func (s *etcdScenario) Campaign(id election.ID, _ int) (string, error) {
	n, err := s.node(id)
	if err != nil {
		return "", err
	}
	if err := s.c.Node(n).Campaign(); err != nil {
		return err.Error(), nil
	}
	return s.flush(), nil
}

func (s *etcdScenario) Run(r scenario.Run) (string, error) {
	if !r.UntilLeader {
		s.c.Wheel().AdvanceTo(s.c.Now() + r.For)
		return s.flush(), nil
	}
	from := s.c.Now()
	var leader, term uint64
	ok := s.c.Run(from+r.Limit, func() bool {
		leader, term = s.c.Leader()
		if leader == 0 {
			return false
		}
		fol, others := s.c.Accepted(leader, term)
		return fol == others
	})
	if !ok {
		return s.flush() + fmt.Sprintf("no leader within %v\n", r.Limit), nil
	}
	return s.flush() + fmt.Sprintf("leader n%d t%d accepted by all after %.3fms\n", leader, term, millis(s.c.Now()-from)), nil
}

func (s *etcdScenario) Crash(id election.ID) (string, error) {
	n, err := s.node(id)
	if err != nil {
		return "", err
	}
	s.c.Crash(n)
	return s.flush(), nil
}

func (s *etcdScenario) Restart(id election.ID) (string, error) {
	n, err := s.node(id)
	if err != nil {
		return "", err
	}
	if err := s.c.Restart(n); err != nil {
		return err.Error(), nil
	}
	st := s.c.Node(n).Status()
	return s.flush() + fmt.Sprintf("n%d: %v term=%d vote=%d\n", n, st.Role, st.Term, st.Vote), nil
}

func (s *etcdScenario) Cut(from, to election.ID) (string, error) { return "", scenario.ErrUnsupported }

func (s *etcdScenario) Partition([][]election.ID) (string, error) {
	return "", scenario.ErrUnsupported
}

func (s *etcdScenario) Isolate(id election.ID) (string, error) {
	n, err := s.node(id)
	if err != nil {
		return "", err
	}
	s.isolated[n] = true
	fmt.Fprintf(&s.out, "%10.3fms n%d isolated\n", millis(s.c.Now()), n)
	return s.flush(), nil
}

func (s *etcdScenario) Heal() (string, error) {
	clear(s.isolated)
	fmt.Fprintf(&s.out, "%10.3fms    healed\n", millis(s.c.Now()))
	return s.flush(), nil
}

func (s *etcdScenario) Status() (string, error) {
	for _, id := range s.c.IDs() {
		st := s.c.Node(id).Status()
		if !st.Running {
			fmt.Fprintf(&s.out, "n%d: down\n", id)
			continue
		}
		fmt.Fprintf(&s.out, "n%d: %v term=%d vote=%d leader=%d commit=%d timeout=%d elapsed=%d\n",
			id, st.Role, st.Term, st.Vote, st.Leader, st.Commit, st.ElectionTimeout, st.ElectionElapsed)
	}
	return s.flush(), nil
}

func (s *etcdScenario) Command(t *testing.T, d *datadriven.TestData) (string, bool) {
	if d.Cmd != "propose" {
		return "", false
	}
	n, err := s.node(scenario.ID(t, d, "id"))
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	if err := s.c.Node(n).Propose([]byte("x")); err != nil {
		return err.Error(), true
	}
	return s.flush(), true
}
