package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report"
)

type partitionOpts struct {
	opts
	shapes string
	window time.Duration
}

func (a *app) partitionCmd() *cobra.Command {
	o := &partitionOpts{}
	var shapeDocs strings.Builder
	for _, s := range experiment.Shapes() {
		fmt.Fprintf(&shapeDocs, "  %-16s %s\n", s.Name, s.Doc)
	}
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Cut the network of a cluster that has a leader and count what it costs",
		Long: `partition settles a leader in a healthy cluster, then cuts links around it in
a named shape and runs the cluster for --for of virtual time (per trial),
counting election rounds, pre-vote rounds, leader changes, and the time
during which no leader reaches a majority (itself and the followers that
accepted it over links that work both ways). Rates are per virtual hour
of the cluster.

Shapes:
` + shapeDocs.String() + `
Unless --prevote or --checkquorum is given, every shape runs with the four
combinations of pre-vote and check-quorum, which shows what each buys.
--model takes a comma-separated list of models, or all.`,
		Example: `  raftsim partition
  raftsim partition --model all --shape bare-quorum,one-way
  raftsim partition --model plain --prevote --checkquorum --for 1h --trials 2 --csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPartition(cmd, o) },
	}
	addModelFlags(cmd, &o.opts, true)
	addRunFlags(cmd, &o.opts, 6, false)
	cmd.Flags().Lookup("model").Usage = "cluster model presets, comma-separated, or all: " + experiment.ModelNames()
	cmd.Flags().Lookup("trials").Usage = "number of windows per row"
	cmd.Flags().StringVar(&o.shapes, "shape", "all", "partition shapes, comma-separated, or all: "+experiment.ShapeNames())
	cmd.Flags().DurationVar(&o.window, "for", experiment.DefaultStableFor, "virtual time of one window, after the leader settled")
	return cmd
}

// partitionRow is one row of raftsim partition's output.
type partitionRow struct {
	model string
	p     experiment.Partition
	sum   experiment.StabilitySummary
}

func (a *app) runPartition(cmd *cobra.Command, o *partitionOpts) error {
	if err := o.checkRun(cmd); err != nil {
		return err
	}
	if o.cdf {
		return flagError("cdf", "does not apply to partition")
	}
	if o.window <= 0 {
		return flagError("for", "must be positive, got %v", o.window)
	}
	if a.shard.n > 0 {
		return flagError("shard", "is not available with partition: its windows are summarized together, so shards would not merge (run it whole)")
	}
	models, err := splitList(o.model, "all", func(m experiment.Model) string { return m.Name }, experiment.Models(), "model")
	if err != nil {
		return err
	}
	shapes, err := splitList(o.shapes, "all", func(s experiment.Shape) string { return s.Name }, experiment.Shapes(), "shape")
	if err != nil {
		return err
	}
	f := cmd.Flags()
	combos := [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}}
	if f.Changed("prevote") || f.Changed("checkquorum") {
		combos = nil // the model's, as changed by the flags
	}
	var rows []partitionRow
	for _, m := range models {
		o.model = m.Name
		base, _, err := o.setup(cmd)
		if err != nil {
			return err
		}
		if err := o.checkCost(base, o.window); err != nil {
			return err
		}
		for _, sh := range shapes {
			for i := 0; i == 0 || i < len(combos); i++ {
				s := base
				if combos != nil {
					s.PreVote, s.CheckQuorum = combos[i][0], combos[i][1]
				}
				p := experiment.Partition{Stability: experiment.Stability{Setup: s, For: o.window}, Shape: sh}
				if err := p.Validate(); err != nil {
					return configError(err, map[string]string{"Nodes": "nodes", "For": "for"}, "model")
				}
				rows = append(rows, partitionRow{model: m.Name, p: p})
			}
		}
	}
	if o.trace {
		return traceTrial(cmd.Context(), a.stdout, &o.opts, rows[0].p)
	}
	jobs := make([]sim.Job, len(rows))
	trials := make([]int, len(rows))
	for i, r := range rows {
		jobs[i] = experiment.JobOf(r.p, o.trials)
		trials[i] = o.trials
	}
	update, finish := a.progress("partition")
	outs, err := sim.Run(cmd.Context(), jobs, sim.RunOptions{Seed: o.seed, Workers: o.workers, Progress: update})
	finish()
	interrupted := false
	var te *sim.TrialError
	switch {
	case errors.As(err, &te):
		return trialFailure{what: "partition " + rows[te.Job].p.Shape.Name, err: te, traceable: len(rows) == 1}
	case err != nil && cmd.Context().Err() != nil:
		interrupted = true
		fmt.Fprintln(a.stderr, "raftsim: interrupted: showing the windows that finished")
	case err != nil:
		return err
	}
	for i := range rows {
		rows[i].sum = rows[i].p.Summarize(outs[i])
	}
	if o.check {
		n := 0
		for _, out := range outs {
			n += len(out)
		}
		fmt.Fprintf(a.stderr, "raftsim: --check: election safety held in all %d trials checked\n", n)
	}
	switch {
	case o.json || o.csv:
		err = writePartition(a.stdout, o, rows, interrupted)
	default:
		fmt.Fprintf(a.stdout, "partition: %d x %v windows per row after the leader settled, seed %d\n", o.trials, o.window, o.seed)
		for _, m := range models {
			for _, r := range rows {
				if r.model == m.Name {
					fmt.Fprintf(a.stdout, "model %s: %s\n", m.Name, r.p.Describe())
					break
				}
			}
		}
		err = partitionTable(rows).Write(a.stdout)
		if err == nil && interrupted {
			done := 0
			for _, r := range rows {
				done += r.sum.Trials
			}
			err = writeInterrupted(a.stdout, done, len(rows)*o.trials, "windows")
		}
	}
	if err != nil {
		return err
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// splitList resolves a comma-separated list of names (or all) against
// the items, in the order given.
func splitList[T any](list, all string, name func(T) string, items []T, flag string) ([]T, error) {
	if list == all {
		return items, nil
	}
	var out []T
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == all {
			return nil, flagError(flag, "%s names every %s; it cannot be combined with other names, got %q", all, flag, list)
		}
		found := false
		for _, it := range items {
			if name(it) == n {
				out, found = append(out, it), true
			}
		}
		if !found {
			var names []string
			for _, it := range items {
				names = append(names, name(it))
			}
			return nil, flagError(flag, "unknown %s %q (want %s, or %s)", flag, n, strings.Join(names, ", "), all)
		}
	}
	return out, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func perHour(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func partitionTable(rows []partitionRow) report.Table {
	t := report.Table{Header: []string{"model", "shape", "prevote", "checkquorum", "elections/h", "prevotes/h", "leader chg/h", "leaderless/h", "unsettled"}}
	for _, r := range rows {
		row := []string{r.model, r.p.Shape.Name, onOff(r.p.PreVote), onOff(r.p.CheckQuorum)}
		if r.sum.Trials == 0 {
			// No window finished (an interrupt): nothing was measured,
			// which is not a rate of 0.
			t.Rows = append(t.Rows, append(row, "–", "–", "–", "–", "–"))
			continue
		}
		hours := r.sum.Measured.Hours()
		t.Rows = append(t.Rows, append(row,
			perHour(float64(r.sum.Elections)/max(hours, 1e-12)), perHour(float64(r.sum.PreVotes)/max(hours, 1e-12)),
			perHour(r.sum.LeaderChangesPerHour), r.sum.LeaderlessPerHour.Round(time.Millisecond).String(),
			strconv.Itoa(r.sum.Unsettled)))
	}
	return t
}

// partitionRecord returns the output record of one row; requested are
// the windows asked of it.
func partitionRecord(m report.Meta, r partitionRow, seed uint64, requested int) *report.Record {
	h := max(r.sum.Measured.Hours(), 1e-12)
	rec := m.NewRecord("partition", seed, r.sum.Trials, requested)
	rec.Add("shape", r.p.Shape.Name)
	rec.Add("setup", r.p.Describe())
	rec.Add("prevote", r.p.PreVote)
	rec.Add("checkquorum", r.p.CheckQuorum)
	rec.Add("hours", r.sum.Measured.Hours())
	rec.Add("unsettled", r.sum.Unsettled)
	rec.Add("elections", r.sum.Elections)
	rec.Add("prevotes", r.sum.PreVotes)
	rec.Add("leader_changes", r.sum.LeaderChanges)
	rec.Add("elections_per_hour", float64(r.sum.Elections)/h)
	rec.Add("prevotes_per_hour", float64(r.sum.PreVotes)/h)
	rec.Add("leader_changes_per_hour", r.sum.LeaderChangesPerHour)
	rec.Add("leaderless_s_per_hour", r.sum.LeaderlessPerHour.Seconds())
	rec.AddParams(r.p.Result(nil).Setup.Params()) // the heartbeat made explicit
	return rec
}

// writePartition writes the rows as JSON Lines or CSV, one record each.
func writePartition(w io.Writer, o *partitionOpts, rows []partitionRow, interrupted bool) error {
	cw := csv.NewWriter(w)
	for i, r := range rows {
		m := o.partialMeta(interrupted, nil)
		m.Model = r.model
		rec := partitionRecord(m, r, o.seed, o.trials)
		var err error
		if o.json {
			err = rec.WriteJSON(w)
		} else {
			if i == 0 {
				err = cw.Write(rec.CSVHeader())
			}
			if err == nil {
				err = cw.Write(rec.CSVRow())
			}
		}
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
