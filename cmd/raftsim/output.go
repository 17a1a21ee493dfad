package main

import (
	"fmt"
	"io"

	"github.com/raftick/raftick/sim"
)

// writeResults prints summaries as JSON lines, CSV or a table.
func writeResults(w io.Writer, o *opts, ss []sim.Summary, table sim.Table) error {
	switch {
	case o.json:
		for _, s := range ss {
			if err := sim.WriteJSON(w, s, o.cdf); err != nil {
				return err
			}
		}
		return nil
	case o.csv:
		return sim.WriteCSV(w, ss)
	}
	return table.Write(w)
}

// writePlot writes the --plot file, if asked for.
func writePlot(o *opts, panels []sim.Panel) error {
	if o.plot == "" {
		return nil
	}
	if err := sim.WritePlotFile(o.plot, panels); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// traceTrial prints the event log of one trial of e.
func traceTrial(w io.Writer, o *opts, e sim.Experiment) error {
	p := e.Params()
	fmt.Fprintf(w, "# %s %s, seed %d, trial %d\n", p.Experiment, p.Label, o.seed, o.traceTrial)
	out := e.Trial(o.traceTrial, sim.TrialRand(o.seed, o.traceTrial), func(line string) { fmt.Fprintln(w, line) })
	status := "finished"
	if !out.OK {
		status = "hit the time limit"
	}
	_, err := fmt.Fprintf(w, "# %s: time %v, terms %d, split terms %d, messages %d\n", status, out.Time, out.Terms, out.Splits, out.Messages)
	return err
}
