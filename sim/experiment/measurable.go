package experiment

import (
	"math"
	"time"

	"github.com/raftick/raftick/internal/quorum"
	"github.com/raftick/raftick/sim"
)

// Measurable reports whether an experiment on s with alive servers
// running (failover: Nodes-1, bootstrap and stability: Nodes) can measure
// what it is asked to within the trial's time limit, or a
// *sim.FieldError wrapping ErrInvalidConfig that names the field in the
// way and says why. Validate accepts such setups (they are well formed);
// Measurable refuses the ones whose trials would all run into the limit
// and report the limit as if it were a measurement:
//
//   - fewer alive servers than a majority of Nodes (a failover of 1 or 2
//     servers): no leader can ever be elected (Field "Nodes");
//   - an election timeout range reaching the time limit (Field
//     "TimeoutMax");
//   - a vote round (two mean latencies and the mean disk writes) as long
//     as the largest election timeout: every candidate's round ends
//     before its votes arrive (Field "Latency");
//   - a loss rate at which an election takes longer than the time limit
//     on average: a round wins only if a majority's requests and replies
//     all arrive, so an election takes about a mean timeout divided by
//     that probability (Field "Loss").
func (s Setup) Measurable(alive int) error {
	quorum := quorum.Majority(s.Nodes).Size()
	if alive < quorum {
		return fieldErr("Nodes", s.Nodes, "cannot elect a leader: %d of %d servers running is not a majority (a failover needs at least 3 servers)", alive, s.Nodes)
	}
	limit := s.maxTime()
	if s.TimeoutMax >= limit {
		return fieldErr("TimeoutMax", s.TimeoutMin.String()+"-"+s.TimeoutMax.String(), "reaches the trial's time limit %v: no election can finish within it", limit)
	}
	writes := 2
	if s.GroupCommit {
		writes = 1
	}
	round := 2*sim.Mean(s.Latency) + time.Duration(writes)*sim.Mean(s.Disk)
	if s.Latency != nil && round >= s.TimeoutMax {
		return fieldErr("Latency", s.Latency, "a vote round takes about %v (two latencies and the disk writes), not below the largest election timeout %v: every candidate times out before its votes arrive", round, s.TimeoutMax)
	}
	if s.Loss > 0 {
		p := roundWins(alive, quorum, s.Loss)
		mean := s.TimeoutMin + (s.TimeoutMax-s.TimeoutMin)/2
		expect := float64(mean) / p
		if expect >= float64(limit) {
			return fieldErr("Loss", s.Loss, "a vote round wins with probability %.2g, so an election takes about %.3gs on average, beyond the trial's time limit %v",
				p, expect/1e9, limit)
		}
	}
	return nil
}

// roundWins is the probability that a candidate among alive servers gets
// the quorum-1 votes it needs when every request and every reply is lost
// with probability loss.
func roundWins(alive, quorum int, loss float64) float64 {
	q := (1 - loss) * (1 - loss)
	peers, need := alive-1, quorum-1
	var p float64
	for k := need; k <= peers; k++ {
		p += binom(peers, k) * math.Pow(q, float64(k)) * math.Pow(1-q, float64(peers-k))
	}
	return p
}
