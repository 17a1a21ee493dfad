package sim

import (
	"math"
	"math/bits"
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
	// NoLeader reports a trial that never reached its measurement: the
	// cluster never elected the first leader the experiment starts from
	// (failover: the leader to crash). Such a trial measures nothing; a
	// Summary counts it apart and leaves it out of every statistic.
	NoLeader bool
	// Elections, PreVotes and LeaderChanges (stability only) count, during
	// the measured window, the election rounds started (a term increased),
	// the pre-vote rounds started and the leaders elected.
	Elections, PreVotes, LeaderChanges int
	// Leaderless (stability and partition only) is the time of the
	// window during which no leader reached a majority of the cluster
	// (itself and the followers that accepted it over working links).
	Leaderless time.Duration
}

// SampleCap is the number of trial times a Summary keeps exactly. Up to
// SampleCap measured trials, percentiles and the CDF are exact order
// statistics; beyond it an Accumulator keeps a logarithmic histogram
// instead (memory independent of the number of trials) whose percentiles
// are within a relative error SketchError of the exact ones. Min, Max,
// Mean and every count stay exact.
const SampleCap = 1 << 17

// SketchError is the largest relative error of a percentile or CDF point
// of a Summary of more than SampleCap trials: 0.1%.
const SketchError = 0.001

// Summary is the statistics of one experiment's trials. What the
// experiment was is its caller's to record (experiment.Result).
type Summary struct {
	Trials   int // trials that ran (finished, timed out, or without a first leader)
	TimedOut int // trials that hit the time limit (counted at the limit)
	// NoLeader is the number of trials that never had the first leader
	// the measurement starts from (Outcome.NoLeader); they are left out of
	// every statistic below.
	NoLeader int
	// Order statistics of Outcome.Time over the measured trials
	// (Trials-NoLeader), nearest-rank percentiles; exact up to SampleCap
	// measured trials (see Exact).
	Min, P10, P50, Mean, P90, P95, P99, P999, Max time.Duration
	// SplitVoteRate is the fraction of election terms that ended without
	// a leader (sum of Splits over sum of Terms).
	SplitVoteRate float64
	// MeanTerms is the average number of terms per measured trial; with a
	// split rate p it is about 1/(1-p) (a geometric number of terms).
	MeanTerms float64
	// MessagesPerElection is the average number of messages per measured
	// trial.
	MessagesPerElection float64
	// Totals over the measured trials (stability windows): Time, election
	// rounds, pre-vote rounds, leaders elected, and the trials with at
	// least one election round.
	TotalTime                                        time.Duration
	Elections, PreVotes, LeaderChanges, WithElection int
	// Leaderless is the total time without a leader over the measured
	// trials (stability and partition windows).
	Leaderless time.Duration

	acc *Accumulator // the samples or sketch, for CDFs and merging
}

// Measured returns the number of trials the statistics are over:
// Trials - NoLeader.
func (s Summary) Measured() int { return s.Trials - s.NoLeader }

// Exact reports whether the percentiles and the CDF are exact order
// statistics (at most SampleCap measured trials); otherwise they come from
// a histogram and are within SketchError of the exact values.
func (s Summary) Exact() bool { return s.acc == nil || s.acc.sketch == nil }

// Summarize computes the Summary of outs.
func Summarize(outs []Outcome) Summary {
	var a Accumulator
	for _, o := range outs {
		a.Add(o)
	}
	return a.Summary()
}

// Accumulator builds a Summary from outcomes added one at a time, in any
// order: the Summary depends only on the multiset of outcomes added. It
// keeps at most SampleCap times (then a histogram of bounded size), so
// its memory does not grow with the number of trials. The zero value is
// empty and ready; it is not safe for concurrent use.
type Accumulator struct {
	n, timedOut, noLeader int
	sumHi, sumLo          uint64 // 128-bit sum of the measured times (ns)
	terms, splits, msgs   int64
	elections, preVotes   int64
	leaderChanges, withEl int64
	leaderless            int64 // sum of Outcome.Leaderless, ns
	min, max              time.Duration
	samples               []time.Duration // exact times while measured <= SampleCap
	sketch                map[int32]uint64
	zeros                 uint64 // times <= 0 in the sketch
}

