package raftmix

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// BurnEnv is set in the environment of the processes a run with
// Config.BurnCores starts: each is the running executable again, and must
// call Burn first thing, which spins one core and never returns.
const BurnEnv = "RAFTMIX_BURN"

// Burn spins one core until the process is killed or its standard input
// ends (the run that started it closes it, or died), if the environment
// says this process is a burner (BurnEnv); otherwise it returns at once.
// A program that runs Config.BurnCores must call it at the start of main
// (and a test binary in TestMain).
func Burn() {
	if os.Getenv(BurnEnv) != "1" {
		return
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	x := uint64(1)
	for {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if x == 0 { // never: keeps the loop from being optimised away
			os.Exit(3)
		}
	}
}

// burner is the set of processes burning cores, one each, and the pipes
// to their standard input, whose end (or this process's) ends them.
type burner struct {
	cmds  []*exec.Cmd
	pipes []io.WriteCloser
}

// startBurn starts n burner processes (see Burn).
func startBurn(n int) (*burner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("raftmix: burn: %w", err)
	}
	b := &burner{}
	for range n {
		c := exec.Command(exe)
		c.Env = append(os.Environ(), BurnEnv+"=1", "GOMAXPROCS=1")
		pipe, err := c.StdinPipe()
		if err == nil {
			err = c.Start()
		}
		if err != nil {
			b.stop()
			return nil, fmt.Errorf("raftmix: burn: %w", err)
		}
		b.cmds, b.pipes = append(b.cmds, c), append(b.pipes, pipe)
	}
	return b, nil
}

// stop kills the burners and waits for them to exit.
func (b *burner) stop() {
	for _, p := range b.pipes {
		_ = p.Close()
	}
	for _, c := range b.cmds {
		_ = c.Process.Kill()
	}
	for _, c := range b.cmds {
		_ = c.Wait()
	}
	b.cmds, b.pipes = nil, nil
}

// The phases of a run with a burn, in PhaseResult's arrays.
const (
	phaseBefore = iota
	phaseDuring
	phaseAfter
	numPhases
)

// PhaseNames name PhaseResult's phases, in order.
var PhaseNames = [numPhases]string{"before", "during", "after"}

// PhaseResult is what a run with a burn (Config.BurnCores) measured in each
// phase of its window: before the burn, during it, and after it.
type PhaseResult struct {
	BurnCores int     `json:"burn_cores"`
	BurnAtSec float64 `json:"burn_at_sec"` // from the window's start
	// BurnForSec is how long the burn lasted as planned. The phases run
	// from when the burners had started until they had all exited, a
	// little later on a busy machine (Seconds).
	BurnForSec float64 `json:"burn_for_sec"`
	// Seconds is each phase's wall time, Cores the run's process CPU per
	// wall second in it (the burners, other processes, not counted).
	Seconds [numPhases]float64 `json:"seconds"`
	Cores   [numPhases]float64 `json:"cores"`
	// Elections counts the elections (and pre-votes) started in each
	// phase, StepDowns the leaders stepped down by CheckQuorum.
	Elections [numPhases]int64 `json:"elections"`
	StepDowns [numPhases]int64 `json:"step_downs"`
	// HeartbeatPace and CheckRate are Result's HeartbeatPace and
	// StepDownRate in each phase: whether the hosts kept up, not only
	// whether they held their elections.
	HeartbeatPace [numPhases]float64 `json:"heartbeat_pace"`
	CheckRate     [numPhases]float64 `json:"check_rate"`
	// BehindSpells and LaggingSkips sum multiraft.Stats's over the hosts
	// in each phase: the times a host fell behind, and the timers that
	// came due while it was and did nothing.
	BehindSpells [numPhases]int64 `json:"behind_spells"`
	LaggingSkips [numPhases]int64 `json:"lagging_skips"`
	// MaxStallMs is the longest a goroutine sleeping 1ms at a time
	// overslept in each phase (HostResult.MaxStallMs), and LoadAvg the
	// system's one-minute load average at each phase's end (-1 where
	// unknown): the burn is not the only load of a shared machine.
	MaxStallMs [numPhases]float64 `json:"max_stall_ms"`
	LoadAvg    [numPhases]float64 `json:"load_avg"`
	// LastElectionAfterBurnSec is the time from the burn's end to the
	// last election started in the window, in seconds; 0 if none started
	// after the burn ended.
	LastElectionAfterBurnSec float64 `json:"last_election_after_burn_sec"`
	// ElectionsPerSec counts the elections started in each second of the
	// window (the last one may be partial).
	ElectionsPerSec []int64 `json:"elections_per_sec"`
}

// phases records, during a run's window, when elections and CheckQuorum
// step-downs happen, by phase of a burn. Its methods are safe for
// concurrent use; record may be called before the window (it is ignored).
type phases struct {
	now func() time.Time // the clock: time.Now but in tests
	// counts returns the counters so far, and hbDue and checkDue how many
	// heartbeats and checks are due a second.
	counts          func() phaseCounts
	hbDue, checkDue float64
	start           atomic.Int64 // the window's start, unix ns; 0 until it starts
	done            atomic.Bool  // the window ended
	// burnStart and burnEnd are when the burners had started and had
	// all exited, since the window's start, in ns; 0 until then.
	burnStart, burnEnd atomic.Int64

	elections, stepDowns [numPhases]atomic.Int64
	stalls               [numPhases]atomic.Int64 // the longest in each phase, ns
	lastElection         atomic.Int64            // since the window's start, ns
	perSec               []atomic.Int64
}

