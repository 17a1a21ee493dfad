package raftadapter

import (
	"strings"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// electionDefaultLeaseRatio is what election.Config uses for LeaseRatio 0.
const electionDefaultLeaseRatio = 0.9

// TimingOf returns the Timing of an election node's configuration:
// ElectionTimeout, VoteTimeout, HeartbeatInterval, LeaseRatio (0 meaning
// election's default 0.9) and PreVote, validated as Timing.Validate does.
// Errors are *TimingError naming the election.Config field.
//
// hashicorp/raft randomizes both timeouts to [T, 2T) and nothing else, so
// ElectionJitter and VoteJitter must be nil or repeated.Proportional(1).
//
// Behaviour that hashicorp fixes rather than configures is not part of the
// mapping; a hashicorp node always behaves as an election node with
// Detection CheckLastContact, CheckQuorum on (the lease check), leader
// stickiness on (refusing (pre-)votes while a leader is known, see the
// package documentation) and no priority election.
func TimingOf(c election.Config) (Timing, error) {
	for _, j := range []struct {
		field string
		jit   repeated.Jitter
	}{{"ElectionJitter", c.ElectionJitter}, {"VoteJitter", c.VoteJitter}} {
		if j.jit != nil && j.jit != repeated.Proportional(1) {
			return Timing{}, timingErr("election.Config."+j.field, "",
				"election.Config.%s (%v) cannot be expressed: hashicorp/raft always randomizes timeouts to [T, 2T), i.e. repeated.Proportional(1)",
				j.field, j.jit)
		}
	}
	t := Timing{
		ElectionTimeout:   c.ElectionTimeout,
		VoteTimeout:       c.VoteTimeout,
		HeartbeatInterval: c.HeartbeatInterval,
		LeaseRatio:        c.LeaseRatio,
		PreVote:           c.PreVote,
	}
	if t.LeaseRatio == 0 {
		t.LeaseRatio = electionDefaultLeaseRatio
	}
	if err := t.Validate(); err != nil {
		te := err.(*TimingError)
		te.Field = strings.Replace(te.Field, "Timing.", "election.Config.", 1)
		te.Msg = strings.ReplaceAll(te.Msg, "Timing.", "election.Config.")
		return Timing{}, te
	}
	return t, nil
}
