package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// accState is the JSON form of an Accumulator: every count and sum, and
// the samples (sorted) or the histogram (bucket index and count pairs, in
// bucket order), so that it round-trips exactly.
type accState struct {
	N             int         `json:"n"`
	TimedOut      int         `json:"timed_out"`
	NoLeader      int         `json:"no_leader"`
	SumHi         uint64      `json:"sum_hi"`
	SumLo         uint64      `json:"sum_lo"`
	Terms         int64       `json:"terms"`
	Splits        int64       `json:"splits"`
	Msgs          int64       `json:"msgs"`
	Elections     int64       `json:"elections"`
	PreVotes      int64       `json:"prevotes"`
	LeaderChanges int64       `json:"leader_changes"`
	WithElection  int64       `json:"with_election"`
	Leaderless    int64       `json:"leaderless_ns,omitempty"`
	Min           int64       `json:"min_ns"`
	Max           int64       `json:"max_ns"`
	Samples       []int64     `json:"samples_ns,omitempty"`
	Sketch        [][2]uint64 `json:"sketch,omitempty"` // [bucket (int32 bits), count]
	Zeros         uint64      `json:"zeros,omitempty"`
}

// MarshalJSON writes every count, sum and sample (or histogram bucket) of
// a, so that shards of a run can be merged elsewhere (UnmarshalJSON,
// Merge) into exactly the Summary of the whole run.
func (a *Accumulator) MarshalJSON() ([]byte, error) {
	st := accState{N: a.n, TimedOut: a.timedOut, NoLeader: a.noLeader, SumHi: a.sumHi, SumLo: a.sumLo,
		Terms: a.terms, Splits: a.splits, Msgs: a.msgs, Elections: a.elections, PreVotes: a.preVotes,
		LeaderChanges: a.leaderChanges, WithElection: a.withEl, Leaderless: a.leaderless, Min: int64(a.min), Max: int64(a.max), Zeros: a.zeros}
	if a.sketch == nil {
		ss := slices.Clone(a.samples)
		slices.Sort(ss)
		st.Samples = make([]int64, len(ss))
		for i, t := range ss {
			st.Samples[i] = int64(t)
		}
	} else {
		for _, k := range a.buckets() {
			st.Sketch = append(st.Sketch, [2]uint64{uint64(uint32(k)), a.sketch[k]})
		}
	}
	return json.Marshal(st)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (a *Accumulator) UnmarshalJSON(b []byte) error {
	var st accState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	measured := st.N - st.NoLeader
	if st.N < 0 || st.NoLeader < 0 || measured < 0 || st.TimedOut < 0 || st.TimedOut > measured {
		return fmt.Errorf("sim: accumulator: inconsistent counts")
	}
	*a = Accumulator{n: st.N, timedOut: st.TimedOut, noLeader: st.NoLeader, sumHi: st.SumHi, sumLo: st.SumLo,
		terms: st.Terms, splits: st.Splits, msgs: st.Msgs, elections: st.Elections, preVotes: st.PreVotes,
		leaderChanges: st.LeaderChanges, withEl: st.WithElection, leaderless: st.Leaderless, min: time.Duration(st.Min), max: time.Duration(st.Max), zeros: st.Zeros}
	if st.Sketch == nil {
		if len(st.Samples) != measured || measured > SampleCap {
			return fmt.Errorf("sim: accumulator: %d samples for %d measured trials", len(st.Samples), measured)
		}
		for _, t := range st.Samples {
			a.samples = append(a.samples, time.Duration(t))
		}
		return nil
	}
	a.sketch = make(map[int32]uint64, len(st.Sketch))
	total := st.Zeros
	for _, kv := range st.Sketch {
		a.sketch[int32(uint32(kv[0]))] = kv[1]
		total += kv[1]
	}
	if total != uint64(measured) {
		return fmt.Errorf("sim: accumulator: histogram holds %d of %d measured trials", total, measured)
	}
	return nil
}
