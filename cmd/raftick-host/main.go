// Command raftick-host runs one multiraft.Host per process: N groups whose
// replicas live on every node of the cluster, their terms and votes in a
// pebble store in the data directory (multiraft/pebblestore, written in
// group commits), their batches over TCP (multiraft/tcptransport).
//
//	raftick-host --id 1 --listen 127.0.0.1:7101 \
//	    --peers 1=127.0.0.1:7101,2=127.0.0.1:7102,3=127.0.0.1:7103 \
//	    --groups 10000 --data /var/lib/raftick/1
//
// Every node of the cluster is a voter of every group; group g starts
// led by the (g mod nodes)-th node (a bootstrapped term 1), so a fresh
// cluster needs no election. It prints a JSON line on stdout every
// --report interval: how many groups it leads, how many know a leader,
// and the failover times of the groups whose leader's node fell silent
// (per group, from the last batch heard from that node to this node
// learning the new leader). It writes its groups' election events (term
// changes, votes granted, leaders elected and known) as JSON lines to
// --events (default <data>/events.jsonl), each written before any
// message that depends on it leaves, for election/electiontest's
// checker. SIGTERM or SIGINT stops it cleanly (exit status 0).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs the command and returns its exit status: 0 after a clean
// stop, 2 for bad flags, 1 for any other error.
func runMain(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if err == errHelp {
			return 0
		}
		fmt.Fprintf(stderr, "raftick-host: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "raftick-host: %v\n", err)
		return 1
	}
	return 0
}
