package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/raftick/raftick/election"
)

var errHelp = errors.New("help")

// config is the command's flags, checked.
type config struct {
	id             election.ID
	listen         string
	peers          map[election.ID]string // every node but this one
	voters         []election.ID          // every node, sorted
	groups         int
	dataDir        string
	events         string
	electionTO     time.Duration
	heartbeat      time.Duration
	hibernateAfter time.Duration
	report         time.Duration
	// crashAt, if > 0, kills the process with SIGKILL inside its crashAt-th
	// hard-state write (before the write if crashBefore, else after it
	// and before the node goes on): a crash point for tests.
	crashAt     int
	crashBefore bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := pflag.NewFlagSet("raftick-host", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var id uint64
	var peers string
	fs.Uint64Var(&id, "id", 0, "this node's ID (non-zero; one of --peers)")
	fs.StringVar(&c.listen, "listen", "", "TCP address to accept peers on (default: this node's address in --peers)")
	fs.StringVar(&peers, "peers", "", "every node of the cluster as id=host:port, comma-separated, this one included")
	fs.IntVar(&c.groups, "groups", 1000, "number of groups (IDs 1..N), every node a voter of each")
	fs.StringVar(&c.dataDir, "data", "", "directory for the groups' terms and votes (created if missing)")
	fs.StringVar(&c.events, "events", "", "file to append election events to as JSON lines (default <data>/events.jsonl; \"-\" for none)")
	fs.DurationVar(&c.electionTO, "election-timeout", time.Second, "minimum election timeout (ET)")
	fs.DurationVar(&c.heartbeat, "heartbeat", 100*time.Millisecond, "heartbeat interval (HB), at most ET/2")
	fs.DurationVar(&c.hibernateAfter, "hibernate-after", time.Second, "idle time after which a group hibernates; 0 never")
	fs.DurationVar(&c.report, "report", time.Second, "interval of the status lines on stdout")
	fs.IntVar(&c.crashAt, "crash-at-write", 0, "testing: SIGKILL this process inside its N-th hard-state write (0: never)")
	fs.BoolVar(&c.crashBefore, "crash-before-write", false, "testing: with --crash-at-write, die before the write instead of after it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return c, errHelp
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.id = election.ID(id)
	if c.id == election.None {
		return c, errors.New("--id: must be non-zero")
	}
	all, err := parsePeers(peers)
	if err != nil {
		return c, fmt.Errorf("--peers: %w", err)
	}
	if _, ok := all[c.id]; !ok {
		return c, fmt.Errorf("--peers: must list this node (--id %d)", c.id)
	}
	if c.listen == "" {
		c.listen = all[c.id]
	}
	c.peers = map[election.ID]string{}
	for id, addr := range all {
		c.voters = append(c.voters, id)
		if id != c.id {
			c.peers[id] = addr
		}
	}
	slices.Sort(c.voters)
	switch {
	case c.groups < 1:
		return c, fmt.Errorf("--groups %d: must be >= 1", c.groups)
	case c.dataDir == "":
		return c, errors.New("--data: must be set")
	case c.electionTO <= 0:
		return c, fmt.Errorf("--election-timeout %v: must be > 0", c.electionTO)
	case c.heartbeat <= 0 || c.heartbeat > c.electionTO/2:
		return c, fmt.Errorf("--heartbeat %v: must be in (0, ET/2 = %v]", c.heartbeat, c.electionTO/2)
	case c.hibernateAfter < 0:
		return c, fmt.Errorf("--hibernate-after %v: must be >= 0", c.hibernateAfter)
	case c.report <= 0:
		return c, fmt.Errorf("--report %v: must be > 0", c.report)
	case c.crashAt < 0:
		return c, fmt.Errorf("--crash-at-write %d: must be >= 0", c.crashAt)
	}
	if c.events == "" {
		c.events = filepath.Join(c.dataDir, "events.jsonl")
	}
	return c, nil
}

// parsePeers parses "1=host:port,2=host:port".
func parsePeers(s string) (map[election.ID]string, error) {
	if s == "" {
		return nil, errors.New("must be set")
	}
	m := map[election.ID]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want id=host:port", kv)
		}
		id, err := strconv.ParseUint(k, 10, 64)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("%q: node ID must be a non-zero integer", kv)
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return nil, fmt.Errorf("%q: %w", kv, err)
		}
		if _, dup := m[election.ID(id)]; dup {
			return nil, fmt.Errorf("node %d listed twice", id)
		}
		m[election.ID(id)] = v
	}
	return m, nil
}
