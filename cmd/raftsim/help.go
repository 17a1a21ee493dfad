package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
)

// specHelp explains the latency specs of --latency, --disk and --lateness.
const specHelp = `
Latency specs (--latency, --disk, --lateness): a distribution of one delay,
with durations in Go syntax (250us, 5ms, 1.5s):

  fixed:5ms            always 5ms ("5ms" alone means the same)
  uniform:1ms,5ms      uniform between 1ms and 5ms
  normal:5ms,2ms       normal with mean 5ms and standard deviation 2ms,
                       negative draws cut to 0 (the default, ",clamp")
  normal:5ms,2ms,redraw  the same, negative draws drawn again
  lognormal:5ms,0.8    log-normal with median 5ms; 0.8 is the standard
                       deviation of the delay's natural logarithm (the
                       p99 is about 5ms * e^(2.33*0.8) = 32ms: a long tail)
  empirical:1ms,2ms,7ms  each listed value equally likely
  none                 no delay (--disk, --lateness)`

// modelHelp lists the --model presets and what each sets.
func modelHelp() string {
	var b strings.Builder
	b.WriteString("\nModel presets (--model): every setting no flag above changes comes from\nthe preset.\n\n")
	for _, m := range experiment.Models() {
		b.WriteString("  " + m.Name + strings.Repeat(" ", max(1, 11-len(m.Name))) + wrapText(m.Doc, 62, 13) + "\n")
		b.WriteString(strings.Repeat(" ", 13) + wrapText(m.Setup().Describe(), 62, 13) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// wrapText wraps s at width columns, indenting continuation lines.
func wrapText(s string, width, indent int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	lines = append(lines, line)
	return strings.Join(lines, "\n"+strings.Repeat(" ", indent))
}

// addModelHelp appends the latency spec and model preset sections to the
// help of a command with the model flags, and completes their values.
func addModelHelp(cmd *cobra.Command) {
	cmd.Long += "\n" + specHelp + "\n" + modelHelp()
	var names []string
	for _, m := range experiment.Models() {
		names = append(names, m.Name+"\t"+m.Doc)
	}
	_ = cmd.RegisterFlagCompletionFunc("model", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
	for _, f := range []string{"latency", "disk", "lateness"} {
		if cmd.Flags().Lookup(f) != nil {
			_ = cmd.RegisterFlagCompletionFunc(f, cobra.FixedCompletions([]string{"fixed:", "uniform:", "normal:", "lognormal:", "empirical:", "none"},
				cobra.ShellCompDirectiveNoSpace|cobra.ShellCompDirectiveNoFileComp))
		}
	}
	if cmd.Flags().Lookup("plot") != nil {
		_ = cmd.MarkFlagFilename("plot", "pdf", "svg", "png")
	}
}

// columnsHelp explains the columns of the experiment tables.
const columnsHelp = `
Table columns: trials (with "(N cut)": N trials reached --max-time and
count there; statistics they touch show as >=), min to max (statistics of
the measured time; p99.9 is the 99.9th percentile), split (the fraction of
election terms that ended without a leader), terms (the mean number of
terms from the crash to the winning term), msgs (the mean number of
messages until the end of the measurement). --json and --csv give the same
as fields (split_vote_rate, mean_terms, messages_per_election, p50_ms...):
see "raftsim help records".`

// addColumnsHelp appends the table columns to the help of a command that
// prints experiment tables.
func addColumnsHelp(cmd *cobra.Command) { cmd.Long += "\n" + columnsHelp }
