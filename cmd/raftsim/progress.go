package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
)

// defaultProgressEvery is how often raftsim prints a progress line when
// stderr is not a terminal (a CI log, a pipe to tee), unless --progress
// says otherwise.
const defaultProgressEvery = 5 * time.Second

// addProgressFlag registers --progress on root: the period of the
// progress lines when stderr is not a terminal. The command (runMain)
// defaults it to defaultProgressEvery; in-process runs (tests) to 0.
func (a *app) addProgressFlag(root *cobra.Command) {
	root.PersistentFlags().DurationVar(&a.progressEvery, "progress", a.progressDefault,
		"when stderr is not a terminal, print a progress line every `PERIOD` of a long run (0: none); on a terminal a bar shows it instead")
}

// progressLines is bar for a stderr that is not a terminal: a line
// "raftsim: paper: 4200 of 10100 trials (42%, 7s left)" every
// a.progressEvery while the run goes on, none if it is 0. count says
// whether done and total count trials (else only the percentage shows).
func (a *app) progressLines(what string, count bool) (func(done, total int), func()) {
	every := a.progressEvery
	if every <= 0 {
		return nil, func() {}
	}
	return everyTick(every, func(elapsed time.Duration, d, t int64) {
		switch {
		case t <= 0: // no trial finished yet: the total comes with the first
			fmt.Fprintf(a.stderr, "raftsim: %s: running for %v, no trial finished yet\n", what, elapsed.Round(time.Second))
		case count:
			fmt.Fprintf(a.stderr, "raftsim: %s: %d of %d trials (%.0f%%%s)\n", what, d, t, 100*float64(d)/float64(t), etaTail(elapsed, d, t))
		default:
			fmt.Fprintf(a.stderr, "raftsim: %s: %.0f%% done%s\n", what, 100*float64(d)/float64(t), etaTail(elapsed, d, t))
		}
	}, nil)
}

// everyTick calls each with the time since it started and the progress
// last stored by update, every period on a goroutine of its own, until
// finish is called; finish then calls done (if not nil) on that
// goroutine and returns once it has.
func everyTick(period time.Duration, each func(elapsed time.Duration, done, total int64), done func()) (update func(done, total int), finish func()) {
	var d, t atomic.Int64
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				if done != nil {
					done()
				}
				return
			case <-tick.C:
				each(time.Since(start), d.Load(), t.Load())
			}
		}
	}()
	update = func(dn, tt int) {
		d.Store(int64(dn))
		t.Store(int64(tt))
	}
	return update, func() { close(stop); <-finished }
}

// etaTail is eta's estimate as the tail of a progress line, e.g.
// ", 1m20s left".
func etaTail(elapsed time.Duration, done, total int64) string {
	if e := eta(elapsed, done, total); e != "" {
		return ", " + e[2:len(e)-1]
	}
	return ""
}
