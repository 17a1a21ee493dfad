package election

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/repeated"
)

// roundJitter is the vote timer's jitter: Config.VoteJitter, told how many
// candidate rounds in a row the node has run. Every round restarts the vote
// timer, which clears repeated.State.Consecutive, so without this a
// repeated.Backoff vote jitter would never back off. The count is of rounds
// since the node last knew a leader (it won, or accepted a leader's
// heartbeat); the first round of a series sees Consecutive 0, the next 1,
// and so on. The timer calls Next with its own lock held, possibly without
// the node's, hence the atomic.
type roundJitter struct {
	inner  repeated.Jitter
	rounds atomic.Int64 // candidate rounds started since a leader was known
}

func (j *roundJitter) Next(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
	st.Consecutive = int(max(j.rounds.Load()-1, 0))
	return j.inner.Next(base, st, rng)
}

// beginRound counts a new candidate round; call it before the vote timer
// is (re)started for the round.
func (j *roundJitter) beginRound() { j.rounds.Add(1) }

// leaderKnown ends a series of rounds: the next round starts from 0.
func (j *roundJitter) leaderKnown() { j.rounds.Store(0) }
