package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

// writeResults prints results as JSON lines, CSV or a table.
func writeResults(w io.Writer, o *opts, rs []experiment.Result, table report.Table) error {
	switch {
	case o.json:
		for _, r := range rs {
			if err := report.WriteJSON(w, r, o.cdf); err != nil {
				return err
			}
		}
		return nil
	case o.csv:
		return report.WriteCSV(w, rs)
	}
	return table.Write(w)
}

// writePlot writes the --plot file, if asked for.
func writePlot(o *opts, panels []plot.Panel) error {
	if o.plot == "" {
		return nil
	}
	if err := plot.WriteFile(o.plot, panels); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// traceTrial prints the event log of one trial of e.
func traceTrial(ctx context.Context, w io.Writer, o *opts, e experiment.Experiment) error {
	d := e.Result(nil)
	fmt.Fprintf(w, "# %s %s, seed %d, trial %d\n", d.Experiment, d.Label, o.seed, o.traceTrial)
	out, err := e.Trial(ctx, o.traceTrial, sim.TrialRand(o.seed, o.traceTrial), func(line string) { fmt.Fprintln(w, line) })
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			fmt.Fprintln(w, "# interrupted")
			return errInterrupted
		}
		return trialFailure{what: d.Experiment + " " + d.Label, err: &sim.TrialError{Index: o.traceTrial, Seed: o.seed, Err: err}}
	}
	status := "finished"
	if !out.OK {
		status = "hit the time limit"
	}
	_, err = fmt.Fprintf(w, "# %s: time %v, terms %d, split terms %d, messages %d\n", status, out.Time, out.Terms, out.Splits, out.Messages)
	return err
}
