// Command scalemix runs the timers of many Raft groups in one process, in
// real time, on several implementations, and prints what each costs and
// how well it keeps time (see package bench/raftmix for the workload):
//
//	go run ./bench/scalemix -groups 100000 -impl raftick,tick10,std,none -seconds 10
//
// -groups and -impl take comma-separated lists; every combination runs, one
// after another in this process, groups in the outer loop (impl none, the
// floor, first). After each group
// count it prints CPU above the floor (impl none) as ratios: raftick
// against tick10 and std. -json prints one JSON object per run instead.
//
// -impl raftick-keep is raftick with the election timer's heartbeat Reset
// keeping its drawn timeout (repeated.WithResetKeepsDelay), as the tick
// loops do; it gets the same ratio lines as raftick.
//
// -tick sets the tick of the raftick implementations' wheel (default
// 1ms): the driver takes a due slot whole, so up to 10ms a coarser tick
// trades lateness (up to a tick) for wake-ups (coarser ticks fire each
// timer at its deadline, through a heap):
//
//	go run ./bench/scalemix -groups 100000 -impl none,tick10,raftick -tick 5ms
//
// -rounds N runs every group count's implementations N times, round
// after round (the floor first in each), so that a noisy machine's drift
// falls on all of them alike; after the rounds it prints the median of
// each implementation's cores and of the per-round ratios, with their
// range. One run's ratio on a shared machine can be off by a third:
//
//	go run ./bench/scalemix -groups 50000,100000 -impl none,tick10,raftick -seconds 5 -rounds 5
//
// -impl raftick-node, -impl etcd-tick and -impl etcd-loop (not run by
// default) run Raft's election itself, three replicas per group in one
// process: raftick-node as election.Nodes on one wheel, etcd-tick as
// go.etcd.io/raft/v3 RawNodes on three simulated nodes each run as a
// CockroachDB server runs its ranges (a tick every 10ms per replica, a
// raft scheduler's worker pool per node, -etcd-workers workers each,
// default GOMAXPROCS; messages coalesced per pair of nodes), etcd-loop as
// the same RawNodes all driven by one goroutine every 10ms, messages
// coalesced per pair of nodes per tick (see package raftmix). Their
// heartbeats are the leaders' own and their step-down fires the leaders'
// CheckQuorum checks:
//
//	go run ./bench/scalemix -groups 20000 -impl none,raftick-node,etcd-tick,raftick-host -seconds 10
//
// -impl raftick-host (not run by default) runs the groups as replicas on
// multiraft.Hosts, one per simulated node (-nodes), with the -active
// fraction of the groups touched every heartbeat period and the rest
// hibernating; it prints, under its row, memory per group, messages and
// batches per second, and its CPU against its run at the first group
// count. -active takes one fraction, or one per -groups entry:
//
//	go run ./bench/scalemix -impl raftick-host -groups 10000,1000000 -active 1,0.01
//
// -burn-cores N (raftick-host only) burns N cores, one process each (this
// executable again), from -burn-at after the window's start for -burn-for,
// and prints under the row the elections and CheckQuorum step-downs
// before, during and after the burn, how long after it the last election
// started, and the elections in each second of the window: whether the
// hosts recover when an overload ends.
//
//	go run ./bench/scalemix -impl raftick-host -groups 20000 -seconds 60 -warmup 5 -burn-cores 1 -burn-at 20s -burn-for 20s
//
// -crash-at D (raftick-host only) crashes node 1 D after the window's
// start (its Host stops, batches to it are lost) and prints under the row
// how long the groups it led took to elect a leader on another node (p50,
// p99 and max over them, from the crash to the first election won) and
// how many elections started in the groups that kept their leader:
//
//	go run ./bench/scalemix -impl raftick-host -groups 10000 -seconds 20 -warmup 5 -crash-at 10s -burn-cores 1 -burn-at 5s -burn-for 15s
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/bench/raftmix"
)

