package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

// meta returns what the output records say about the run besides the
// results: the tool, its version, the subcommand and the model preset.
func (o *opts) meta() report.Meta {
	return report.Meta{Tool: "raftsim", Version: version(), Command: o.command, Model: o.model}
}

// partialMeta is meta for a run that an interrupt may have stopped:
// requested are the trials asked of each result.
func (o *opts) partialMeta(interrupted bool, requested []int) report.Meta {
	m := o.meta()
	m.Interrupted, m.Requested = interrupted, requested
	return m
}

// writeResults prints results as JSON Lines, CSV or a table; requested
// are the trials asked of each result, and interrupted marks the output
// of a run an interrupt stopped.
func writeResults(w io.Writer, o *opts, rs []experiment.Result, table report.Table, requested []int, interrupted bool) error {
	m := o.partialMeta(interrupted, requested)
	switch {
	case o.json:
		return m.WriteJSONLines(w, rs, o.cdf)
	case o.csv:
		return m.WriteCSV(w, rs)
	}
	if err := table.Write(w); err != nil {
		return err
	}
	if interrupted {
		return writeInterrupted(w, finishedTrials(rs), sum(requested), "trials")
	}
	return nil
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
	if file := fileOnPath(dir); file != "" {
		return flagError("plot", "%q is not a directory", file)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return flagError("plot", "directory %q does not exist", dir)
	case err != nil:
		return flagError("plot", "cannot use directory %q: %v", dir, errors.Unwrap(err))
	case !fi.IsDir():
		return flagError("plot", "%q is not a directory", dir)
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

// fileOnPath returns the first element of dir, from the root down, that
// exists and is not a directory (/etc/passwd of /etc/passwd/sub), or "".
func fileOnPath(dir string) string {
	var up []string
	for d := dir; ; d = filepath.Dir(d) {
		up = append(up, d)
		if next := filepath.Dir(d); next == d {
			break
		}
	}
	for i := len(up) - 1; i >= 0; i-- {
		fi, err := os.Stat(up[i])
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return up[i]
		}
	}
	return ""
}

// writePlot writes the --plot file, if asked for, and says on stderr
// where it went. An interrupted run writes none: a figure cannot say
// that its curves hold only part of the trials.
func writePlot(stderr io.Writer, o *opts, fig plot.Figure, interrupted bool) error {
	if o.plot == "" {
		return nil
	}
	if interrupted {
		fmt.Fprintf(stderr, "raftsim: interrupted: %s not written\n", o.plot)
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
