package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr, nil))
}

// runMain runs raftsim as the command does, with interrupts (SIGINT)
// handled by watchInterrupts, and returns the exit status; started, if
// not nil, is the app's started hook (tests interrupt the run there).
func runMain(args []string, stdout, stderr io.Writer, started func()) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	ctx, stop := watchInterrupts(context.Background(), sigs, stderr, os.Exit)
	a := &app{stdout: stdout, stderr: stderr, args: args, started: started, progressDefault: defaultProgressEvery}
	code := a.exit(a.execute(ctx))
	signal.Stop(sigs)
	stop()
	return code
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