// Add adds one trial's outcome.
func (a *Accumulator) Add(o Outcome) {
	a.n++
	if o.NoLeader {
		a.noLeader++
		return
	}
	if !o.OK {
		a.timedOut++
	}
	m := a.n - a.noLeader
	if m == 1 || o.Time < a.min {
		a.min = o.Time
	}
	if m == 1 || o.Time > a.max {
		a.max = o.Time
	}
	a.addSum(o.Time)
	a.terms += int64(o.Terms)
	a.splits += int64(o.Splits)
	a.msgs += int64(o.Messages)
	a.elections += int64(o.Elections)
	a.preVotes += int64(o.PreVotes)
	a.leaderChanges += int64(o.LeaderChanges)
	a.leaderless += int64(o.Leaderless)
	if o.Elections > 0 {
		a.withEl++
	}
	if a.sketch == nil {
		a.samples = append(a.samples, o.Time)
		if len(a.samples) > SampleCap {
			a.toSketch()
		}
		return
	}
	a.sketchAdd(o.Time, 1)
}

func (a *Accumulator) addSum(d time.Duration) {
	v := uint64(d)
	hi := uint64(0)
	if d < 0 {
		hi = math.MaxUint64 // sign extension
	}
	var c uint64
	a.sumLo, c = bits.Add64(a.sumLo, v, 0)
	a.sumHi, _ = bits.Add64(a.sumHi, hi, c)
}

// sum returns the sum of the measured times as a float64.
func (a *Accumulator) sum() float64 {
	if int64(a.sumHi) < 0 { // negative: negate
		lo, b := bits.Sub64(0, a.sumLo, 0)
		hi, _ := bits.Sub64(0, a.sumHi, b)
		return -(float64(hi)*0x1p64 + float64(lo))
	}
	return float64(a.sumHi)*0x1p64 + float64(a.sumLo)
}

// toSketch moves the samples into the histogram.
func (a *Accumulator) toSketch() {
	a.sketch = make(map[int32]uint64)
	for _, t := range a.samples {
		a.sketchAdd(t, 1)
	}
	a.samples = nil
}

var logGamma = math.Log((1 + SketchError) / (1 - SketchError))

// bucket returns the histogram bucket of a positive time: every value in
// bucket i lies in (gamma^(i-1), gamma^i], gamma = (1+e)/(1-e).
func bucket(d time.Duration) int32 {
	return int32(math.Ceil(math.Log(float64(d)) / logGamma))
}

// bucketValue returns the representative of bucket i, within SketchError
// of every value of the bucket.
func bucketValue(i int32) time.Duration {
	return time.Duration(math.Round(2 * math.Exp(float64(i)*logGamma) / (1 + math.Exp(logGamma))))
}

func (a *Accumulator) sketchAdd(d time.Duration, n uint64) {
	if d <= 0 {
		a.zeros += n
		return
	}
	a.sketch[bucket(d)] += n
}

// Merge adds every outcome b holds to a.
func (a *Accumulator) Merge(b *Accumulator) {
	if b.n == 0 {
		return
	}
	am, bm := a.n-a.noLeader, b.n-b.noLeader
	if bm > 0 {
		if am == 0 || b.min < a.min {
			a.min = b.min
		}
		if am == 0 || b.max > a.max {
			a.max = b.max
		}
	}
	a.n += b.n
	a.noLeader += b.noLeader
	a.timedOut += b.timedOut
	var c uint64
	a.sumLo, c = bits.Add64(a.sumLo, b.sumLo, 0)
	a.sumHi, _ = bits.Add64(a.sumHi, b.sumHi, c)
	a.terms += b.terms
	a.splits += b.splits
	a.msgs += b.msgs
	a.elections += b.elections
	a.preVotes += b.preVotes
	a.leaderChanges += b.leaderChanges
	a.leaderless += b.leaderless
	a.withEl += b.withEl
	if a.sketch == nil && b.sketch == nil && am+bm <= SampleCap {
		a.samples = append(a.samples, b.samples...)
		return
	}
	if a.sketch == nil {
		a.toSketch()
	}
	for _, t := range b.samples {
		a.sketchAdd(t, 1)
	}
	for k, v := range b.sketch {
		a.sketch[k] += v
	}
	a.zeros += b.zeros
}

// Trials returns the number of outcomes added.
func (a *Accumulator) Trials() int { return a.n }

