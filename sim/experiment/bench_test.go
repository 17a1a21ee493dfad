package experiment

import (
	"context"
	"testing"

	"github.com/raftick/raftick/sim"
)

// BenchmarkFailoverTrial measures one failover trial of Figure 16's setup
// (5 servers, 150-300ms timeouts): building the cluster on a fresh virtual
// wheel, electing the first leader, crashing it and electing the next.
// model=paper is the calibrated LogCabin model, model=plain the election
// package with a non-blocking disk.
func BenchmarkFailoverTrial(b *testing.B) {
	paper, plain := PaperModel(), PlainModel()
	for _, bc := range []struct {
		name string
		s    Setup
	}{{"model=paper", paper}, {"model=plain", plain}} {
		b.Run(bc.name, func(b *testing.B) {
			f := Failover{bc.s}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, _ = f.Trial(context.Background(), i, sim.TrialRand(1, i), nil)
				i++
			}
		})
	}
}

// BenchmarkSplitVoteTrial measures one trial of the thesis' timer race
// (race) and of the same election on election.Nodes (cluster).
func BenchmarkSplitVoteTrial(b *testing.B) {
	for _, model := range []string{"race", "cluster"} {
		b.Run("model="+model, func(b *testing.B) {
			sv := SplitVote{Nodes: 5, Alive: 4, Fraction: 0.1, Model: model}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_, _ = sv.Trial(context.Background(), i, sim.TrialRand(1, i), nil)
				i++
			}
		})
	}
}
