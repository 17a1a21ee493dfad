package sim

import (
	"math"
	"slices"
	"time"
)

// Outcome is what one trial measured.
type Outcome struct {
	// Time is the measured interval: for failover from the crash until
	// every surviving server accepted the new leader; for bootstrap from
	// the start until a majority knows the first leader; for splitvote
	// from the start until the first election term was decided. If OK is
	// false the trial hit its time limit and Time is that limit.
	Time time.Duration
	// Terms is the number of election terms the measurement spanned
	// (winning term minus the term before the first election), at least
	// 1 for a finished trial.
	Terms int
	// Splits is the number of those terms that ended without a leader.
	Splits int
	// Messages is the number of messages sent during the measurement.
	Messages int
	// OK is false if the trial ran into its time limit (stability: the
	// cluster never settled on a leader before the window).
	OK bool
	// Elections, PreVotes and LeaderChanges (stability only) count, during
	// the measured window, the election rounds started (a term increased),
	// the pre-vote rounds started and the leaders elected.
	Elections, PreVotes, LeaderChanges int
	// Leaderless (stability and partition only) is the time of the
	// window during which no leader reached a majority of the cluster
	// (itself and the followers that accepted it over working links).
	Leaderless time.Duration
}

// Summary is the statistics of one experiment's trials. What the
// experiment was is its caller's to record (experiment.Result).
type Summary struct {
	Trials   int // trials that ran (finished or timed out)
	TimedOut int // trials that hit the time limit (counted at the limit)
	// Order statistics of Outcome.Time (nearest-rank percentiles).
	Min, P10, P50, Mean, P90, P99, Max time.Duration
	// SplitVoteRate is the fraction of election terms that ended without
	// a leader (sum of Splits over sum of Terms).
	SplitVoteRate float64
	// MeanTerms is the average number of terms per trial; with a split
	// rate p it is about 1/(1-p) (a geometric number of terms).
	MeanTerms float64
	// MessagesPerElection is the average number of messages per trial.
	MessagesPerElection float64

	times []time.Duration // sorted, for CDFs
}

// Summarize computes the Summary of outs.
func Summarize(outs []Outcome) Summary {
	s := Summary{Trials: len(outs)}
	if len(outs) == 0 {
		return s
	}
	s.times = make([]time.Duration, len(outs))
	var sum float64
	var terms, splits, msgs int
	for i, o := range outs {
		s.times[i] = o.Time
		sum += float64(o.Time)
		terms += o.Terms
		splits += o.Splits
		msgs += o.Messages
		if !o.OK {
			s.TimedOut++
		}
	}
	slices.Sort(s.times)
	n := len(s.times)
	s.Min, s.Max = s.times[0], s.times[n-1]
	s.P10, s.P50 = Percentile(s.times, 10), Percentile(s.times, 50)
	s.P90, s.P99 = Percentile(s.times, 90), Percentile(s.times, 99)
	s.Mean = durationOf(math.Round(sum / float64(n)))
	if terms > 0 {
		s.SplitVoteRate = float64(splits) / float64(terms)
	}
	s.MeanTerms = float64(terms) / float64(n)
	s.MessagesPerElection = float64(msgs) / float64(n)
	return s
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted: the smallest value such that at least p percent of the values
// are at or below it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	k := int(math.Ceil(p / 100 * float64(n)))
	return sorted[min(max(k, 1), n)-1]
}

// CDFPoint is one step of an empirical CDF: Fraction of the trials took at
// most Time.
type CDFPoint struct {
	Time     time.Duration
	Fraction float64
}

// CDF returns the empirical distribution of the trial times: one point per
// distinct time, at the fraction of trials that finished by then.
func (s Summary) CDF() []CDFPoint {
	n := len(s.times)
	var pts []CDFPoint
	for i, t := range s.times {
		if i+1 < n && s.times[i+1] == t {
			continue
		}
		pts = append(pts, CDFPoint{t, float64(i+1) / float64(n)})
	}
	return pts
}

// Times returns the sorted trial times (a copy).
func (s Summary) Times() []time.Duration { return slices.Clone(s.times) }
