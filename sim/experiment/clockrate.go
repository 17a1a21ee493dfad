package experiment

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
)

// clockRates draws a timer rate for each of n servers uniformly from
// [1-dev, 1+dev] (in server order, from rng) and returns the sim.Config
// hook that scales every election and vote timeout of a server by its
// rate (Setup.ClockRate).
func clockRates(n int, dev float64, rng *rand.Rand) func(election.ID, *election.Config) {
	rates := make([]float64, n+1)
	for id := 1; id <= n; id++ {
		rates[id] = 1 + dev*(2*rng.Float64()-1)
	}
	return func(id election.ID, ec *election.Config) {
		if int(id) >= len(rates) {
			return
		}
		r := rates[id]
		ec.ElectionJitter = scaled(ec.ElectionJitter, r)
		if ec.VoteJitter != nil {
			ec.VoteJitter = scaled(ec.VoteJitter, r)
		}
	}
}

// scaled returns j with every drawn duration multiplied by rate
// (saturating); a nil j draws the base duration.
func scaled(j repeated.Jitter, rate float64) repeated.Jitter {
	if j == nil {
		j = repeated.None()
	}
	return repeated.Func(func(base time.Duration, st repeated.State, rng *rand.Rand) time.Duration {
		return time.Duration(min(float64(j.Next(base, st, rng))*rate, math.MaxInt64/4))
	})
}
