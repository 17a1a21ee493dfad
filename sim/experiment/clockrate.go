package experiment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/sim"
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

// latenessScales draws a factor uniformly from [1-s.LatenessSpread,
// 1+s.LatenessSpread] for the trial, or for each of s.Nodes servers in
// server order with s.LatenessPerServer (from rng), and returns the
// sim.Config hook that gives a server the timeouts of s with its timer
// lateness scaled by its factor (Setup.LatenessSpread).
func latenessScales(s Setup, rng *rand.Rand) func(election.ID, *election.Config) {
	f := make([]float64, s.Nodes+1)
	for id := 1; id <= s.Nodes; id++ {
		f[id] = 1 + s.LatenessSpread*(2*rng.Float64()-1)
		if id > 1 && !s.LatenessPerServer {
			f[id] = f[1] // one factor for the trial
		}
	}
	return func(id election.ID, ec *election.Config) {
		if int(id) < len(f) {
			s.setTimeouts(ec, scaledLatency{s.TimerLateness, f[id]})
		}
	}
}

// scaledLatency is l with every draw multiplied by f.
type scaledLatency struct {
	l sim.Latency
	f float64
}

func (s scaledLatency) Sample(rng *rand.Rand) time.Duration {
	return time.Duration(float64(s.l.Sample(rng)) * s.f)
}

func (s scaledLatency) String() string { return fmt.Sprintf("%gx %s", s.f, s.l) }
