package raftmix

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/raftick/raftick/election"
)

// CrashResult is what a run with a crash (Config.CrashAt) measured: the
// failover of the groups whose leader was the crashed node, and the
// elections of the groups that kept theirs.
type CrashResult struct {
	CrashAtSec float64 `json:"crash_at_sec"` // from the window's start
	// ElectionTimeoutMs is the hosts' election timeout, the unit of the
	// failover's bounds.
	ElectionTimeoutMs float64 `json:"election_timeout_ms"`
	// Lost counts the groups the crashed node led (awake or asleep);
	// Recovered those of them that elected a leader on another node
	// before the window ended.
	Lost      int `json:"lost"`
	Recovered int `json:"recovered"`
	// FailoverP50Ms, FailoverP99Ms and FailoverMaxMs are percentiles, over
	// the recovered groups, of the time from the crash to the first
	// election won on another node.
	FailoverP50Ms float64 `json:"failover_p50_ms"`
	FailoverP99Ms float64 `json:"failover_p99_ms"`
	FailoverMaxMs float64 `json:"failover_max_ms"`
	// ElectionsBefore counts the elections (and pre-votes) started in the
	// window before the crash; KeptElections those started after it in
	// the groups the crashed node did not lead.
	ElectionsBefore int64 `json:"elections_before"`
	KeptElections   int64 `json:"kept_elections"`
}

// crash records a run's crash: which groups lost their leader, and when
// each elected a new one. Its methods are safe for concurrent use.
type crash struct {
	start  atomic.Int64 // the crash, unix ns; 0 before it
	lost   []bool       // by group ID, written before start is set
	won    []atomic.Int64
	before atomic.Int64 // elections before the crash
	kept   atomic.Int64 // elections after it in groups not lost
}

func newCrash(groups int) *crash {
	return &crash{lost: make([]bool, groups), won: make([]atomic.Int64, groups)}
}

// election records an election of group g started now.
func (c *crash) election(g int) {
	switch at := c.start.Load(); {
	case at == 0:
		c.before.Add(1)
	case g >= 0 && g < len(c.lost) && !c.lost[g]:
		c.kept.Add(1)
	}
}

// elected records that node won group g's election now.
func (c *crash) elected(g int, node election.ID) {
	at := c.start.Load()
	if at == 0 || node == crashNode || g < 0 || g >= len(c.lost) || !c.lost[g] {
		return
	}
	c.won[g].CompareAndSwap(0, max(1, time.Now().UnixNano()-at))
}

// crashNode is the node a run with a crash stops.
const crashNode election.ID = 1

// result summarizes the crash at crashAt in the window, for hosts with
// election timeout et.
func (c *crash) result(crashAt, et time.Duration) CrashResult {
	r := CrashResult{CrashAtSec: crashAt.Seconds(), ElectionTimeoutMs: float64(et) / 1e6,
		ElectionsBefore: c.before.Load(), KeptElections: c.kept.Load()}
	var ds []time.Duration
	for g, l := range c.lost {
		if !l {
			continue
		}
		r.Lost++
		if d := c.won[g].Load(); d > 0 {
			ds = append(ds, time.Duration(d))
		}
	}
	r.Recovered = len(ds)
	slices.Sort(ds)
	pct := func(p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / 1e6
	}
	r.FailoverP50Ms, r.FailoverP99Ms, r.FailoverMaxMs = pct(0.5), pct(0.99), pct(1)
	return r
}
