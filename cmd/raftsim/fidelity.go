package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
)

// fidelityOpts are the flags of the comparisons with other simulators:
// short logs on failover and bootstrap, and AvailSim's crash.
type fidelityOpts struct {
	shortLogs     int
	timersAtCrash bool
	clockRate     float64
	latSpread     float64
	latPerServer  bool
}

// addShortLogsFlag registers --short-logs (failover, bootstrap).
func addShortLogsFlag(cmd *cobra.Command, o *opts, def string) {
	cmd.Flags().IntVar(&o.fid.shortLogs, "short-logs", 0, "number of servers whose logs are one entry short, so they cannot win: survivors of the crash (failover) or servers chosen at random (bootstrap) (default: "+def+")")
}

// addTimersAtCrashFlag registers --timers-at-crash (failover).
func addTimersAtCrashFlag(cmd *cobra.Command, o *opts) {
	cmd.Flags().BoolVar(&o.fid.timersAtCrash, "timers-at-crash", false, "start every survivor's election timer at the crash and drop the leader's heartbeats in flight (the thesis' AvailSim), instead of running them from the last heartbeat each received (the paper's cluster)")
}

// addClockRateFlag registers --clock-rate (failover, bootstrap).
func addClockRateFlag(cmd *cobra.Command, o *opts) {
	cmd.Flags().Float64Var(&o.fid.clockRate, "clock-rate", 0, "give each server a timer rate drawn per trial from [1-X, 1+X] that scales all its election and candidate timeouts (e.g. 0.001; 0: the same rate everywhere)")
}

// addLatenessSpreadFlags registers --lateness-spread and
// --lateness-per-server (failover, bootstrap).
func addLatenessSpreadFlags(cmd *cobra.Command, o *opts) {
	cmd.Flags().Float64Var(&o.fid.latSpread, "lateness-spread", 0, "scale the timer lateness of each trial by a factor drawn from [1-X, 1+X], X in [0, 1] (0: the same lateness in every trial)")
	cmd.Flags().BoolVar(&o.fid.latPerServer, "lateness-per-server", false, "with --lateness-spread, draw the factor for each server instead of once per trial")
}

// apply sets the fields of s from the flags that were given; a bootstrap
// has no short logs unless --short-logs says so.
func (f *fidelityOpts) apply(cmd *cobra.Command, s *experiment.Setup) error {
	fl := cmd.Flags()
	if cmd.Name() == "failover" && isColdStart(cmd) {
		return flagError("model", "%s describes cold starts: run it with raftsim bootstrap", fl.Lookup("model").Value.String())
	}
	if fl.Lookup("short-logs") != nil {
		switch {
		case fl.Changed("short-logs"):
			if f.shortLogs < 0 {
				return flagError("short-logs", "must not be negative, got %d", f.shortLogs)
			}
			if cmd.Name() == "bootstrap" && f.shortLogs > 0 && fl.Lookup("engine") != nil && fl.Lookup("engine").Value.String() == "etcd" {
				return flagError("short-logs", "is not available with --engine etcd on bootstrap (etcd nodes start with equal logs)")
			}
			s.ShortLogs = f.shortLogs
		case cmd.Name() == "bootstrap" && !isColdStart(cmd):
			s.ShortLogs = 0
		}
	}
	if fl.Lookup("clock-rate") != nil && fl.Changed("clock-rate") {
		if err := simulatedOnly(cmd, "clock-rate"); f.clockRate != 0 && err != nil {
			return err
		}
		if err := s.Set("clockrate", fl.Lookup("clock-rate").Value.String()); err != nil {
			return configError(err, nil, "clock-rate")
		}
	}
	if fl.Lookup("lateness-spread") != nil && (fl.Changed("lateness-spread") || fl.Changed("lateness-per-server")) {
		if err := simulatedOnly(cmd, "lateness-spread"); err != nil {
			return err
		}
		if f.latPerServer && f.latSpread == 0 {
			return flagError("lateness-per-server", "needs --lateness-spread")
		}
		if err := s.Set("latenessspread", fl.Lookup("lateness-spread").Value.String()); err != nil {
			return configError(err, nil, "lateness-spread")
		}
		s.LatenessPerServer = f.latPerServer
	}
	if fl.Lookup("timers-at-crash") != nil && fl.Changed("timers-at-crash") {
		if err := simulatedOnly(cmd, "timers-at-crash"); f.timersAtCrash && err != nil {
			return err
		}
		s.TimersAtCrash = f.timersAtCrash
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
