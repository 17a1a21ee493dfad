package multiraft_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/golden"
	"github.com/raftick/raftick/multiraft"
)

// TestScenarios runs the stories under testdata/, each opening with a
// comment saying what it shows. Commands:
//
//	cluster hosts=N groups=G [replicas=R] [boot] [hibernate=D] [nocoalesce] [seed=S]
//	                      N hosts on a 1ms network, G groups of R replicas
//	                      (ET 150ms, heartbeats 15ms); boot bootstraps
//	                      balanced leaders in term 1; hibernate=0 never
//	run for=D             advance virtual time, print elections, step-downs, wakes
//	status                every replica of every group
//	stats                 every host's counters
//	timers                pending timers on the wheel
//	crash host=N / restart host=N / cut from=A to=B / heal
//	touch group=G host=N  activity: wakes the group
//	campaign group=G host=N
//
// Every command also checks election safety over all events so far, and
// the lease invariant at every millisecond run so far.
func TestScenarios(t *testing.T) {
	golden.Scenarios(t, "testdata", "cluster", scenarioCmd,
		func(c **cluster) error { return (*c).check.Err() })
}

func scenarioCmd(t *testing.T, d *datadriven.TestData, cp **cluster) string {
	c := *cp
	arg := func(key string) int {
		var v int
		d.ScanArgs(t, key, &v)
		return v
	}
	dur := func(key string, def time.Duration) time.Duration { return golden.Duration(t, d, key, def) }
	var b strings.Builder
	switch d.Cmd {
	case "cluster":
		o := clusterOpts{hosts: arg("hosts"), groups: arg("groups"), seed: 1, boot: d.HasArg("boot")}
		d.MaybeScanArgs(t, "replicas", &o.replicas)
		d.MaybeScanArgs(t, "seed", &o.seed)
		hib := dur("hibernate", 300*time.Millisecond)
		o.config = func(cfg *multiraft.Config) {
			cfg.HibernateAfter = hib
			cfg.Coalesce = !d.HasArg("nocoalesce")
		}
		c = newCluster(t, o)
		c.tracing = true
		c.leases = true
		*cp = c
		fmt.Fprintf(&b, "%d hosts, %d groups, hibernate after %v, coalesce %v\n", o.hosts, o.groups, hib, c.cfg.Coalesce)
		b.WriteString(c.flush())
	case "run":
		c.advance(dur("for", 0))
		b.WriteString(c.flush())
	case "status":
		for _, g := range c.groups {
			fmt.Fprintf(&b, "g%d:", g.id)
			for _, id := range g.voters {
				h := c.hosts[id]
				if h == nil {
					fmt.Fprintf(&b, " n%d down;", id)
					continue
				}
				st, err := h.Status(g.id)
				require.NoError(t, err)
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
	case "crash":
		id := election.ID(arg("host"))
		c.crash(id)
		fmt.Fprintf(&b, "%10s n%d crashed\n", c.v.Now().Round(time.Microsecond), id)
	case "restart":
		c.start(election.ID(arg("host")))
		b.WriteString(c.flush())
	case "cut":
		c.net.Cut(election.ID(arg("from")), election.ID(arg("to")))
	case "heal":
		c.net.Heal()
	case "campaign":
		require.NoError(t, c.hosts[election.ID(arg("host"))].Campaign(multiraft.GroupID(arg("group"))))
		b.WriteString(c.flush())
	case "touch":
		require.NoError(t, c.hosts[election.ID(arg("host"))].Touch(multiraft.GroupID(arg("group"))))
		b.WriteString(c.flush())
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	return b.String()
}

// flush returns and forgets the traced events.
func (c *cluster) flush() string {
	s := strings.Join(c.trace, "")
	c.trace = c.trace[:0]
	return s
}