// Summary returns the statistics of the outcomes added so far. The
// Summary shares a's samples: adding to or merging into a afterwards
// changes the Summary's CDF.
func (a *Accumulator) Summary() Summary {
	s := Summary{Trials: a.n, TimedOut: a.timedOut, NoLeader: a.noLeader, acc: a}
	m := a.n - a.noLeader
	if m == 0 {
		return s
	}
	if a.sketch == nil {
		slices.Sort(a.samples)
	}
	s.Min, s.Max = a.min, a.max
	s.P10, s.P50 = a.percentile(10), a.percentile(50)
	s.P90, s.P95 = a.percentile(90), a.percentile(95)
	s.P99, s.P999 = a.percentile(99), a.percentile(99.9)
	s.Mean = durationOf(math.Round(a.sum() / float64(m)))
	if a.terms > 0 {
		s.SplitVoteRate = float64(a.splits) / float64(a.terms)
	}
	s.MeanTerms = float64(a.terms) / float64(m)
	s.MessagesPerElection = float64(a.msgs) / float64(m)
	s.TotalTime = durationOf(a.sum())
	s.Elections, s.PreVotes, s.LeaderChanges = int(a.elections), int(a.preVotes), int(a.leaderChanges)
	s.WithElection = int(a.withEl)
	s.Leaderless = time.Duration(a.leaderless)
	return s
}

// percentile is the nearest-rank percentile of the measured times
// (samples sorted).
func (a *Accumulator) percentile(p float64) time.Duration {
	if a.sketch == nil {
		return Percentile(a.samples, p)
	}
	m := a.n - a.noLeader
	return a.rank(max(int(math.Ceil(p/100*float64(m))), 1))
}

// rank returns the k-th smallest measured time (1-based, clamped to the
// measured trials), from the histogram beyond SampleCap.
func (a *Accumulator) rank(k int) time.Duration {
	m := a.n - a.noLeader
	if m == 0 {
		return 0
	}
	k = min(max(k, 1), m)
	if a.sketch == nil {
		return a.samples[k-1]
	}
	if uint64(k) <= a.zeros {
		return a.min
	}
	seen := a.zeros
	for _, i := range a.buckets() {
		seen += a.sketch[i]
		if seen >= uint64(k) {
			return min(max(bucketValue(i), a.min), a.max)
		}
	}
	return a.max
}

// buckets returns the histogram's bucket indices in order.
func (a *Accumulator) buckets() []int32 {
	keys := make([]int32, 0, len(a.sketch))
	for k := range a.sketch {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Rank returns the k-th smallest measured time (1-based, clamped to
// [1, Measured()]), or 0 if no trial was measured; beyond SampleCap
// trials it is within SketchError of the exact value.
func (s Summary) Rank(k int) time.Duration {
	if s.acc == nil {
		return 0
	}
	return s.acc.rank(k)
}

// StdDev returns the standard deviation of the measured times (from the
// sorted samples, or the histogram's representatives beyond SampleCap),
// 0 for fewer than two trials.
func (s Summary) StdDev() time.Duration {
	if s.acc == nil || s.Measured() < 2 {
		return 0
	}
	a := s.acc
	mean := float64(s.Mean)
	var ss float64
	if a.sketch == nil {
		for _, t := range a.samples {
			d := float64(t) - mean
			ss += d * d
		}
	} else {
		ss += float64(a.zeros) * mean * mean
		for _, i := range a.buckets() {
			d := float64(bucketValue(i)) - mean
			ss += float64(a.sketch[i]) * d * d
		}
	}
	return time.Duration(math.Sqrt(ss / float64(s.Measured()-1)))
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

// CDF returns the empirical distribution of the measured trial times: one
// point per distinct time, at the fraction of trials that finished by
// then. Beyond SampleCap trials it has one point per histogram bucket (at
// the bucket's representative time, within SketchError).
func (s Summary) CDF() []CDFPoint {
	if s.acc == nil {
		return nil
	}
	a := s.acc
	var pts []CDFPoint
	if a.sketch == nil {
		n := len(a.samples)
		for i, t := range a.samples {
			if i+1 < n && a.samples[i+1] == t {
				continue
			}
			pts = append(pts, CDFPoint{t, float64(i+1) / float64(n)})
		}
		return pts
	}
	m := float64(a.n - a.noLeader)
	seen := a.zeros
	if seen > 0 {
		pts = append(pts, CDFPoint{a.min, float64(seen) / m})
	}
	for _, i := range a.buckets() {
		seen += a.sketch[i]
		pts = append(pts, CDFPoint{min(max(bucketValue(i), a.min), a.max), float64(seen) / m})
	}
	return pts
}

// Times returns the sorted measured trial times (a copy), or nil beyond
// SampleCap trials (see Exact).
func (s Summary) Times() []time.Duration {
	if s.acc == nil || s.acc.sketch != nil {
		return nil
	}
	return slices.Clone(s.acc.samples)
}
