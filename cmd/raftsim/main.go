// Command raftsim runs the raftick cluster simulator: leader-election
// experiments on simulated Raft clusters in virtual time, reproducible
// from a seed.
//
//	raftsim paper                      # reproduce Figure 16 of the Raft paper
//	raftsim failover --timeout 150ms-300ms --latency normal:5ms,2ms
//	raftsim bootstrap --nodes 3
//	raftsim splitvote --nodes 5 --alive 4 --l 0.01,0.1,0.2
//	raftsim sweep --over timeout=150-155ms,150-200ms --over latency=fixed:1ms;fixed:5ms
//	raftsim tune --latency lognormal:5ms,0.8 --max-elections 1
//
// Every subcommand has --help. Results go to stdout (text, --json or
// --csv); progress bars and errors go to stderr. Bad flags or values exit
// with status 2, an interrupt (Ctrl-C) prints what finished and exits with
// status 130.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
