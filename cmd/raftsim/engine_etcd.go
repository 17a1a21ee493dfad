package main

import (
	"time"

	"github.com/spf13/cobra"

	etcdengine "github.com/raftick/raftick/sim/engines/etcd"
	"github.com/raftick/raftick/sim/engines/realtime"
	"github.com/raftick/raftick/sim/experiment"
)

// etcdOpts are the etcd timing flags of failover, bootstrap and sweep.
type etcdOpts struct {
	tick                        time.Duration
	electionTick, heartbeatTick int
}

// addEtcdFlags registers the etcd timing flags (--engine etcd and --model
// etcd) and the --engine flag if the command has none yet.
func addEtcdFlags(cmd *cobra.Command, o *opts) {
	f := cmd.Flags()
	if f.Lookup("engine") == nil {
		f.StringVar(&o.engine, "engine", "raftick", "raftick (simulated, virtual time), raftick-realtime (raftick's nodes on real time) or etcd (real etcd raft nodes, virtual time)")
	}
	f.DurationVar(&o.etcd.tick, "tick", 0, "etcd's tick (--engine etcd, --model etcd; default: the heartbeat interval)")
	f.IntVar(&o.etcd.electionTick, "election-tick", 0, "etcd's ElectionTick: timeouts in [N, 2N) ticks (--engine etcd, --model etcd; default: --timeout in ticks)")
	f.IntVar(&o.etcd.heartbeatTick, "heartbeat-tick", 0, "etcd's HeartbeatTick (--engine etcd, --model etcd; default: --heartbeat in ticks)")
}

// etcdDefaults applies the engine choice's default model (--engine etcd runs
// the etcd model's settings unless --model is given) before o.setup.
func (o *opts) etcdDefaults(cmd *cobra.Command) {
	if o.engine == "etcd" && !cmd.Flags().Changed("model") {
		o.model = "etcd"
	}
}

// etcdSetup applies --tick, --election-tick and --heartbeat-tick to s,
// the setup both engines run, so --engine etcd and --model etcd see the
// same ticks.
func (o *opts) etcdSetup(cmd *cobra.Command, s experiment.Setup) (experiment.Setup, error) {
	f := cmd.Flags()
	if f.Lookup("tick") == nil {
		return s, nil
	}
	for _, flag := range []string{"tick", "election-tick", "heartbeat-tick"} {
		if f.Changed(flag) && o.engine != "etcd" && o.model != "etcd" {
			return s, flagError(flag, "needs --engine etcd or --model etcd")
		}
	}
	if f.Changed("tick") {
		if o.etcd.tick <= 0 {
			return s, flagError("tick", "must be positive, got %v", o.etcd.tick)
		}
		s.Tick = o.etcd.tick
		if !f.Changed("heartbeat") && !f.Changed("heartbeat-tick") {
			s.Heartbeat = s.Tick // etcd's servers: the heartbeat is one tick
		}
	}
	if o.model == "etcd" {
		// etcd's lease (votes ignored near a live leader) is CheckQuorum.
		s.LeaderStickiness = s.CheckQuorum
	}
	tick := s.Tick
	if tick <= 0 {
		tick = experiment.Bootstrap{Setup: s}.Result(nil).Setup.Heartbeat
	}
	if f.Changed("election-tick") {
		if err := tickFlag(cmd, "election-tick", "timeout", o.etcd.electionTick, 2); err != nil {
			return s, err
		}
		s.TimeoutMin = time.Duration(o.etcd.electionTick) * tick
		s.TimeoutMax = 2 * s.TimeoutMin
	}
	if f.Changed("heartbeat-tick") {
		if err := tickFlag(cmd, "heartbeat-tick", "heartbeat", o.etcd.heartbeatTick, 1); err != nil {
			return s, err
		}
		s.Heartbeat = time.Duration(o.etcd.heartbeatTick) * tick
	}
	if err := s.Validate(); err != nil {
		return s, configError(err, o.etcdFlags(cmd), "model")
	}
	return s, nil
}

// tickFlag checks a tick-count flag: at least least, and not given
// together with the duration flag it replaces.
func tickFlag(cmd *cobra.Command, flag, duration string, v, least int) error {
	switch {
	case cmd.Flags().Changed(duration):
		return flagError(flag, "cannot be combined with --%s", duration)
	case v < least:
		return flagError(flag, "must be at least %d, got %d", least, v)
	}
	return nil
}

// etcdFlags names the flag of each field the etcd engine or model
// refuses: the tick flags when they were given.
func (o *opts) etcdFlags(cmd *cobra.Command) map[string]string {
	m := setupFlags(cmd)
	m["Tick"] = "tick"
	f := cmd.Flags()
	if f.Changed("election-tick") {
		m["TimeoutMin"], m["TimeoutMax"], m["ElectionTick"] = "election-tick", "election-tick", "election-tick"
	} else {
		m["ElectionTick"] = "timeout"
	}
	if f.Changed("heartbeat-tick") {
		m["Heartbeat"] = "heartbeat-tick"
	}
	if f.Changed("tick") && !f.Changed("heartbeat") && !f.Changed("heartbeat-tick") {
		m["Heartbeat"] = "tick"
	}
	return m
}

// engineExperiment returns the experiment of s on the chosen engine:
// raftick's simulation or real etcd raft nodes (whose setup must pass
// etcdengine.Check). hashicorp runs elsewhere (runHashicorp).
func (o *opts) engineExperiment(cmd *cobra.Command, s experiment.Setup, bootstrap bool) (experiment.Experiment, error) {
	switch o.engine {
	case "raftick", "":
		if bootstrap {
			return experiment.Bootstrap{Setup: s}, nil
		}
		return experiment.Failover{Setup: s}, nil
	case "etcd":
		if err := etcdengine.Check(s, etcdengine.Config{}, !bootstrap); err != nil {
			return nil, configError(err, o.etcdFlags(cmd), "model")
		}
		if bootstrap {
			return etcdengine.Bootstrap{Setup: s}, nil
		}
		return etcdengine.Failover{Setup: s}, nil
	case "hashicorp":
		return nil, flagError("engine", "hashicorp runs only raftsim failover (real time, one trial after another); here: raftick, raftick-realtime or etcd")
	case realtimeEngine:
		return realtimeExperiment(cmd, s, bootstrap, nil)
	}
	return nil, flagError("engine", "unknown engine %q (want raftick, raftick-realtime or etcd)", o.engine)
}

// engineNote names a real engine in a text header.
func engineNote(r experiment.Result) string {
	switch r.Model {
	case "etcd-engine":
		return " on etcd raft nodes (virtual time)"
	case realtime.Model:
		return " on raftick nodes in real time"
	}
	return ""
}
