package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
	"github.com/raftick/raftick/sim/report/plot"
)

// PaperMaxTime is raftsim paper's default per-trial limit.
const PaperMaxTime = 900 * time.Second

func (a *app) paperCmd() *cobra.Command {
	o := &opts{}
	cmd := &cobra.Command{
		Use:   "paper",
		Short: "Reproduce Figure 16 of the Raft paper (both panels) and compare",
		Long: `paper reproduces Figure 16 of the Raft paper (Ongaro and Ousterhout, "In
Search of an Understandable Consensus Algorithm", extended version; Figure
14 in the USENIX ATC'14 proceedings): the failover experiment on five
servers for the timeout ranges 150-150, 150-151, 150-155, 150-175, 150-200,
150-300ms (top panel: randomness) and 12-24, 25-50, 50-100, 100-200,
150-300ms (bottom panel: scale), with the paper's trial counts (1000 per
range, 100 for 150-150ms: 10,100 in all). It prints both tables with the
figures the paper quotes beside the simulated ones, and writes the CDF plot
laid out like the paper's figure with --plot.

The default model (--model paper) stands in for the paper's LogCabin
cluster; see sim/README.md for how it was chosen.`,
		Example: `  raftsim paper
  raftsim paper --seed 7 --json
  raftsim paper --plot figure16.svg`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPaper(cmd, o) },
	}
	addModelFlags(cmd, o, false)
	addLatenessSpreadFlags(cmd)
	addRunFlags(cmd, o, 0, true)
	cmd.Flags().Lookup("trials").Usage = "trials per range (0: the paper's, 1000 per range and 100 for 150-150ms); 150-150ms gets a tenth"
	// The paper's slowest 150-150ms trial took about 528s; virtual time
	// is cheap, so no trial is cut.
	mt := cmd.Flags().Lookup("max-time")
	_ = mt.Value.Set(PaperMaxTime.String())
	mt.DefValue = mt.Value.String()
	addColumnsHelp(cmd)
	return cmd
}

func (a *app) runPaper(cmd *cobra.Command, o *opts) error {
	perRow := 0
	if o.trials < 0 {
		return flagError("trials", "must not be negative, got %d", o.trials)
	}
	if cmd.Flags().Changed("trials") {
		perRow = o.trials
	}
	if o.trials == 0 {
		o.trials = 1000
	}
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	s, _, err := o.setup(cmd)
	if err != nil {
		return err
	}
	rows := experiment.PaperExperiments(s)
	for _, r := range rows {
		if err := r.Measurable(r.Nodes - 1); err != nil {
			return configError(err, setupFlags(cmd), "model")
		}
	}
	all := make([]experiment.Experiment, len(rows))
	for i, r := range rows {
		all[i] = r
	}
	if o.trace {
		return traceTrial(cmd.Context(), a.stdout, o, all[2]) // 150-155ms: the interesting one
	}
	trials := experiment.PaperTrials(perRow)
	rs, interrupted, err := a.runExperiments(cmd.Context(), "paper", all, trials, o.seed, o.workers)
	if err != nil {
		return err
	}
	a.reportChecked(o, rs)
	var panels [2]plot.Panel
	for i, r := range rows {
		panels[r.Row.Panel].Title = paperPanelShort[r.Row.Panel]
		panels[r.Row.Panel].Results = append(panels[r.Row.Panel].Results, rs[i])
	}
	m := o.partialMeta(interrupted, trials)
	switch {
	case o.json:
		err = m.WriteJSONLines(a.stdout, rs, o.cdf)
	case o.csv:
		err = m.WriteCSV(a.stdout, rs)
	case interrupted:
		// The tables, but not the comparison with the paper: partial
		// rows would compare unlike with like.
		if err = report.WritePaperTables(a.stdout, s, o.seed, rs); err == nil {
			err = writeInterrupted(a.stdout, finishedTrials(rs), sum(trials), "trials")
		}
	default:
		err = report.WritePaperText(a.stdout, s, o.seed, rs)
	}
	if err != nil {
		return err
	}
	fig := figure(o, "Time without a leader after the leader crashes (Raft paper, Figure 16)", s.Describe(), panels[:])
	if err := writePlot(a.stderr, o, fig, interrupted); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// paperPanelShort are the panel titles of the paper's figure.
var paperPanelShort = [2]string{
	"(a) varying the randomness of the election timeout",
	"(b) scaling the minimum election timeout",
}
