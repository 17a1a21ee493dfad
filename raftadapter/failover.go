package raftadapter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// MinWaitBound is the smallest default bound FailoverConfig puts on waiting
// for an election (see FailoverConfig.StartTimeout and TrialTimeout).
const MinWaitBound = 5 * time.Second

// FailoverConfig configures Failover: the failover experiment run on real
// hashicorp/raft clusters in real time. Start from DefaultFailoverConfig.
type FailoverConfig struct {
	// Cluster configures each trial's cluster. Trial i runs on a fresh
	// cluster whose Seed is derived from (Cluster.Seed, i).
	Cluster ClusterConfig
	// Trials is the number of failovers to measure, one after another
	// (real time: they never overlap). At least 1. Default 20.
	Trials int
	// Settle is how long the cluster runs with its first leader, once
	// every node knows it, before the leader is crashed. The crash is then
	// delayed further by a uniform draw from [0, ElectionTimeout/5), the
	// span of hashicorp's heartbeat interval, so it lands at a random point
	// of the leader's heartbeat cycle. 0 means Cluster.Timing.ElectionTimeout;
	// negative is invalid.
	Settle time.Duration
	// StartTimeout bounds the wait for each cluster's first leader, and
	// TrialTimeout the wait for each failover. 0 means max(50 VoteTimeout,
	// MinWaitBound); negative is invalid.
	StartTimeout, TrialTimeout time.Duration
	// Progress, if not nil, is called on Failover's goroutine after each
	// trial with the number of trials done, the total, and the trial.
	Progress func(done, total int, t Trial)
}

// DefaultFailoverConfig returns 20 trials on DefaultClusterConfig.
func DefaultFailoverConfig() FailoverConfig {
	return FailoverConfig{Cluster: DefaultClusterConfig(), Trials: 20}
}

// Validate reports the first invalid field of c, or nil.
func (c FailoverConfig) Validate() error {
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	if c.Cluster.Nodes < 2 {
		return fieldErr("FailoverConfig.Cluster.Nodes", c.Cluster.Nodes, "must be at least 2 to have a survivor")
	}
	if c.Trials < 1 {
		return fieldErr("FailoverConfig.Trials", c.Trials, "must be at least 1")
	}
	if c.Settle < 0 {
		return fieldErr("FailoverConfig.Settle", c.Settle, "must not be negative (0 means ElectionTimeout)")
	}
	if c.StartTimeout < 0 {
		return fieldErr("FailoverConfig.StartTimeout", c.StartTimeout, "must not be negative (0 means default)")
	}
	if c.TrialTimeout < 0 {
		return fieldErr("FailoverConfig.TrialTimeout", c.TrialTimeout, "must not be negative (0 means default)")
	}
	return nil
}

func (c FailoverConfig) bound(d time.Duration) time.Duration {
	if d != 0 {
		return d
	}
	return max(50*c.Cluster.Timing.voteTimeout(), MinWaitBound)
}

// Failover runs cfg.Trials failover trials one after another and returns
// each trial's failover time (Trial.Failover): from the instant the leader
// of a settled cluster is shut down until every surviving node observes the
// same new leader. See FailoverTrials for the details of each trial.
func Failover(ctx context.Context, cfg FailoverConfig) ([]time.Duration, error) {
	trials, err := FailoverTrials(ctx, cfg)
	out := make([]time.Duration, len(trials))
	for i, t := range trials {
		out[i] = t.Failover
	}
	return out, err
}

// FailoverTrials runs cfg.Trials failover trials one after another, each on
// a fresh cluster: start it, wait until every node knows the same leader,
// let it run for Settle plus a random fraction of a heartbeat interval,
// crash the leader (Cluster.CrashLeader), wait until every survivor
// observes the same new leader, shut the cluster down. It returns the
// trials that completed; on error (ctx cancelled, a bound exceeded, a
// cluster that failed to start) also the error, naming the trial.
func FailoverTrials(ctx context.Context, cfg FailoverConfig) ([]Trial, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	settle := cfg.Settle
	if settle == 0 {
		settle = cfg.Cluster.Timing.ElectionTimeout
	}
	phase := cfg.Cluster.Timing.ElectionTimeout / 5
	rng := rand.New(rand.NewPCG(cfg.Cluster.Seed, 0x6661696c6f766572)) // "failover"
	out := make([]Trial, 0, cfg.Trials)
	for i := range cfg.Trials {
		cc := cfg.Cluster
		cc.Seed = rand.New(rand.NewPCG(cfg.Cluster.Seed, uint64(i))).Uint64()
		wait := settle + time.Duration(rng.Int64N(int64(phase)))
		t, err := failoverTrial(ctx, cc, wait, cfg.bound(cfg.StartTimeout), cfg.bound(cfg.TrialTimeout))
		if err != nil {
			return out, fmt.Errorf("raftadapter: failover trial %d of %d: %w", i+1, cfg.Trials, err)
		}
		out = append(out, t)
		if cfg.Progress != nil {
			cfg.Progress(len(out), cfg.Trials, t)
		}
	}
	return out, nil
}

func failoverTrial(ctx context.Context, cc ClusterConfig, wait, startBound, trialBound time.Duration) (Trial, error) {
	c, err := NewCluster(cc)
	if err != nil {
		return Trial{}, err
	}
	defer func() { _ = c.Shutdown() }()

	sctx, cancel := context.WithTimeout(ctx, startBound)
	_, err = c.WaitLeader(sctx)
	cancel()
	if err != nil {
		return Trial{}, err
	}
	timer := time.NewTimer(wait)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
		return Trial{}, ctx.Err()
	}
	// The leader may have changed while settling (rare: a stalled
	// heartbeat under load makes it lose its lease); wait for agreement
	// again, and again if it changes between the wait and the crash.
	sctx, cancel = context.WithTimeout(ctx, startBound)
	defer cancel()
	for {
		if _, err := c.WaitLeader(sctx); err != nil {
			return Trial{}, err
		}
		tctx, tcancel := context.WithTimeout(ctx, trialBound)
		t, err := c.CrashLeader(tctx)
		tcancel()
		if !errors.Is(err, ErrNoLeader) {
			return t, err
		}
	}
}
