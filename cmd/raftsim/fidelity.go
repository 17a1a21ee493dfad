package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
)

// addShortLogsFlag registers --short-logs (failover, bootstrap); def is
// the subcommand's default, for the help.
func addShortLogsFlag(cmd *cobra.Command, o *opts, def string) {
	knobFlag(cmd, "shortlogs", def, &o.shortLogs)
}

// addTimersAtCrashFlag registers --timers-at-crash (failover).
func addTimersAtCrashFlag(cmd *cobra.Command) { knobFlag(cmd, "timersatcrash", "", nil) }

// addClockRateFlag registers --clock-rate (failover, bootstrap).
func addClockRateFlag(cmd *cobra.Command) { knobFlag(cmd, "clockrate", "", nil) }

// addLatenessSpreadFlags registers --lateness-spread and
// --lateness-per-server (failover, bootstrap, paper).
func addLatenessSpreadFlags(cmd *cobra.Command) {
	knobFlag(cmd, "latenessspread", "", nil)
	knobFlag(cmd, "latenessperserver", "", nil)
}

// checkFailoverModel refuses a cold-start --model on failover.
func checkFailoverModel(cmd *cobra.Command) error {
	if cmd.Name() == "failover" && isColdStart(cmd) {
		return flagError("model", "%s describes cold starts: run it with raftsim bootstrap", cmd.Flags().Lookup("model").Value.String())
	}
	return nil
}

// applyShortLogs sets s.ShortLogs from --short-logs; a bootstrap has no
// short logs unless --short-logs (or a cold-start model) says so.
func (o *opts) applyShortLogs(cmd *cobra.Command, s *experiment.Setup) error {
	fl := cmd.Flags()
	if fl.Lookup("short-logs") == nil {
		return nil
	}
	switch {
	case fl.Changed("short-logs"):
		if o.shortLogs < 0 {
			return flagError("short-logs", "must not be negative, got %d", o.shortLogs)
		}
		if cmd.Name() == "bootstrap" && o.shortLogs > 0 && fl.Lookup("engine") != nil && fl.Lookup("engine").Value.String() == "etcd" {
			return flagError("short-logs", "is not available with --engine etcd on bootstrap (etcd nodes start with equal logs)")
		}
		s.ShortLogs = o.shortLogs
	case cmd.Name() == "bootstrap" && !isColdStart(cmd):
		s.ShortLogs = 0
	}
	return nil
}

// shortLogsNote states the short logs of s for a description line.
func shortLogsNote(s experiment.Setup, bootstrap bool) string {
	switch {
	case s.ShortLogs == 0:
		return "equal logs"
	case bootstrap && s.ShortLogs == 1:
		return "1 short log"
	case bootstrap:
		return fmt.Sprintf("%d short logs", s.ShortLogs)
	}
	return fmt.Sprintf("%d short logs among the survivors", s.ShortLogs)
}

// isColdStart reports whether the --model preset describes cold starts,
// whose short logs apply to bootstrap.
func isColdStart(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("model")
	if f == nil {
		return false
	}
	m, err := experiment.ModelNamed(f.Value.String())
	return err == nil && m.ColdStart()
}

// sweptLogs states the short logs of a sweep's base, or that they are
// swept.
func sweptLogs(base experiment.Setup, axes []experiment.Axis, bootstrap bool) string {
	for _, ax := range axes {
		if ax.Name == "shortlogs" || ax.Name == "nodes" { // nodes= keeps as many short logs as fit
			return "short logs (swept)"
		}
	}
	return shortLogsNote(base, bootstrap)
}
