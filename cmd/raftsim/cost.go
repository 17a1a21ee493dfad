package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/sim"
	"github.com/raftick/raftick/sim/experiment"
	"github.com/raftick/raftick/sim/multiraftsim"
)

// What a run costs, estimated before it starts from the flags that size
// it, so that work that would exhaust the machine is refused with the
// estimate and a flag value that fits, instead of swapping for minutes.
// The constants were measured on raftsim itself (Go 1.26, amd64):
//
//   - bytesPerMessage: resident memory per message in flight, from
//     "raftsim failover --latency fixed:1s --timeout 5s-10s --trials 1
//     --workers 1" at --heartbeat 20µs and 10µs (80 MB and 136 MB: 400k
//     more messages in flight), garbage collector headroom included;
//   - bytesPerReplica: resident memory per group replica of
//     "raftsim multiraft --groups 100000" (444 MB for 300k replicas).
//
// maxTrialEvents bounds the messages one trial may plan to deliver: at
// about two million a second, 1e9 is ten minutes of one core per trial.
const (
	bytesPerMessage = 150
	bytesPerReplica = 1500
	maxTrialEvents  = 1e9
)

// memoryBudget is the memory a run may plan to use: half of what the
// system reports available (MemAvailable of /proc/meminfo), or 2 GiB
// where it reports nothing.
var memoryBudget = func() float64 {
	f, err := os.Open("/proc/meminfo")
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemAvailable:" {
				if kb, err := strconv.ParseFloat(fields[1], 64); err == nil && kb > 0 {
					return kb * 1024 / 2
				}
			}
		}
	}
	return 2 << 30
}

// checkCost refuses a simulated run of s whose messages in flight would
// not fit in memoryBudget with the run's workers, or whose trials would
// each deliver more than maxTrialEvents messages. leading is how long a
// leader heartbeats in one trial; 0 estimates a failover's (the election
// of the first leader and its heartbeats until the crash).
func (o *opts) checkCost(s experiment.Setup, leading time.Duration) error {
	hb := s.Heartbeat
	if hb <= 0 {
		hb = s.TimeoutMin / 2
	}
	trip := typicalOf(s.Latency) + typicalOf(s.Disk)
	if leading <= 0 {
		leading = s.TimeoutMax + 2*trip + 2*hb
	}
	// A leader heartbeats Nodes-1 followers every hb; each answers. A
	// message is in flight for about a trip.
	perBeat := 2 * float64(s.Nodes-1)
	inFlight := perBeat * (float64(trip)/float64(hb) + 1)
	workers := o.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	mem := float64(workers) * inFlight * bytesPerMessage
	if budget := memoryBudget(); mem > budget {
		fit := niceUp(time.Duration(float64(hb) * mem / budget))
		return usageError{fmt.Errorf("--heartbeat %v: with messages in flight for %v it needs about %s of memory (%d workers x %.0f messages), more than the %s this run may use: --heartbeat %v or more would fit",
			hb, trip, bytesString(mem), workers, inFlight, bytesString(budget), fit)}
	}
	if events := perBeat * float64(leading) / float64(hb); events > maxTrialEvents {
		fit := niceUp(time.Duration(float64(hb) * events / maxTrialEvents))
		return usageError{fmt.Errorf("--heartbeat %v: it would deliver about %.2g messages in each trial (%v of leadership), more than %.0g: --heartbeat %v or more would fit",
			hb, events, leading, float64(maxTrialEvents), fit)}
	}
	return nil
}

// checkMultiraftCost refuses a multiraft run whose replicas would not
// fit in memoryBudget.
func checkMultiraftCost(c multiraftsim.Config) error {
	replicas := float64(c.Groups) * float64(c.Replicas)
	mem := replicas * bytesPerReplica
	if budget := memoryBudget(); mem > budget {
		fit := niceDown(int(budget / bytesPerReplica / float64(c.Replicas)))
		return usageError{fmt.Errorf("--groups %d: groups of %d replicas need about %s of memory, more than the %s this run may use: --groups %d or fewer would fit",
			c.Groups, c.Replicas, bytesString(mem), bytesString(budget), fit)}
	}
	return nil
}

// typicalOf is sim.Typical, 0 for none.
func typicalOf(l sim.Latency) time.Duration {
	if l == nil {
		return 0
	}
	return sim.Typical(l)
}

// niceUp rounds d up to 1, 2 or 5 times a power of ten nanoseconds.
func niceUp(d time.Duration) time.Duration {
	p := time.Duration(1)
	for {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*p >= d {
				return m * p
			}
		}
		if p > math.MaxInt64/100 {
			return d
		}
		p *= 10
	}
}

// niceDown rounds n down to 1, 2 or 5 times a power of ten (at least 1).
func niceDown(n int) int {
	best := 1
	for p := 1; p <= n && p < math.MaxInt/10; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p <= n {
				best = m * p
			}
		}
	}
	return best
}

// bytesString formats b bytes as e.g. "3.2 GB".
func bytesString(b float64) string {
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if b < 1000 || u == "TB" {
			return fmt.Sprintf("%.3g %s", b, u)
		}
		b /= 1000
	}
	return ""
}
