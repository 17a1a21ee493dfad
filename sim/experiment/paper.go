package experiment

import (
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/sim"
)

// PaperFigure is one number the Raft paper quotes about a row of
// Figure 16, to print beside the simulator's.
type PaperFigure struct {
	Stat     string        // "p10", "p50", "p90", "p99", "mean" or "max"
	Relation string        // ">" (at least), "~" (about) or "figure" (read from the figure's data, see FigureRow)
	Value    time.Duration // the quoted value
}

// Quoted reports whether the paper's text quotes f (relation ">" or
// "~"), rather than f being read from the figure's data.
func (f PaperFigure) Quoted() bool { return f.Relation != "figure" }

// Statistic returns the summary's value of the figure's statistic.
func (f PaperFigure) Statistic(s sim.Summary) time.Duration {
	switch f.Stat {
	case "p10":
		return s.P10
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p99":
		return s.P99
	case "mean":
		return s.Mean
	case "max":
		return s.Max
	}
	return 0
}

// PaperRow is one line of Figure 16.
type PaperRow struct {
	Panel    int // 0 top (randomness), 1 bottom (scale)
	Min, Max time.Duration
	Trials   int
	Quoted   []PaperFigure
}

// PaperRows lists both panels of Figure 16 with the paper's trial counts
// (1000 per range, 100 for 150-150ms: 10,100 in all) and the figures the
// text quotes: 150-150ms took over 10s (median); 150-155ms median 287ms;
// 150-200ms worst of 1000 trials 513ms; 12-24ms mean 35ms, max 152ms.
func PaperRows() []PaperRow {
	ms := time.Millisecond
	return []PaperRow{
		{0, 150 * ms, 150 * ms, 100, []PaperFigure{{"p50", ">", 10 * time.Second}}},
		{0, 150 * ms, 151 * ms, 1000, nil},
		{0, 150 * ms, 155 * ms, 1000, []PaperFigure{{"p50", "~", 287 * ms}}},
		{0, 150 * ms, 175 * ms, 1000, nil},
		{0, 150 * ms, 200 * ms, 1000, []PaperFigure{{"max", "~", 513 * ms}}},
		{0, 150 * ms, 300 * ms, 1000, nil},
		{1, 12 * ms, 24 * ms, 1000, []PaperFigure{{"mean", "~", 35 * ms}, {"max", "~", 152 * ms}}},
		{1, 25 * ms, 50 * ms, 1000, nil},
		{1, 50 * ms, 100 * ms, 1000, nil},
		{1, 100 * ms, 200 * ms, 1000, nil},
		{1, 150 * ms, 300 * ms, 1000, nil},
	}
}

// PaperPanelTitles are the captions of the two panels.
var PaperPanelTitles = [2]string{
	"Figure 16 (top): varying the randomness of the election timeout",
	"Figure 16 (bottom): scaling the minimum election timeout",
}

// PaperExperiment is the failover experiment of one row of Figure 16: its
// Result carries the figures the paper quotes for the row.
type PaperExperiment struct {
	Failover
	Row PaperRow
}

// Result summarizes the row's trials, with the paper's figures: those
// its text quotes, then the percentiles of FigurePercentiles read from
// the figure's data (relation "figure").
func (p PaperExperiment) Result(outs []sim.Outcome) Result {
	r := p.Failover.Result(outs)
	r.Paper = append([]PaperFigure(nil), p.Row.Quoted...)
	if fig, ok := FigureRow(r.Label); ok {
		for i, st := range FigurePercentiles {
			r.Paper = append(r.Paper, PaperFigure{Stat: st, Relation: "figure", Value: fig[i]})
		}
	}
	return r
}

// PaperExperiments returns the failover experiment of every row of
// PaperRows on base (whose TimeoutMin and TimeoutMax are replaced).
func PaperExperiments(base Setup) []PaperExperiment {
	rows := PaperRows()
	out := make([]PaperExperiment, len(rows))
	for i, r := range rows {
		s := base
		s.TimeoutMin, s.TimeoutMax = r.Min, r.Max
		out[i] = PaperExperiment{Failover{s}, r}
	}
	return out
}

// PaperTrials returns the trial count of each row: the paper's (1000 per
// range, 100 for 150-150ms) when perRow is 0, else perRow for every row
// and a tenth of it (at least 1) for the row without randomness.
func PaperTrials(perRow int) []int {
	rows := PaperRows()
	trials := make([]int, len(rows))
	for i, r := range rows {
		trials[i] = r.Trials
		if perRow > 0 {
			trials[i] = perRow
			if r.Min == r.Max {
				trials[i] = max(1, perRow/10)
			}
		}
	}
	return trials
}

// BroadcastTime is the paper's broadcast time under a setup: the time for
// a server to send RPCs in parallel to every other server and receive all
// their responses.
type BroadcastTime struct {
	// RoundTripWrite is for an RPC each receiver answers after one disk
	// write (an AppendEntries carrying an entry): the paper's "network
	// round trip plus disk write".
	RoundTripWrite time.Duration
	// VoteRound is for a vote request of a new term: the candidate's own
	// write first (if writes block), then each voter persists the new term
	// and its vote (two writes unless GroupCommit) before answering.
	VoteRound time.Duration
}

// BroadcastTimes estimates the broadcast times of s from 20,000 seeded
// draws of its latency and disk models (deterministic).
func BroadcastTimes(s Setup) BroadcastTime {
	rng := rand.New(rand.NewPCG(15, 16))
	sample := func(l sim.Latency) time.Duration {
		if l == nil {
			return 0
		}
		return l.Sample(rng)
	}
	writes := 2
	if s.GroupCommit {
		writes = 1
	}
	const n = 20000
	var rt, vote float64
	peers := max(s.Nodes-1, 1)
	for range n {
		var worstRT, worstVote time.Duration
		for range peers {
			worstRT = max(worstRT, sample(s.Latency)+sample(s.Disk)+sample(s.Latency))
			v := sample(s.Latency) + sample(s.Latency)
			for range writes {
				v += sample(s.Disk)
			}
			worstVote = max(worstVote, v)
		}
		if s.DiskBlocks {
			worstVote += sample(s.Disk)
		}
		rt += float64(worstRT)
		vote += float64(worstVote)
	}
	return BroadcastTime{RoundTripWrite: time.Duration(rt / n), VoteRound: time.Duration(vote / n)}
}
