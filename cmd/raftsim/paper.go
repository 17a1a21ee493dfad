package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
)

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
	addRunFlags(cmd, o, 0, true)
	cmd.Flags().Lookup("trials").Usage = "trials per range (0: the paper's, 1000 per range and 100 for 150-150ms); 150-150ms gets a tenth"
	return cmd
}

func (a *app) runPaper(cmd *cobra.Command, o *opts) error {
	if o.trials == 0 {
		o.trials = 1000
	} else if o.trials < 0 {
		return flagError("trials", "must not be negative, got %d", o.trials)
	}
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	s, err := o.setup(cmd)
	if err != nil {
		return err
	}
	rows := sim.PaperRows()
	exps := sim.PaperExperiments(s)
	trials := make([]int, len(rows))
	all := make([]sim.Experiment, len(rows))
	for i, r := range rows {
		trials[i] = r.Trials
		if cmd.Flags().Changed("trials") {
			trials[i] = o.trials
			if r.Min == r.Max {
				trials[i] = max(1, o.trials/10)
			}
		}
		all[i] = exps[i]
	}
	if o.trace {
		return traceTrial(a.stdout, o, all[2]) // 150-155ms: the interesting one
	}
	ss, interrupted, err := a.runExperiments(cmd.Context(), "paper", all, trials, o.seed, o.workers)
	if err != nil {
		return err
	}
	for i := range ss {
		ss[i].Paper = rows[i].Quoted
	}
	var panels [2]sim.Panel
	for i, r := range rows {
		panels[r.Panel].Title = sim.PaperPanelTitles[r.Panel]
		panels[r.Panel].Summaries = append(panels[r.Panel].Summaries, ss[i])
	}
	switch {
	case o.json:
		err = sim.WriteJSONArray(a.stdout, ss, o.cdf)
	case o.csv:
		err = sim.WriteCSV(a.stdout, ss)
	default:
		err = writePaperText(a.stdout, s, o.seed, panels[:], ss)
	}
	if err != nil {
		return err
	}
	if err := writePlot(o, panels[:]); err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

func writePaperText(w io.Writer, s sim.Setup, seed uint64, panels []sim.Panel, ss []sim.Summary) error {
	bt := sim.BroadcastTimes(s)
	fmt.Fprintf(w, "Raft paper, Figure 16: time without a leader after the leader crashes (seed %d)\n", seed)
	fmt.Fprintf(w, "model: %s\n", describe(s))
	fmt.Fprintf(w, "simulated broadcast time: %s (round trip + one write), %s for a vote at a new term (paper: about 15ms)\n\n",
		sim.FmtMS(bt.RoundTripWrite), sim.FmtMS(bt.VoteRound))
	for _, p := range panels {
		fmt.Fprintln(w, p.Title)
		if err := sim.SummaryTable(p.Summaries, true).Write(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "The paper's figures beside the simulator's:")
	if err := sim.WriteComparison(w, ss); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := fmt.Fprintln(w, sim.PaperShape(ss))
	return err
}
