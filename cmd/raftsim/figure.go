package main

import (
	"fmt"

	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/report/plot"
)

// caption returns a figure's caption line: seed, trials (and how many
// were cut at the time limit or never had a first leader), the model
// preset and its description, and the tool's version.
func caption(o *opts, rs []experiment.Result, model string) string {
	trials, cut, noLeader := 0, 0, 0
	for _, r := range rs {
		trials += r.Trials
		cut += r.TimedOut
		noLeader += r.NoLeader
	}
	c := fmt.Sprintf("Seed %d; %d trials", o.seed, trials)
	if cut > 0 {
		c += fmt.Sprintf(" (%d cut at the %v limit, drawn at the limit)", cut, o.maxTime)
	}
	if noLeader > 0 {
		c += fmt.Sprintf(" (%d without a first leader, left out)", noLeader)
	}
	if o.model != "" {
		c += "; model " + o.model
	}
	if model != "" {
		c += ": " + model
	}
	return c + "; raftsim " + version() + "."
}

// figure returns the --plot figure of results in panels.
func figure(o *opts, title, model string, panels []plot.Panel) plot.Figure {
	var all []experiment.Result
	for _, p := range panels {
		all = append(all, p.Results...)
	}
	return plot.Figure{Title: title, Caption: caption(o, all, model), Panels: panels}
}
