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
// with status 2, a failed trial (a simulation that broke) with status 1
// and the command that reproduces it. An interrupt (Ctrl-C) stops the
// trials that are running, prints what finished and exits with status
// 130; a second interrupt exits at once.
//
// The command is thin wiring: flags become a sim/experiment value, which
// runs on the sim engine (or, with --engine hashicorp, on
// sim/engines/hashicorp), and sim/report and sim/report/plot print it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	ctx, stop := watchInterrupts(context.Background(), sigs, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	stop()
	os.Exit(code)
}

// watchInterrupts returns a context that the first signal on sigs
// cancels (the run stops its trials and prints what finished); a second
// signal calls exit(130) at once. stop releases the watcher.
func watchInterrupts(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "raftsim: interrupt: stopping the trials (interrupt again to quit at once)")
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "raftsim: second interrupt: quitting")
			exit(130)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
		cancel()
	}
}
