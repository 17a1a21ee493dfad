package main

import (
	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
)

// addCandidateFlags registers the candidate flags (Howard et al.'s
// variants), which every experiment on a simulated cluster takes.
func addCandidateFlags(cmd *cobra.Command) {
	knobFlag(cmd, "candidatetimeout", "", nil)
	knobFlag(cmd, "candidatebackoff", "", nil)
	knobFlag(cmd, "candidateswait", "", nil)
}

// addCrashFlags registers --crash and --crash-offset (failover).
func addCrashFlags(cmd *cobra.Command) {
	knobFlag(cmd, "crash", "", nil)
	knobFlag(cmd, "crashoffset", "", nil)
}

// addUntilFlag registers --until (failover, bootstrap, sweep); def is the
// experiment's own stopping point, for the help text.
func addUntilFlag(cmd *cobra.Command, def string) { knobFlag(cmd, "until", def, nil) }

// checkUntilFlag refuses --until default: the flag names a stopping
// point; leaving it out is the default.
func checkUntilFlag(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("until")
	if f == nil || !f.Changed {
		return nil
	}
	if u, err := experiment.ParseUntil(f.Value.String()); err != nil || u == experiment.UntilDefault {
		return flagError("until", "must be elected, majority or all, got %q", f.Value.String())
	}
	return nil
}