// phaseCounts are the counters a phase reports the growth of.
type phaseCounts struct {
	hbs, checks   int64 // heartbeats sent to followers, step-down checks
	spells, skips int64 // multiraft.Stats's BehindSpells and LaggingSkips
}

func newPhases(c Config) *phases {
	return &phases{now: time.Now, perSec: make([]atomic.Int64, int((c.Duration+time.Second-1)/time.Second)),
		counts: func() phaseCounts { return phaseCounts{} }}
}

// since returns the time since the window started, or false outside it.
func (p *phases) since() (time.Duration, bool) {
	s := p.start.Load()
	if s == 0 || p.done.Load() {
		return 0, false
	}
	return time.Duration(p.now().UnixNano() - s), true
}

// phase returns the phase of d, a time since the window's start: the
// burn runs from when its processes started until they all exited.
func (p *phases) phase(d time.Duration) int {
	switch start, end := p.burnStart.Load(), p.burnEnd.Load(); {
	case start == 0 || int64(d) < start:
		return phaseBefore
	case end == 0 || int64(d) < end:
		return phaseDuring
	}
	return phaseAfter
}

// stall records that a 1ms sleep overslept by d, ending now.
func (p *phases) stall(d time.Duration) {
	at, ok := p.since()
	if !ok {
		return
	}
	s := &p.stalls[p.phase(at)]
	for {
		old := s.Load()
		if int64(d) <= old || s.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// election records an election (or pre-vote) started now.
func (p *phases) election() {
	d, ok := p.since()
	if !ok {
		return
	}
	p.elections[p.phase(d)].Add(1)
	if k := int(d / time.Second); k < len(p.perSec) {
		p.perSec[k].Add(1)
	}
	for {
		last := p.lastElection.Load()
		if int64(d) <= last || p.lastElection.CompareAndSwap(last, int64(d)) {
			return
		}
	}
}

// stepDown records a leader stepped down by CheckQuorum now.
func (p *phases) stepDown() {
	if d, ok := p.since(); ok {
		p.stepDowns[p.phase(d)].Add(1)
	}
}

// window runs the measured window, c.Duration long, with c's burn inside
// it, and returns what the phases saw.
func (p *phases) window(c Config) (PhaseResult, error) {
	res := PhaseResult{BurnCores: c.BurnCores, BurnAtSec: c.BurnAt.Seconds(), BurnForSec: c.BurnFor.Seconds()}
	t0 := time.Now()
	p.start.Store(t0.UnixNano())
	cpu := [numPhases + 1]time.Duration{processCPU()}
	wall := [numPhases + 1]time.Time{t0}
	var cs [numPhases + 1]phaseCounts
	var load [numPhases + 1]float64
	cs[0] = p.counts()
	sleepUntil := func(d time.Duration) {
		if ahead := time.Until(t0.Add(d)); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	sleepUntil(c.BurnAt)
	b, err := startBurn(c.BurnCores)
	if err != nil {
		p.done.Store(true)
		return PhaseResult{}, err
	}
	cpu[1], wall[1] = processCPU(), time.Now()
	cs[1], load[1] = p.counts(), loadAvg()
	p.burnStart.Store(max(1, int64(wall[1].Sub(t0))))
	sleepUntil(c.BurnAt + c.BurnFor)
	b.stop()
	cpu[2], wall[2] = processCPU(), time.Now()
	p.burnEnd.Store(max(1, int64(wall[2].Sub(t0))))
	cs[2], load[2] = p.counts(), loadAvg()
	sleepUntil(c.Duration)
	cpu[3], wall[3] = processCPU(), time.Now()
	cs[3], load[3] = p.counts(), loadAvg()
	p.done.Store(true)
	for k := range numPhases {
		secs := wall[k+1].Sub(wall[k]).Seconds()
		res.Seconds[k] = secs
		if secs > 0 && cpu[k] >= 0 && cpu[k+1] >= 0 {
			res.Cores[k] = (cpu[k+1] - cpu[k]).Seconds() / secs
		}
		if secs > 0 && p.hbDue > 0 {
			res.HeartbeatPace[k] = float64(cs[k+1].hbs-cs[k].hbs) / (secs * p.hbDue)
		}
		if secs > 0 && p.checkDue > 0 {
			res.CheckRate[k] = float64(cs[k+1].checks-cs[k].checks) / (secs * p.checkDue)
		}
		res.BehindSpells[k] = cs[k+1].spells - cs[k].spells
		res.MaxStallMs[k] = float64(p.stalls[k].Load()) / 1e6
		res.LoadAvg[k] = load[k+1]
		res.LaggingSkips[k] = cs[k+1].skips - cs[k].skips
		res.Elections[k] = p.elections[k].Load()
		res.StepDowns[k] = p.stepDowns[k].Load()
	}
	if last := time.Duration(p.lastElection.Load()); res.Elections[phaseAfter] > 0 {
		res.LastElectionAfterBurnSec = (last - wall[2].Sub(t0)).Seconds()
	}
	for k := range p.perSec {
		res.ElectionsPerSec = append(res.ElectionsPerSec, p.perSec[k].Load())
	}
	return res, nil
}

// loadAvg returns the system's one-minute load average, or -1 where
// /proc/loadavg does not say.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return -1
	}
	return v
}