func main() {
	raftmix.Burn() // a burner process of -burn-cores spins here
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed command line.
type options struct {
	groups []int
	active []float64 // per entry of groups (raftick-host)
	impls  []string
	cfg    raftmix.Config // Impl and Groups set per run
	json   bool
	rounds int // runs of each implementation per group count
	// cpuprofile is a file for a CPU profile of all runs, or "";
	// mutexprofile one for a profile of the runs' mutex contention,
	// memprofile one for a profile of their allocations.
	cpuprofile, mutexprofile, memprofile string
}

var errUsage = errors.New("scalemix: bad usage")

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("scalemix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := raftmix.DefaultConfig()
	groups := fs.String("groups", "1000", "comma-separated numbers of Raft groups")
	impls := fs.String("impl", strings.Join(raftmix.Impls, ","), "comma-separated implementations: "+strings.Join(raftmix.Impls, ", ")+"; not run by default: "+strings.Join(raftmix.ProductImpls, ", "))
	seconds := fs.Float64("seconds", def.Duration.Seconds(), "measured seconds per run")
	warmup := fs.Float64("warmup", def.Warmup.Seconds(), "warm-up seconds before each measurement")
	sample := fs.Int("sample", def.SampleEvery, "sample the step-down lateness of every n-th group")
	seed := fs.Uint64("seed", def.Seed, "seed of the per-group jitter sources")
	tick := fs.Duration("tick", 0, "tick of the raftick implementations' wheel (0: the wheel's default, 1ms); a coarser tick wakes the driver less, and timers fire up to a tick late")
	js := fs.Bool("json", false, "print one JSON object per run instead of a table")
	rounds := fs.Int("rounds", 1, "run each group count's implementations this many times, round after round, and print medians")
	prof := fs.String("cpuprofile", "", "write a CPU profile of all runs to this file")
	mprof := fs.String("mutexprofile", "", "write a profile of the runs' mutex contention to this file")
	aprof := fs.String("memprofile", "", "write a profile of the runs' allocations to this file")
	nodes := fs.Int("nodes", def.Nodes, "raftick-host: simulated nodes, one multiraft.Host each")
	active := fs.String("active", "1", "raftick-host: fraction of the groups kept active; one, or comma-separated one per -groups entry")
	coalesce := fs.Bool("coalesce", def.Coalesce, "raftick-host: coalesce heartbeats per peer node")
	hostET := fs.Duration("election-timeout", raftmix.ElectionTimeout, "raftick-host: election timeout (randomized to [ET, 2ET))")
	hostHB := fs.Duration("heartbeat", raftmix.HeartbeatPeriod, "raftick-host: heartbeat interval, also the period of the touches")
	burnCores := fs.Int("burn-cores", 0, "raftick-host: burn this many cores (a process each) during the window, and count elections before, during and after")
	burnAt := fs.Duration("burn-at", 0, "raftick-host: start the burn this long after the window starts")
	burnFor := fs.Duration("burn-for", 0, "raftick-host: burn this long; the burn must end within -seconds")
	crashAt := fs.Duration("crash-at", 0, "raftick-host: crash node 1 this long after the window starts, and report the failover of the groups it led")
	etcdWorkers := fs.Int("etcd-workers", 0, "etcd-tick: workers of each simulated node's raft scheduler (0: GOMAXPROCS)")
	if err := fs.Parse(args); err != nil {
		return options{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *rounds < 1 || *rounds > maxRounds {
		return options{}, fmt.Errorf("%w: -rounds: %d is not a number of rounds in [1, %d]", errUsage, *rounds, maxRounds)
	}
	o := options{cfg: def, json: *js, rounds: *rounds, cpuprofile: *prof, mutexprofile: *mprof, memprofile: *aprof}
	for _, s := range strings.Split(*groups, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return options{}, fmt.Errorf("%w: -groups: %q is not a positive integer", errUsage, s)
		}
		o.groups = append(o.groups, n)
	}
	for _, s := range strings.Split(*active, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return options{}, fmt.Errorf("%w: -active: %q is not a fraction in [0, 1]", errUsage, s)
		}
		o.active = append(o.active, f)
	}
	switch len(o.active) {
	case len(o.groups):
	case 1:
		for len(o.active) < len(o.groups) {
			o.active = append(o.active, o.active[0])
		}
	default:
		return options{}, fmt.Errorf("%w: -active: %d fractions for %d group counts (give one, or one per -groups entry)",
			errUsage, len(o.active), len(o.groups))
	}
	for _, s := range strings.Split(*impls, ",") {
		o.impls = append(o.impls, strings.TrimSpace(s))
	}
	// The floor runs first, so that each row can show CPU above it.
	slices.SortStableFunc(o.impls, func(a, b string) int {
		return cmp.Compare(boolInt(b == raftmix.ImplNone), boolInt(a == raftmix.ImplNone))
	})
	secs := func(name string, v float64) (time.Duration, error) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e6 {
			return 0, fmt.Errorf("%w: -%s: %v is not a number of seconds in [0, 1e6]", errUsage, name, v)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	var err error
	if o.cfg.Duration, err = secs("seconds", *seconds); err != nil {
		return options{}, err
	}
	if o.cfg.Warmup, err = secs("warmup", *warmup); err != nil {
		return options{}, err
	}
	o.cfg.SampleEvery, o.cfg.Seed, o.cfg.Tick = *sample, *seed, *tick
	o.cfg.Nodes, o.cfg.Coalesce = *nodes, *coalesce
	o.cfg.HostElectionTimeout, o.cfg.HostHeartbeat = *hostET, *hostHB
	o.cfg.BurnCores, o.cfg.BurnAt, o.cfg.BurnFor = *burnCores, *burnAt, *burnFor
	o.cfg.CrashAt, o.cfg.EtcdWorkers = *crashAt, *etcdWorkers
	for _, impl := range o.impls { // validate every run before the first starts
		c := o.cfg
		c.Impl, c.Groups, c.Active = impl, o.groups[0], o.active[0]
		if err := c.Validate(); err != nil {
			return options{}, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	return o, nil
}

// maxRounds bounds -rounds.
const maxRounds = 1000

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "scalemix: -cpuprofile: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "scalemix: -cpuprofile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if o.mutexprofile != "" {
		runtime.SetMutexProfileFraction(10)
		write, ok := profileAtEnd(o.mutexprofile, "mutex", "-mutexprofile", stderr)
		if !ok {
			return 1
		}
		defer write()
	}
	if o.memprofile != "" {
		write, ok := profileAtEnd(o.memprofile, "allocs", "-memprofile", stderr)
		if !ok {
			return 1
		}
		defer write()
	}
	if !o.json {
		fmt.Fprintf(stdout, "scalemix: %v measured per run after %v of warm-up; lateness sampled on every %d-th group\n",
			o.cfg.Duration, o.cfg.Warmup, o.cfg.SampleEvery)
		fmt.Fprintln(stdout, formatRow(header))
	}
	pr := printer{o: o, stdout: stdout, enc: json.NewEncoder(stdout)}
	for gi, n := range o.groups {
		var rounds []map[string]raftmix.Result
		for round := 1; round <= o.rounds; round++ {
			results, err := pr.round(gi, n, round)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			rounds = append(rounds, results)
		}
		if !o.json && o.rounds > 1 {
			for _, line := range medians(o.impls, rounds) {
				fmt.Fprintf(stdout, "  %d groups, %d rounds: %s\n", n, o.rounds, line)
			}
		}
	}
	return 0
}

// printer runs the rounds and prints their results as they come.
type printer struct {
	o         options
	stdout    io.Writer
	enc       *json.Encoder
	firstHost *raftmix.Result // raftick-host at the first group count
}

// round runs every implementation once on n groups (the gi-th group
// count), printing each run, and then the ratios of raftick (and
// raftick-keep) against the others.
func (pr *printer) round(gi, n, round int) (map[string]raftmix.Result, error) {
	o := pr.o
	results := map[string]raftmix.Result{}
	for _, impl := range o.impls {
		c := o.cfg
		c.Impl, c.Groups, c.Active = impl, n, o.active[gi]
		res, err := raftmix.Run(c)
		if err != nil {
			return nil, fmt.Errorf("scalemix: %d groups, %s: %v", n, impl, err)
		}
		results[impl] = res
		if o.json {
			out := jsonResult{Result: res}
			if o.rounds > 1 {
				out.Round = round
			}
			if slices.Contains(raftmix.ProductImpls, impl) {
				ok, short := shortfalls(res)
				out.KeepsUp, out.Short = &ok, strings.Join(short, ", ")
			}
			if err := pr.enc.Encode(out); err != nil {
				return nil, fmt.Errorf("scalemix: %v", err)
			}
			continue
		}
		fmt.Fprintln(pr.stdout, formatRow(row(res, results)))
		if slices.Contains(raftmix.ProductImpls, impl) {
			fmt.Fprintf(pr.stdout, "  %d groups: %s: %s\n", n, impl, keepsUp(res))
		}
		if res.Host != nil {
			if pr.firstHost == nil {
				pr.firstHost = &res
			}
			for _, line := range hostLines(res, *pr.firstHost) {
				fmt.Fprintf(pr.stdout, "  %d groups: %s\n", n, line)
			}
		}
		if res.Phases != nil {
			for _, line := range phaseLines(*res.Phases) {
				fmt.Fprintf(pr.stdout, "  %d groups: %s\n", n, line)
			}
		}
		if res.Crash != nil {
			fmt.Fprintf(pr.stdout, "  %d groups: %s\n", n, crashLine(*res.Crash))
		}
		if e := res.Etcd; e != nil {
			fmt.Fprintf(pr.stdout, "  %d groups: etcd-tick: 3 nodes x %d scheduler workers; %.0f ticks dropped/s (a replica owed a heartbeat interval's)\n",
				n, e.Workers, float64(e.TicksDropped)/res.Seconds)
		}
	}
	if !o.json {
		label := fmt.Sprintf("%d groups", n)
		if o.rounds > 1 {
			label += fmt.Sprintf(", round %d/%d", round, o.rounds)
		}
		for _, line := range ratios(results) {
			fmt.Fprintf(pr.stdout, "  %s: %s\n", label, line)
		}
	}
	return results, nil
}

// jsonResult is one run's JSON object: the Result, with -rounds > 1 the
// round it belongs to (from 1), and for the rows that run elections the
// table's verdict (keepsUp): whether the run kept up, and if not, what
// fell short.
type jsonResult struct {
	Round   int    `json:"round,omitempty"`
	KeepsUp *bool  `json:"keeps_up,omitempty"`
	Short   string `json:"falls_behind,omitempty"`
	raftmix.Result
}

// aboveFloor returns r's cores minus the floor's, if the floor ran.
func aboveFloor(r raftmix.Result, results map[string]raftmix.Result) (float64, bool) {
	floor, ok := results[raftmix.ImplNone]
	if !ok || r.Impl == raftmix.ImplNone {
		return 0, false
	}
	return r.Cores - floor.Cores, true
}

// The table's columns; rows are printed as each run ends, so widths are
// fixed.
var (
	header = []string{"groups", "impl", "cores", "above floor", "cpu ns/event", "hb pace",
		"step-downs fired/due", "fire rate", "spurious", "late p50 ms", "p99 ms", "max ms", "early", "wake-ups/s"}
	widths = []int{7, 12, 6, 11, 12, 7, 30, 9, 8, 11, 7, 7, 5, 10}
)

func formatRow(cells []string) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%*s", widths[i], c)
	}
	return b.String()
}

func row(r raftmix.Result, results map[string]raftmix.Result) []string {
	above := "-"
	if a, ok := aboveFloor(r, results); ok {
		above = fmt.Sprintf("%.3f", a)
	}
	fired, rate, late := "-", "-", [4]string{"-", "-", "-", "-"}
	if r.Impl != raftmix.ImplNone {
		fired = fmt.Sprintf("%d/%d = %.4f", r.StepDownFires, r.StepDownDue, r.StepDownDelivered)
		rate = fmt.Sprintf("%.4f", r.StepDownRate)
		if r.LatenessSamples > 0 {
			late = [4]string{
				fmt.Sprintf("%.2f", r.LatenessP50Ms), fmt.Sprintf("%.2f", r.LatenessP99Ms),
				fmt.Sprintf("%.2f", r.LatenessMaxMs), strconv.FormatInt(r.EarlyFires, 10),
			}
		}
	}
	pace := fmt.Sprintf("%.4f", r.HeartbeatPace)
	wake := "-"
	if r.WakeupsPerSec >= 0 {
		wake = fmt.Sprintf("%.0f", r.WakeupsPerSec)
	}
	return []string{strconv.Itoa(r.Groups), r.Impl, fmt.Sprintf("%.3f", r.Cores), above,
		fmt.Sprintf("%.0f", r.CPUNsPerEvent), pace, fired, rate,
		strconv.FormatInt(r.SpuriousElections, 10), late[0], late[1], late[2], late[3], wake}
}

// ratios compares the CPU above the floor, and per event, of raftick and
// raftick-keep with the other timer implementations of the same group
// count, and the cores of raftick-node and raftick-host with etcd-tick's
// and etcd-loop's.
func ratios(results map[string]raftmix.Result) []string {
	var out []string
	for _, r := range compare(results) {
		if r.product {
			out = append(out, fmt.Sprintf("%s: cores %.2fx (%.3f vs %.3f)", r.label(), r.cores, r.implCores, r.otherCores))
			continue
		}
		line := fmt.Sprintf("%s: cpu per event %.2fx", r.label(), r.perEvent)
		switch {
		case !r.floor:
		case r.otherAbove > 0:
			line += fmt.Sprintf(", cpu above floor %.2fx (%.3f vs %.3f cores)", r.above, r.raftickAbove, r.otherAbove)
		default:
			line += fmt.Sprintf(", cpu above floor %.3f vs %.3f cores (%s at or below the floor: no ratio)", r.raftickAbove, r.otherAbove, r.other)
		}
		out = append(out, line)
	}
	return out
}

// comparisons are the pairs compare measures, in the order of their
// ratio lines: each of impls against each of others. Product pairs run
// Raft's election (their CPU per event counts different events, so only
// their cores compare).
var comparisons = []struct {
	impls, others []string
	product       bool
}{
	{[]string{raftmix.ImplRaftick, raftmix.ImplRaftickKeep}, []string{raftmix.ImplTick10, raftmix.ImplTick100, raftmix.ImplStd}, false},
	{[]string{raftmix.ImplNode, raftmix.ImplHost}, []string{raftmix.ImplEtcd, raftmix.ImplEtcdLoop}, true},
}

// ratio is a raftick implementation's CPU against another implementation's
// in one round.
type ratio struct {
	impl                     string // a raftick implementation; "raftick" below
	other                    string
	product                  bool    // a product pair: only the cores fields are set
	cores                    float64 // raftick's cores over other's
	implCores, otherCores    float64
	perEvent                 float64 // raftick's CPU per event over other's
	floor                    bool    // the floor ran: the fields below are set
	raftickAbove, otherAbove float64 // cores above the floor
	above                    float64 // raftickAbove / otherAbove, if otherAbove > 0
}

// label names the pair, as in "raftick/tick10".
func (r ratio) label() string { return r.impl + "/" + r.other }

// compare returns the ratios of the pairs of comparisons that ran.
func compare(results map[string]raftmix.Result) []ratio {
	var out []ratio
	for _, c := range comparisons {
		out = append(out, comparePairs(results, c.impls, c.others, c.product)...)
	}
	return out
}

// comparePairs returns the ratios of each of impls against each of others,
// those of them that ran.
func comparePairs(results map[string]raftmix.Result, impls, others []string, product bool) []ratio {
	var out []ratio
	for _, impl := range impls {
		rt, ok := results[impl]
		if !ok {
			continue
		}
		a, ok1 := aboveFloor(rt, results)
		for _, other := range others {
			o, ok := results[other]
			if !ok {
				continue
			}
			if product {
				out = append(out, ratio{impl: impl, other: other, product: true,
					cores: rt.Cores / o.Cores, implCores: rt.Cores, otherCores: o.Cores})
				continue
			}
			r := ratio{impl: impl, other: other, perEvent: rt.CPUNsPerEvent / o.CPUNsPerEvent}
			b, ok2 := aboveFloor(o, results)
			if ok1 && ok2 {
				r.floor, r.raftickAbove, r.otherAbove = true, a, b
				if b > 0 {
					r.above = a / b
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// medians summarizes the rounds of one group count: each implementation's
// median cores (and above the floor), and the median of the per-round
// ratios of raftick (and raftick-keep) with their range. A round's ratio
// pairs runs made minutes apart at most, so its median is steadier than a
// ratio of medians. A ratio with a floor at or above the other's cores is left
// out (there is none).
func medians(impls []string, rounds []map[string]raftmix.Result) []string {
	var cells []string
	for _, impl := range impls {
		var cores, above []float64
		for _, res := range rounds {
			r := res[impl]
			cores = append(cores, r.Cores)
			if a, ok := aboveFloor(r, res); ok {
				above = append(above, a)
			}
		}
		cell := fmt.Sprintf("%s %.3f", impl, median(cores))
		if len(above) > 0 {
			cell += fmt.Sprintf(" (%.3f above floor)", median(above))
		}
		cells = append(cells, cell)
	}
	lines := []string{"median cores: " + strings.Join(cells, ", ")}
	byPair := map[string][]ratio{} // by label
	var pairs []string
	for _, res := range rounds {
		for _, r := range compare(res) {
			if _, seen := byPair[r.label()]; !seen {
				pairs = append(pairs, r.label())
			}
			byPair[r.label()] = append(byPair[r.label()], r)
		}
	}
	for _, pair := range pairs {
		if byPair[pair][0].product {
			var cores []float64
			for _, r := range byPair[pair] {
				cores = append(cores, r.cores)
			}
			lines = append(lines, fmt.Sprintf("%s: median cores %s", pair, spread(cores)))
			continue
		}
		var perEvent, above []float64
		for _, r := range byPair[pair] {
			perEvent = append(perEvent, r.perEvent)
			if r.floor && r.otherAbove > 0 {
				above = append(above, r.above)
			}
		}
		line := fmt.Sprintf("%s: median cpu per event %s", pair, spread(perEvent))
		if len(above) > 0 {
			line += fmt.Sprintf(", median cpu above floor %s over %d rounds with a ratio", spread(above), len(above))
		}
		lines = append(lines, line)
	}
	return lines
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread formats the median of ratios xs and their range.
func spread(xs []float64) string {
	return fmt.Sprintf("%.2fx (%.2fx to %.2fx)", median(xs), slices.Min(xs), slices.Max(xs))
}

// hostLines describes a raftick-host run beyond the table's columns, and
// compares its CPU with first, the raftick-host run at the first group
// count.
func hostLines(r, first raftmix.Result) []string {
	h := r.Host
	lines := []string{
		fmt.Sprintf("raftick-host: %d nodes x %d replicas, active %g (%d groups), coalesce %v; awake replicas at the end %d of %d",
			h.Nodes, h.Replicas, h.Active, h.ActiveGroups, h.Coalesce, h.AwakeReplicas, r.Groups*h.Replicas),
		fmt.Sprintf("raftick-host: %.0f touches/s, %.0f deliveries/s, %.0f timer fires/s; longest stall of a 1ms sleeper %.1f ms",
			float64(h.Touches)/r.Seconds, float64(h.Delivered)/r.Seconds, float64(h.TimersFired)/r.Seconds, h.MaxStallMs),
		fmt.Sprintf("raftick-host: wheel: %.0f fires/s more than a tick late, latest fire %.1f ms late (since the build)",
			h.LateFiresPerSec, h.MaxLatenessMs),
		fmt.Sprintf("raftick-host: heap per group %.0f B all asleep (%.0f B per replica), %.0f B at the end",
			h.HeapPerGroupAsleep, h.HeapPerReplicaAsleep, h.HeapPerGroupEnd),
		fmt.Sprintf("raftick-host: %.0f messages/s in %.0f batches/s (%.0f messages per batch); %d hibernations, %d wakes; %d peers taken for down, %d liveness wakes since the build",
			h.MessagesPerSec, h.BatchesPerSec, h.Coalescing, h.Hibernations, h.Wakes, h.PeersDown, h.LivenessWakes),
		fmt.Sprintf("raftick-host: spurious elections: %d leaders stepped down by CheckQuorum, %d elections after a follower's timeout",
			h.CheckQuorumStepDowns, h.TimeoutElections),
		fmt.Sprintf("raftick-host: %d spells behind, %d silences held (a backlog's, not the peer's); %d of %d hosts behind at the end; latest sweep %.1f ms late (since the build)",
			h.BehindSpells, h.LaggingSkips, h.BehindAtEnd, h.Nodes, h.MaxSweepLatenessMs),
		fmt.Sprintf("raftick-host: batches/s by cause: %.1f heartbeat tick, %.1f answers, %.1f loose, %.1f control, %.1f single message, %.1f liveness",
			h.TickBatchesPerSec, h.AnswerBatchesPerSec, h.LooseBatchesPerSec, h.ControlBatchesPerSec, h.DirectBatchesPerSec, h.LivenessBatchesPerSec),
	}
	if first.Groups != r.Groups || first.Host.Active != h.Active {
		line := fmt.Sprintf("raftick-host: cores %.3f vs %.3f for %d groups at active %g", r.Cores, first.Cores, first.Groups, first.Host.Active)
		if first.Cores > 0 {
			line += fmt.Sprintf(": %.2fx", r.Cores/first.Cores)
		}
		lines = append(lines, line)
	}
	return lines
}

// crashLine describes a run with a crash: the failover of the groups
// the crashed node led, and the elections of the others.
func crashLine(c raftmix.CrashResult) string {
	ets := func(ms float64) float64 { return ms / c.ElectionTimeoutMs }
	return fmt.Sprintf("crash: node 1 at %gs: %d of %d lost groups re-elected, failover p50 %.0f ms (%.1f ETs), p99 %.0f ms (%.1f), max %.0f ms (%.1f); elections %d before, %d after in the groups that kept their leader",
		c.CrashAtSec, c.Recovered, c.Lost, c.FailoverP50Ms, ets(c.FailoverP50Ms), c.FailoverP99Ms, ets(c.FailoverP99Ms),
		c.FailoverMaxMs, ets(c.FailoverMaxMs), c.ElectionsBefore, c.KeptElections)
}

// phaseLines describes a run with a burn: elections, CheckQuorum
// step-downs and cores in each phase, and how long after the burn the
// last election started.
func phaseLines(p raftmix.PhaseResult) []string {
	var lines []string
	lines = append(lines, fmt.Sprintf("burn: %d cores from %gs for %gs of the window", p.BurnCores, p.BurnAtSec, p.BurnForSec))
	for k, name := range raftmix.PhaseNames {
		lines = append(lines, fmt.Sprintf("burn: %-6s %5.1fs: %6d elections, %6d check-quorum step-downs, %.3f cores, heartbeat pace %.4f, check rate %.4f, %d spells behind, %d silences held; longest stall %.1f ms, load average %.2f at the end",
			name, p.Seconds[k], p.Elections[k], p.StepDowns[k], p.Cores[k], p.HeartbeatPace[k], p.CheckRate[k], p.BehindSpells[k], p.LaggingSkips[k], p.MaxStallMs[k], p.LoadAvg[k]))
	}
	last := "no election after the burn"
	if p.Elections[2] > 0 {
		last = fmt.Sprintf("last election %.2fs after the burn ended", p.LastElectionAfterBurnSec)
	}
	lines = append(lines, "burn: "+last)
	per := make([]string, len(p.ElectionsPerSec))
	for i, c := range p.ElectionsPerSec {
		per[i] = strconv.FormatInt(c, 10)
	}
	lines = append(lines, "burn: elections per second: "+strings.Join(per, " "))
	return lines
}

// The bounds of keepsUp: issue 33's for raftick-host at 20k groups.
const (
	keepUpPace     = 0.99 // heartbeats delivered over due, at least
	keepUpFired    = 0.99 // step-down fires over due, at least
	keepUpLateP99  = 2.0  // ms, at most
	keepUpSpurious = 0    // at most
)

// keepsUp says whether a run that runs Raft's election kept up with its
// groups: no spurious election, heartbeats at pace, the step-down checks
// due delivered (for raftick-host, whose due is one per period, the
// fires of checks keepUpLateP99 late), their lateness p99 within
// keepUpLateP99 and none early
// (etcd-tick's and etcd-loop's ticks may come early after a late one, as
// any tick loop's: not counted against them), and no callback panicked on its wheel.
// Otherwise it lists what fell short.
func keepsUp(r raftmix.Result) string {
	if ok, short := shortfalls(r); !ok {
		return fmt.Sprintf("falls behind on %.3f cores: %s", r.Cores, strings.Join(short, ", "))
	}
	return fmt.Sprintf("keeps up on %.3f cores", r.Cores)
}

// shortfalls reports whether r kept up (see keepsUp), and what fell short.
func shortfalls(r raftmix.Result) (bool, []string) {
	var short []string
	if r.SpuriousElections > keepUpSpurious {
		short = append(short, fmt.Sprintf("%d spurious elections", r.SpuriousElections))
	}
	if r.HeartbeatPace < keepUpPace {
		short = append(short, fmt.Sprintf("heartbeat pace %.4f < %v", r.HeartbeatPace, keepUpPace))
	}
	fired := keepUpFired
	if r.Impl == raftmix.ImplHost {
		// Its due is one check per period, not fires plus the overdue:
		// a fixed-delay check keepUpLateP99 late reaches 75/77 of it.
		fired = math.Floor(1000*raftmix.StepDown.Seconds()/(raftmix.StepDown.Seconds()+keepUpLateP99/1e3)) / 1000
	}
	if r.StepDownDelivered < fired {
		short = append(short, fmt.Sprintf("step-downs fired/due %.4f < %v", r.StepDownDelivered, fired))
	}
	if r.LatenessSamples == 0 {
		short = append(short, "no lateness sampled")
	} else if r.LatenessP99Ms > keepUpLateP99 {
		short = append(short, fmt.Sprintf("lateness p99 %.2f ms > %v ms", r.LatenessP99Ms, keepUpLateP99))
	}
	if r.WheelPanics > 0 {
		short = append(short, fmt.Sprintf("%d callbacks panicked on the wheel", r.WheelPanics))
	}
	if r.EarlyFires > 0 && r.Impl != raftmix.ImplEtcd && r.Impl != raftmix.ImplEtcdLoop {
		short = append(short, fmt.Sprintf("%d early", r.EarlyFires))
	}
	return len(short) == 0, short
}

// profileAtEnd creates path for the runtime profile name, asked for by
// flag, and returns a function that writes the profile there and closes
// the file; or, having said why, false.
func profileAtEnd(path, name, flag string, stderr io.Writer) (write func(), ok bool) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "scalemix: %s: %v\n", flag, err)
		return nil, false
	}
	return func() {
		if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
			fmt.Fprintf(stderr, "scalemix: %s: %v\n", flag, err)
		}
		f.Close()
	}, true
}
