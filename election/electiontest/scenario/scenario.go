// Package scenario runs scenario files: datadriven stories under a
// package's testdata/ in one command vocabulary, for the election
// package's nodes, multiraft's hosts and the simulator's clusters alike
// (etcd raft's rafttest.InteractionEnv is the model). A file opens with a
// comment saying what it shows, creates a cluster and drives it:
//
//	cluster ...                 create the cluster (arguments: the harness's own)
//	start [id=N]                start one node or every node
//	campaign id=N [group=G]     node N campaigns now
//	crash id=N                  stop node N (its storage survives)
//	restart id=N                start it again on the same storage
//	cut from=A to=B             drop the messages of one directed link
//	isolate id=N                cut node N from every other node both ways
//	partition groups=1,2/3      split the nodes into groups that cannot talk
//	heal                        undo every cut, isolation and partition
//	run for=D [verbose]         advance virtual time by D, print what happened
//	run until=leader [limit=D]  advance until one stable leader (at most D)
//	status                      every node's role, term, vote and leader
//
// A harness adds commands of its own (Cluster.Command: lease, timers,
// stats, transfer...). After every command the harness's invariant
// checker (Cluster.Check, an electiontest.Checker over every event so
// far) must pass. Rewrite the expected output with -rewrite.
package scenario

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/raftick/raftick/election"
)

// A Cluster is what a scenario drives. Each method returns the text to
// print; an error is printed as "error: ..." (a story may show a refusal).
// A harness without a fault returns ErrUnsupported.
type Cluster interface {
	Start(id election.ID) (string, error) // id 0: every node
	Campaign(id election.ID, group int) (string, error)
	Crash(id election.ID) (string, error)
	Restart(id election.ID) (string, error)
	Cut(from, to election.ID) (string, error)
	Isolate(id election.ID) (string, error)
	Partition(groups [][]election.ID) (string, error)
	Heal() (string, error)
	Run(r Run) (string, error)
	Status() (string, error)
	// Command runs a command of the harness's own and reports whether it
	// knows it.
	Command(t *testing.T, d *datadriven.TestData) (out string, ok bool)
	// Check returns the first violation of an invariant so far, or nil.
	Check() error
}

// Run is the argument of the run command.
type Run struct {
	For         time.Duration // run for=D: advance by D
	UntilLeader bool          // run until=leader
	Limit       time.Duration // with UntilLeader: give up after (default 10s)
	Verbose     bool          // print every event, not only the story's
}

// ErrUnsupported is returned by a Cluster for a command it cannot do.
var ErrUnsupported = unsupported{}

type unsupported struct{}

func (unsupported) Error() string { return "not supported by this harness" }

// Files runs the scenario files under dir: create makes the cluster of a
// file's cluster command (and the text to print); every other command
// before it fails the test.
func Files(t *testing.T, dir string, create func(t *testing.T, d *datadriven.TestData) (Cluster, string)) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		var c Cluster
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "cluster" {
				var out string
				c, out = create(t, d)
				return out
			}
			if c == nil {
				d.Fatalf(t, "no cluster: use the cluster command first")
			}
			out := command(t, d, c)
			if err := c.Check(); err != nil {
				d.Fatalf(t, "invariant: %v", err)
			}
			return out
		})
	})
}

func command(t *testing.T, d *datadriven.TestData, c Cluster) string {
	var (
		out string
		err error
	)
	switch d.Cmd {
	case "start":
		id := election.ID(0)
		if d.HasArg("id") {
			id = ID(t, d, "id")
		}
		out, err = c.Start(id)
	case "campaign":
		g := 0
		d.MaybeScanArgs(t, "group", &g)
		out, err = c.Campaign(ID(t, d, "id"), g)
	case "crash":
		out, err = c.Crash(ID(t, d, "id"))
	case "restart":
		out, err = c.Restart(ID(t, d, "id"))
	case "cut":
		out, err = c.Cut(ID(t, d, "from"), ID(t, d, "to"))
	case "isolate":
		out, err = c.Isolate(ID(t, d, "id"))
	case "partition":
		out, err = c.Partition(Groups(t, d, "groups"))
	case "heal":
		out, err = c.Heal()
	case "run":
		r := Run{Verbose: d.HasArg("verbose")}
		if d.HasArg("for") {
			r.For = Duration(t, d, "for", 0)
		} else {
			var what string
			d.ScanArgs(t, "until", &what)
			if what != "leader" {
				d.Fatalf(t, "run until=%s: want until=leader", what)
			}
			r.UntilLeader, r.Limit = true, Duration(t, d, "limit", 10*time.Second)
		}
		out, err = c.Run(r)
	case "status":
		out, err = c.Status()
	default:
		o, ok := c.Command(t, d)
		if !ok {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		return o
	}
	if err == ErrUnsupported {
		d.Fatalf(t, "%s: %v", d.Cmd, err)
	}
	if err != nil {
		out += "error: " + err.Error() + "\n"
	}
	return out
}

// ID returns the node ID argument key of d (id=3); a missing or
// malformed one fails the test.
func ID(t *testing.T, d *datadriven.TestData, key string) election.ID {
	t.Helper()
	var v uint64
	d.ScanArgs(t, key, &v)
	return election.ID(v)
}

// Duration returns the duration argument key of d (for=150ms), or def if
// d has none; a malformed value fails the test.
func Duration(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	t.Helper()
	var s string
	if !d.MaybeScanArgs(t, key, &s) {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Fatalf(t, "argument %s: %v", key, err)
	}
	return v
}

// Groups returns the partition argument key of d: "1,2/3" is {1, 2} and
// {3}.
func Groups(t *testing.T, d *datadriven.TestData, key string) [][]election.ID {
	t.Helper()
	var s string
	d.ScanArgs(t, key, &s)
	var groups [][]election.ID
	for _, g := range strings.Split(s, "/") {
		var ids []election.ID
		for _, f := range strings.Split(g, ",") {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				d.Fatalf(t, "argument %s: %q is not a node ID", key, f)
			}
			ids = append(ids, election.ID(n))
		}
		groups = append(groups, ids)
	}
	return groups
}
