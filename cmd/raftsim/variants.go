package main

import (
	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/experiment"
)

// variantOpts are the flags of the candidate variants (Howard et al.),
// the failover's crash and where the clock stops.
type variantOpts struct {
	candidateTimeout string
	candidateBackoff bool
	candidateWaits   bool
	crash            int
	crashOffset      string
	until            string
}

// addCandidateFlags registers the candidate flags, which every
// experiment on a simulated cluster takes.
func addCandidateFlags(cmd *cobra.Command, o *opts) {
	f := cmd.Flags()
	f.StringVar(&o.v.candidateTimeout, "candidate-timeout", "", "a candidate's round timeout `range`, drawn uniformly in it, separate from the follower's election timeout (e.g. 75-150ms; default: the election timeout range)")
	f.BoolVar(&o.v.candidateBackoff, "candidate-backoff", false, "binary exponential backoff: double the candidate timeout after each failed round, until a leader is known")
	f.BoolVar(&o.v.candidateWaits, "candidate-waits", false, "a candidate waits for its round timeout even after a majority rejected it (the Raft paper's), instead of stepping down at once (etcd's) (default: the model's)")
}

// addCrashFlags registers --crash and --crash-offset (failover).
func addCrashFlags(cmd *cobra.Command, o *opts) {
	f := cmd.Flags()
	f.IntVar(&o.v.crash, "crash", 1, "number of servers that crash at once: the leader and K-1 others chosen at random; a majority must survive")
	f.StringVar(&o.v.crashOffset, "crash-offset", "uniform", "when the leader crashes: uniform (at a uniform point of the heartbeat interval, the paper's) or 0 (right after a heartbeat, AvailSim's)")
}

// addUntilFlag registers --until (failover, bootstrap, sweep); def is the
// experiment's own stopping point, for the help text.
func addUntilFlag(cmd *cobra.Command, o *opts, def string) {
	cmd.Flags().StringVar(&o.v.until, "until", "", "stop the clock when a leader is elected, when a majority knows it, or when every running server accepted it: elected, majority or all (default: "+def+")")
}

// apply sets the variant fields of s from the flags that were given.
func (v *variantOpts) apply(cmd *cobra.Command, s *experiment.Setup) error {
	f := cmd.Flags()
	if f.Changed("candidate-timeout") {
		if err := s.Set("candidatetimeout", v.candidateTimeout); err != nil {
			return configError(err, nil, "candidate-timeout")
		}
	}
	if f.Changed("candidate-backoff") {
		s.CandidateBackoff = v.candidateBackoff
	}
	if f.Changed("candidate-waits") {
		s.CandidatesWait = v.candidateWaits
	}
	if f.Changed("crash") {
		if v.crash < 1 {
			return flagError("crash", "must be at least 1 (the leader), got %d", v.crash)
		}
		s.Crash = v.crash
	}
	if f.Changed("crash-offset") {
		if err := s.Set("crashoffset", v.crashOffset); err != nil {
			return configError(err, nil, "crash-offset")
		}
	}
	if f.Changed("until") {
		u, err := experiment.ParseUntil(v.until)
		if err != nil || u == experiment.UntilDefault {
			return flagError("until", "must be elected, majority or all, got %q", v.until)
		}
		s.Until = u
	}
	return nil
}
