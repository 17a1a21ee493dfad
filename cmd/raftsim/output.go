package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"errors"
	"fmt"
	"io"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

// meta returns what the output records say about the run besides the
// results: the tool, its version, the subcommand and the model preset.
func (o *opts) meta() report.Meta {
	return report.Meta{Tool: "raftsim", Version: version(), Command: o.command, Preset: o.model}
}

// writeResults prints results as JSON Lines, CSV or a table.
func writeResults(w io.Writer, o *opts, rs []experiment.Result, table report.Table) error {
	switch {
	case o.json:
		return o.meta().WriteJSONLines(w, rs, o.cdf)
	case o.csv:
		return o.meta().WriteCSV(w, rs)
	}
	return table.Write(w)
}

// checkPlotPath refuses a --plot file that could not be written, before
// anything runs: an empty name, an unknown extension, a directory, or a
// directory that does not exist or cannot be written to.
func checkPlotPath(cmd *cobra.Command, path string) error {
	if !cmd.Flags().Changed("plot") {
		return nil
	}
	if path == "" {
		return flagError("plot", "needs a file name ending in .svg, .png or .pdf")
	}
	if _, err := plot.Format(path); err != nil {
		return flagError("plot", "file name must end in .svg, .png or .pdf, got %q", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return flagError("plot", "%q is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return flagError("plot", "directory %q does not exist", dir)
	}
	f, err := os.CreateTemp(dir, ".raftsim-plot-*")
	if err != nil {
		return flagError("plot", "cannot write to directory %q", dir)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// writePlot writes the --plot file, if asked for, and says on stderr
// where it went.
func writePlot(stderr io.Writer, o *opts, fig plot.Figure) error {
	if o.plot == "" {
		return nil
	}
	if err := plot.WriteFile(o.plot, fig); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	abs, err := filepath.Abs(o.plot)
	if err != nil {
		abs = o.plot
	}
	fmt.Fprintf(stderr, "raftsim: wrote the figure to %s\n", abs)
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
