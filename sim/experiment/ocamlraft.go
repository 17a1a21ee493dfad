package experiment

import (
	"time"

	"github.com/raftick/raftick/sim"
)

// OcamlRaftModel returns the rules of Howard et al.'s simulator,
// ocaml-raft (github.com/heidi-ann/ocaml-raft), as it produced the
// 1000-run data of "Raft Refloated" (commit 56cac8a, 2014-09-17, "moving
// to 1000 iterations"; the data is in heidihoward/ocaml-raft-data,
// raw/{org,fixed,expo,combo}). Run it with Bootstrap: each of his runs
// is a cold start of five servers. Each rule, with the line of his code
// at that commit it follows:
//
//   - five servers, all running, whose timers all start at time 0
//     (lib/config.ml:42, lib/simulator.ml:790: every node starts with
//     startFollow at time 0), measured until the first leader is elected
//     (lib/simulator.ml:302, firstele): Until = UntilElected;
//   - four of the five can win (lib/env.ml:428: node i is eligible if
//     i <= possible_leaders, ids 0-4, possible_leaders 3 at
//     lib/config.ml:43): ShortLogs = 1, a server whose log is one entry
//     short (his ineligible candidate sends last index -1,
//     lib/simulator.ml:188);
//   - the clock starts at a uniform point of [0, min/2) after the start
//     (lib/config.ml:36, the "correction" subtracted at line 91): his runs
//     stand for a failover whose timers started at the last heartbeat:
//     HeartbeatOffset;
//   - one-way latency normal, mean 5ms, sd 3ms, a draw <= 0 drawn again
//     (lib/config.ml:57, lib/common.ml:56-58): normal:5ms,3ms,redraw;
//   - no disk, no processing time; heartbeat every min/2
//     (lib/config.ml:56);
//   - follower timeouts uniform in [min, max) (lib/config.ml:48,
//     lib/common.ml:38); a candidate's round timeout the same (org, expo)
//     or uniform in [23ms, 46ms) (fixed, combo; lib/config.ml:55):
//     CandidateMin, CandidateMax;
//   - a candidate ignores rejections and waits for its round timeout
//     (lib/simulator.ml:401: a response only counts): CandidatesWait;
//   - a candidate that steps down draws a fresh follower timeout
//     (startFollow ends with refreshTimer, lib/simulator.ml:289-298):
//     KeepTimer off;
//   - a candidate (or leader) deposed by a higher-term vote request does
//     not grant it: the vote needs the mode before the step-down to be
//     Follower (lib/simulator.ml:370): GrantOnlyAsFollower;
//   - a follower that denies a higher-term request adopts the term and
//     keeps its timer (SetTerm, lib/env.ml:228); one that grants restarts
//     it (lib/simulator.ml:375): RestartTimerOnFollow off;
//   - binary exponential backoff of the candidate timeout (expo, combo;
//     lib/config.ml:70, lib/simulator.ml:43: timeout * 2^backoff), the
//     exponent growing at a new round only if at least half of the other
//     servers rejected the last one (lib/env.ml:199) and reset at any
//     step-down or win (lib/env.ml:189, 220): CandidateBackoff with
//     BackoffOnRejections (the preset sets the latter; --candidate-backoff
//     turns the backoff on);
//   - a majority is 3 of 5 (lib/simulator.ml:179).
//
// What is not modelled: his clock counts units of 10µs and truncates
// every timeout and latency to them (lib/clock.ml:30, scale at
// lib/config.ml:32), and his results are whole milliseconds, truncated
// (unscale_int, lib/config.ml:91), about 0.5ms below the exact times on
// average. His candidate backoff has no cap; MaxBackoffShift caps it here.
//
// His five variants: org is this preset; fixed adds --candidate-timeout
// 23-46ms; expo adds --candidate-backoff; combo adds both. "org300" is
// no name in his code or data; the org runs include the 150-300ms range
// (--timeout 150-300ms).
func OcamlRaftModel() Setup {
	return Setup{
		Nodes:               5,
		TimeoutMin:          150 * time.Millisecond,
		TimeoutMax:          300 * time.Millisecond,
		Network:             sim.Network{Latency: sim.NormalRedraw(5*time.Millisecond, 3*time.Millisecond)},
		CandidatesWait:      true,
		GrantOnlyAsFollower: true,
		BackoffOnRejections: true,
		HeartbeatOffset:     true,
		Until:               UntilElected,
		ShortLogs:           1,
	}
}
