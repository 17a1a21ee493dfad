package main

import (
	"fmt"
	"io"

	"github.com/raftick/raftick/sim/experiment"
)

// writeInterrupted closes the table of a run an interrupt stopped: how
// many of the requested trials (or windows, or runs) finished. Such a run
// prints no verdict or recommendation, and this line says so.
func writeInterrupted(w io.Writer, done, requested int, unit string) error {
	what := "the figures above are of those only, and no verdict is given"
	if done == 0 {
		what = "nothing was measured"
	}
	_, err := fmt.Fprintf(w, "interrupted: %d of %d %s finished; %s\n", done, requested, unit, what)
	return err
}

// finishedTrials is the number of trials the results hold.
func finishedTrials(rs []experiment.Result) int {
	n := 0
	for _, r := range rs {
		n += r.Trials
	}
	return n
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
