package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
)

// PaperFigure is one number the Raft paper quotes about a row of
// Figure 16, to print beside the simulator's.
type PaperFigure struct {
	Stat     string        // "p50", "mean" or "max"
	Relation string        // ">" (at least) or "~" (about)
	Value    time.Duration // the quoted value
}

// Statistic returns the summary's value of the figure's statistic.
func (f PaperFigure) Statistic(s Summary) time.Duration {
	switch f.Stat {
	case "p50":
		return s.P50
	case "mean":
		return s.Mean
	case "max":
		return s.Max
	}
	return 0
}

// Describe returns e.g. "median ~287ms".
func (f PaperFigure) Describe() string {
	name := map[string]string{"p50": "median", "mean": "mean", "max": "max"}[f.Stat]
	rel := "~"
	if f.Relation == ">" {
		rel = ">"
	}
	return fmt.Sprintf("%s %s%s", name, rel, fmtMS(f.Value))
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

// LAN returns the network and disk model that stands in for the paper's
// test cluster (LogCabin on five servers, gigabit Ethernet, SSDs, a
// broadcast time of about 15ms). See the package README for how each
// value was chosen.
func LAN() Setup {
	return Setup{
		Nodes:          5,
		TimeoutMin:     150 * time.Millisecond,
		TimeoutMax:     300 * time.Millisecond,
		Latency:        Normal(250*time.Microsecond, 50*time.Microsecond),
		Disk:           Normal(2750*time.Microsecond, 500*time.Microsecond),
		DiskBlocks:     true,
		LeaderWrite:    true,
		CandidatesWait: true,
		KeepTimer:      true,
		Granularity:    time.Millisecond,
		TimerNoise:     Uniform(0, 400*time.Microsecond),
		ShortLogs:      2,
	}
}

// HashicorpModel returns a setup with hashicorp/raft v1.8.0's election
// timing, to compare with real hashicorp/raft clusters (raftadapter), for
// T = HeartbeatTimeout = ElectionTimeout:
//
//   - followers run a free-running timer re-armed with a fresh [T, 2T) on
//     every fire and campaign only if the leader was silent for T
//     (election.CheckLastContact);
//   - a (pre-)candidate's round lasts [T, 2T), rejections are ignored
//     (CandidatesWait), pre-vote is on;
//   - a node refuses votes and pre-votes as long as it knows a leader, and
//     forgets it only when its own timer finds it silent or it changes
//     state (LeaderStickiness with election.StickyUntilTimeout);
//   - the leader heartbeats each follower on its own timer every [T/10,
//     T/5) (HeartbeatPerPeer, HeartbeatJitter), and at once on winning;
//   - the in-memory stores have no disk delay, and the latency is left
//     unset (in-process transport);
//   - the failover crash follows raftadapter's harness (Settle T).
//
// T defaults to 150ms.
func HashicorpModel() Setup {
	return Setup{
		Nodes:            5,
		TimeoutMin:       150 * time.Millisecond,
		TimeoutMax:       300 * time.Millisecond,
		Heartbeat:        150 * time.Millisecond / 10,
		HeartbeatJitter:  true,
		HeartbeatPerPeer: true,
		PreVote:          true,
		CandidatesWait:   true,
		LeaderStickiness: true,
		Stickiness:       election.StickyUntilTimeout,
		Detection:        election.CheckLastContact,
		Settle:           150 * time.Millisecond,
	}
}

// PaperExperiments returns the failover experiment of every row of
// PaperRows on base (whose TimeoutMin and TimeoutMax are replaced).
func PaperExperiments(base Setup) []Failover {
	rows := PaperRows()
	out := make([]Failover, len(rows))
	for i, r := range rows {
		s := base
		s.TimeoutMin, s.TimeoutMax = r.Min, r.Max
		out[i] = Failover{s}
	}
	return out
}

// fmtMS formats a duration in milliseconds for tables: "287ms", "35.2ms",
// "10.3s".
func fmtMS(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case ms >= 10000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}

// FmtMS formats a duration for tables: "287ms", "35.2ms", "1.23ms",
// "10.3s".
func FmtMS(d time.Duration) string { return fmtMS(d) }

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
	sample := func(l Latency) time.Duration {
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

// PaperShape checks the shape the paper reports on summaries of
// PaperRows (in order) and describes it in one line: no randomness is far
// slower than a little (150-150 vs 150-155ms median), a little is slower
// than more at the median (150-155 vs 150-300ms), and more randomness
// mainly cuts the tail (p99 falls from 150-155 to 150-200ms).
func PaperShape(ss []Summary) string {
	if len(ss) < 6 {
		return "shape: not enough rows"
	}
	a, b, c, e := ss[0], ss[2], ss[4], ss[5]
	ok := a.P50 > 10*b.P50 && b.P50 > e.P50 && b.P99 > c.P99
	mark := "as in the paper"
	if !ok {
		mark = "NOT as in the paper"
	}
	return fmt.Sprintf("shape (%s): median %s %s >> %s %s > %s %s; p99 %s %s -> %s %s -> %s %s",
		mark, a.Label, fmtMS(a.P50), b.Label, fmtMS(b.P50), e.Label, fmtMS(e.P50),
		b.Label, fmtMS(b.P99), ss[3].Label, fmtMS(ss[3].P99), c.Label, fmtMS(c.P99))
}
