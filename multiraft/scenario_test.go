package multiraft_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest/scenario"
	"github.com/raftick/raftick/multiraft"
)

// TestScenarios runs the stories under testdata/, each opening with a
// comment saying what it shows, in the scenario vocabulary of
// election/electiontest/scenario (a node is a host: crash id=N, campaign
// id=N group=G). This harness's cluster and commands:
//
//	cluster hosts=N groups=G [replicas=R] [boot] [hibernate=D] [nocoalesce] [seed=S]
//	                      N hosts on a 1ms network, G groups of R replicas
//	                      (ET 150ms, heartbeats 15ms); boot bootstraps
//	                      balanced leaders in term 1; hibernate=0 never
//	stats                 every host's counters
//	timers                pending timers on the wheel
//	touch id=N group=G    activity: wakes the group
//
// Every command also checks election safety over all events so far, and
// the lease invariant at every millisecond run so far.
func TestScenarios(t *testing.T) {
	scenario.Files(t, "testdata", func(t *testing.T, d *datadriven.TestData) (scenario.Cluster, string) {
		arg := func(key string) int {
			var v int
			d.ScanArgs(t, key, &v)
			return v
		}
		o := clusterOpts{hosts: arg("hosts"), groups: arg("groups"), seed: 1, boot: d.HasArg("boot")}
		d.MaybeScanArgs(t, "replicas", &o.replicas)
		d.MaybeScanArgs(t, "seed", &o.seed)
		hib := scenario.Duration(t, d, "hibernate", 300*time.Millisecond)
		o.config = func(cfg *multiraft.Config) {
			cfg.HibernateAfter = hib
			cfg.Coalesce = !d.HasArg("nocoalesce")
		}
		c := newCluster(t, o)
		c.tracing = true
		c.leases = true
		out := fmt.Sprintf("%d hosts, %d groups, hibernate after %v, coalesce %v\n", o.hosts, o.groups, hib, c.cfg.Coalesce)
		return &scenarioCluster{c: c, t: t}, out + c.flush()
	})
}

// scenarioCluster is a cluster of hosts driven by a scenario file.
type scenarioCluster struct {
	c *cluster
	t *testing.T
}

func (s *scenarioCluster) Check() error { return s.c.check.Err() }

func (s *scenarioCluster) Start(election.ID) (string, error) { return "", scenario.ErrUnsupported }

func (s *scenarioCluster) Campaign(id election.ID, group int) (string, error) {
	if err := s.c.hosts[id].Campaign(multiraft.GroupID(group)); err != nil {
		return "", err
	}
	return s.c.flush(), nil
}

func (s *scenarioCluster) Crash(id election.ID) (string, error) {
	s.c.crash(id)
	return fmt.Sprintf("%10s n%d crashed\n", s.c.v.Now().Round(time.Microsecond), id), nil
}

func (s *scenarioCluster) Restart(id election.ID) (string, error) {
	s.c.start(id)
	return s.c.flush(), nil
}

func (s *scenarioCluster) Cut(from, to election.ID) (string, error) {
	s.c.net.Cut(from, to)
	return "", nil
}

func (s *scenarioCluster) Isolate(election.ID) (string, error) { return "", scenario.ErrUnsupported }

func (s *scenarioCluster) Partition([][]election.ID) (string, error) {
	return "", scenario.ErrUnsupported
}

func (s *scenarioCluster) Heal() (string, error) {
	s.c.net.Heal()
	return "", nil
}

func (s *scenarioCluster) Run(r scenario.Run) (string, error) {
	if r.UntilLeader {
		return "", scenario.ErrUnsupported
	}
	s.c.advance(r.For)
	return s.c.flush(), nil
}

func (s *scenarioCluster) Status() (string, error) {
	c := s.c
	var b strings.Builder
	for _, g := range c.groups {
		fmt.Fprintf(&b, "g%d:", g.id)
		for _, id := range g.voters {
			h := c.hosts[id]
			if h == nil {
				fmt.Fprintf(&b, " n%d down;", id)
				continue
			}
			st, err := h.Status(g.id)
			if err != nil {
				return b.String(), err
			}
			s := fmt.Sprintf(" n%d %s t%d", id, st.Status.Role, st.Status.Term)
			if st.Status.Role != election.Leader {
				s += fmt.Sprintf(" leader=%d", st.Status.Leader)
			}
			if st.Hibernating {
				s += " asleep"
			}
			if st.Lease {
				s += " lease"
			}
			b.WriteString(s + ";")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func (s *scenarioCluster) Command(t *testing.T, d *datadriven.TestData) (string, bool) {
	c := s.c
	var b strings.Builder
	switch d.Cmd {
	case "stats":
		for _, id := range c.ids {
			h := c.hosts[id]
			if h == nil {
				fmt.Fprintf(&b, "n%d: down\n", id)
				continue
			}
			s := h.Stats()
			fmt.Fprintf(&b, "n%d: %d/%d asleep, %d hibernations, %d wakes (%d by liveness), %d answered asleep, %d messages in %d batches (%d coalesced, %d liveness)\n",
				id, s.Hibernating, s.Groups, s.Hibernations, s.Wakes, s.LivenessWakes, s.AnsweredAsleep, s.Messages, s.Batches, s.Coalesced, s.Liveness)
		}
	case "timers":
		fmt.Fprintf(&b, "%d timers pending\n", c.v.Stats().Pending)
	case "touch":
		var g int
		d.ScanArgs(t, "group", &g)
		require.NoError(t, c.hosts[scenario.ID(t, d, "id")].Touch(multiraft.GroupID(g)))
		b.WriteString(c.flush())
	default:
		return "", false
	}
	return b.String(), true
}

// flush returns and forgets the traced events.
func (c *cluster) flush() string {
	s := strings.Join(c.trace, "")
	c.trace = c.trace[:0]
	return s
}
