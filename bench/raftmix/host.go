package raftmix

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/repeated"
	"github.com/raftick/raftick/wheel"
)

// ImplHost runs the groups as multiraft.Host replicas instead of bare
// timers: Config.Nodes hosts (one per simulated node) on one real-time
// wheel, three replicas per group (fewer if there are fewer nodes), leaders
// balanced over the nodes, every group bootstrapped asleep with
// GroupConfig.Leader. Every heartbeat period the replicas of the
// Config.Active fraction of the groups are touched (a proposal keeps a
// group awake); the other groups hibernate (after ten heartbeat
// intervals without a touch). The election timings are the
// workload's unless Config.HostElectionTimeout and HostHeartbeat say
// otherwise: timeout [150ms, 300ms), heartbeats every 50ms.
//
// The columns the timer implementations fill are the host's: heartbeats
// are the leaders' heartbeats that their followers' hosts stepped
// (coalesced or not; counted when the receiving host's Step returns),
// due once per heartbeat interval per follower of an active group (a host
// ticks every nine tenths of the interval, so a host that keeps up
// reaches a pace of about 1.11); step-down fires are the leaders'
// CheckQuorum checks on all hosts (counted through a metrics sink: election
// samples raftick.election.leader.last_contact at every check).
//
// With Config.Coalesce (the product path) a host judges every leader's
// CheckQuorum in its heartbeat tick (election.Config.ExternalCheckQuorum),
// so a check is due once per active group per tick period (nine tenths
// of the heartbeat interval), at the tick's deadline, and is done when
// the tick reaches the group. Lateness is measured on the checks
// themselves: each host samples how late its tick began
// (raftick.host.tick_lateness), and every sampleChecks-th check is
// recorded as that plus the wall time from the tick's beginning to the
// check, the time it was judged; a check the tick passed at its start,
// from the peers' answers to the last tick (raftick.host.quorum_heard),
// is recorded as late as the tick began. Without Coalesce the leaders keep a
// step-down timer each, due every ElectionTimeout/2, and lateness is that
// of probe timers, one per Config.SampleEvery active groups, each a
// repeated.Timer firing every ElectionTimeout/2 on the hosts' wheel (a
// sink shared by a host's groups cannot tell whose timer it sees).
const ImplHost = "raftick-host"

// hostReplicas is the number of replicas per group when there are enough
// nodes.
const hostReplicas = 3

// HostResult is what a raftick-host run measures besides Result's
// common fields.
type HostResult struct {
	Nodes        int     `json:"nodes"`
	Replicas     int     `json:"replicas"`
	Active       float64 `json:"active"`
	ActiveGroups int     `json:"active_groups"`
	Coalesce     bool    `json:"coalesce"`
	// HeapPerGroupAsleep is the live heap after a GC with every group
	// added and asleep, minus the heap before the hosts were built, per
	// group (all replicas of a group together); HeapPerReplicaAsleep the
	// same per replica.
	HeapPerGroupAsleep   float64 `json:"heap_per_group_asleep"`
	HeapPerReplicaAsleep float64 `json:"heap_per_replica_asleep"`
	// HeapPerGroupEnd is the same at the end of the window, with the
	// active groups awake.
	HeapPerGroupEnd float64 `json:"heap_per_group_end"`
	// AwakeReplicas is how many replicas were awake at the end of the
	// window, of Groups*Replicas.
	AwakeReplicas int64 `json:"awake_replicas"`
	// MessagesPerSec are election and control messages sent per second
	// before coalescing; BatchesPerSec the batches the hosts handed the
	// transport (liveness batches included); Coalescing is their ratio.
	MessagesPerSec float64 `json:"messages_per_sec"`
	BatchesPerSec  float64 `json:"batches_per_sec"`
	Coalescing     float64 `json:"coalescing"`
	// Batches per second by why they left (multiraft.Stats): after a
	// heartbeat tick, with a Step's answers, loose entries (no tick's or
	// Step's), with a hibernation control, single messages, liveness.
	TickBatchesPerSec     float64 `json:"tick_batches_per_sec"`
	AnswerBatchesPerSec   float64 `json:"answer_batches_per_sec"`
	LooseBatchesPerSec    float64 `json:"loose_batches_per_sec"`
	ControlBatchesPerSec  float64 `json:"control_batches_per_sec"`
	DirectBatchesPerSec   float64 `json:"direct_batches_per_sec"`
	LivenessBatchesPerSec float64 `json:"liveness_batches_per_sec"`
	// Delivered are election messages stepped into groups in the window;
	// TimersFired the wheel's fires; Touches the Touch calls.
	Delivered   int64 `json:"delivered"`
	TimersFired int64 `json:"timers_fired"`
	Touches     int64 `json:"touches"`
	// Hibernations and Wakes in the window, summed over the hosts;
	// HibernateRefused the leaders woken again because a follower refused
	// to hibernate.
	Hibernations     int64 `json:"hibernations"`
	Wakes            int64 `json:"wakes"`
	HibernateRefused int64 `json:"hibernate_refused"`
	// PeersDown counts liveness verdicts "peer silent" since the hosts
	// were built (none is right: nothing crashes), LivenessWakes the
	// groups they woke; both from before the window too, as a build that
	// stalls the process long enough trips liveness before it.
	PeersDown     int64 `json:"peers_down"`
	LivenessWakes int64 `json:"liveness_wakes"`
	// CheckQuorumStepDowns counts leaders that stepped down by CheckQuorum
	// in the window; TimeoutElections the elections (and pre-votes)
	// started because a follower's election timer fired. Together they
	// say which side of a heartbeat's round trip ran late.
	CheckQuorumStepDowns int64 `json:"check_quorum_step_downs"`
	TimeoutElections     int64 `json:"timeout_elections"`
	// MaxStallMs is the longest a goroutine sleeping 1ms at a time
	// overslept in the window, in ms: how long the process went without
	// a CPU (a host's heartbeats wait as long). On a shared machine,
	// stalls near the election timeout cause elections no code avoids.
	MaxStallMs float64 `json:"max_stall_ms"`
	// MaxTouchRoundMs is the longest the toucher took, in the window, to
	// touch every active group once (due every heartbeat interval): a
	// group untouched for HibernateAfter hibernates.
	MaxTouchRoundMs float64 `json:"max_touch_round_ms"`
	// LateFiresPerSec are the wheel's fires more than a tick late, per
	// second of the window; MaxLatenessMs the latest fire since the
	// wheel started (its driver's longest stall, build included: a
	// stall of the driver alone, beyond MaxStallMs, holds up every
	// host's heartbeat tick and every leader's step-down check).
	LateFiresPerSec float64 `json:"late_fires_per_sec"`
	MaxLatenessMs   float64 `json:"max_lateness_ms"`
	// BehindSpells and LaggingSkips sum multiraft.Stats's over the hosts
	// in the window: the times a host fell behind, and the election and
	// vote timers and CheckQuorum checks that came due while it was and
	// did nothing. BehindAtEnd counts the hosts behind at the window's
	// end; MaxSweepLatenessMs is the latest any host's periodic check
	// ran since the build (multiraft.Stats.MaxLateness).
	BehindSpells       int64   `json:"behind_spells"`
	LaggingSkips       int64   `json:"lagging_skips"`
	BehindAtEnd        int     `json:"behind_at_end"`
	MaxSweepLatenessMs float64 `json:"max_sweep_lateness_ms"`
}

// hostNet is the benchmark's transport: one inbound queue and goroutine
// per host, so Send never delivers synchronously and never blocks.
type hostNet struct {
	hosts  []*multiraft.Host // by node ID - 1
	queues []*inbox
	wg     sync.WaitGroup
	hbs    atomic.Int64 // heartbeats stepped into followers' hosts, coalesced or not
}

type inbox struct {
	mu      sync.Mutex
	pending []multiraft.Batch
	closed  bool
	signal  chan struct{} // capacity 1
}

func (n *hostNet) send(b multiraft.Batch) {
	q := n.queues[b.To-1]
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, b)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// heartbeats counts the heartbeats in b, coalesced or not.
func heartbeats(b *multiraft.Batch) int64 {
	hbs := len(b.Heartbeats)
	for i := range b.Msgs {
		if b.Msgs[i].Msg.Type == election.MsgHeartbeat {
			hbs++
		}
	}
	return int64(hbs)
}

func (n *hostNet) loop(i int) {
	defer n.wg.Done()
	q := n.queues[i]
	var work []multiraft.Batch
	for range q.signal {
		q.mu.Lock()
		work, q.pending = q.pending, work[:0]
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return
		}
		var hbs int64
		for k := range work {
			b := &work[k]
			n.hosts[i].Step(*b)
			hbs += heartbeats(b)
			b.Release() // delivered once: its entries go back to the senders
		}
		if hbs > 0 {
			n.hbs.Add(hbs)
		}
	}
}

// crash stops node crashNode and loses every batch to it, after noting
// in cr the groups it leads (voterSets[g%nodes] are group g's voters).
func (n *hostNet) crash(cr *crash, voterSets [][]election.ID) {
	h := n.hosts[crashNode-1]
	for g := range cr.lost {
		if !slices.Contains(voterSets[g%len(voterSets)], crashNode) {
			continue
		}
		if st, err := h.Status(multiraft.GroupID(g)); err == nil && st.Status.Role == election.Leader {
			cr.lost[g] = true
		}
	}
	cr.start.Store(time.Now().UnixNano())
	n.queues[crashNode-1].close()
	h.Stop()
}

// close drops what q holds and will be sent, and ends its loop.
func (q *inbox) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (n *hostNet) close() {
	for _, q := range n.queues {
		q.close()
	}
	n.wg.Wait()
}

// heapLive returns the live heap after a full GC.
func heapLive() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// runHost is Run for ImplHost.
func runHost(cfg Config) (Result, error) {
	nodes, groups := cfg.Nodes, cfg.Groups
	replicas := min(hostReplicas, nodes)
	et, hb := cfg.hostElectionTimeout(), cfg.hostHeartbeat()
	heap0 := heapLive()

	w, err := wheel.New(cfg.wheelConfig())
	if err != nil {
		return Result{}, err
	}
	defer func() {
		w.Stop()
		<-w.Done()
	}()
	var elections, stepDowns, timeouts atomic.Int64
	var measuring atomic.Bool
	ph := newPhases(cfg)
	var cr *crash
	if cfg.CrashAt > 0 {
		cr = newCrash(groups)
	}
	observe := func(g multiraft.GroupID, e election.Event) {
		if !measuring.Load() {
			return
		}
		switch {
		case e.Type == election.EventLeaderElected && cr != nil:
			cr.elected(int(g), e.Node)
		case e.Type == election.EventElectionStart:
			elections.Add(1)
			ph.election()
			if cr != nil {
				cr.election(int(g))
			}
			if e.Reason == election.ReasonTimeout {
				timeouts.Add(1)
			}
		case e.Type == election.EventStepDown && strings.HasPrefix(e.Reason, election.ReasonCheckQuorum):
			stepDowns.Add(1)
			ph.stepDown()
		}
	}
	net := &hostNet{hosts: make([]*multiraft.Host, nodes), queues: make([]*inbox, nodes)}
	// sinks count the leaders' CheckQuorum checks, each its host's (a
	// counter shared by the hosts' ticks would make them wait for each
	// other's cache line).
	sinks := make([]*hostCheckSink, nodes)
	checks := func() (n int64) {
		for _, s := range sinks {
			n += s.checks.Load()
		}
		return n
	}
	lateRun := &run{cfg: cfg, base: time.Now()}
	lateSample := &sampler{}
	for i := range nodes {
		hc := multiraft.DefaultConfig()
		hc.ID = election.ID(i + 1)
		hc.Election.ElectionTimeout = et
		hc.Election.HeartbeatInterval = hb
		sinks[i] = &hostCheckSink{r: lateRun, s: lateSample}
		hc.Election.Metrics = sinks[i]
		hc.Election.Logger = quietLogger
		hc.Coalesce = cfg.Coalesce
		// At least the lease (0.9 election timeouts) plus the coalescing
		// window (half a heartbeat period), which the default (one
		// election timeout) is not at these timings.
		hc.LivenessTimeout = et + hb
		// Ten touch periods: an active group never hibernates.
		hc.HibernateAfter = 10 * hb
		hc.Observer = observe
		h, err := multiraft.NewHost(hc, w, multiraft.TransportFunc(net.send))
		if err != nil {
			return Result{}, fmt.Errorf("raftmix: host %d: %w", i+1, err)
		}
		net.hosts[i] = h
		net.queues[i] = &inbox{signal: make(chan struct{}, 1)}
	}
	stopHosts := func() {
		for _, h := range net.hosts {
			h.Stop()
		}
	}
	// The hosts' liveness timers run from now on: deliver before adding
	// groups, or a long build would look like silent peers.
	for i := range nodes {
		net.wg.Add(1)
		go net.loop(i)
	}
	defer net.close()
	// Group g's replicas live on nodes g, g+1, ... (mod nodes); its leader
	// is the first, so leaders are balanced.
	voterSets := make([][]election.ID, nodes)
	for i := range nodes {
		for k := range replicas {
			voterSets[i] = append(voterSets[i], election.ID((i+k)%nodes+1))
		}
	}
	for g := range groups {
		vs := voterSets[g%nodes]
		for _, v := range vs {
			err := net.hosts[v-1].AddGroup(multiraft.GroupConfig{ID: multiraft.GroupID(g), Voters: vs,
				Storage: election.NewMemoryStorage(), Leader: vs[0]})
			if err != nil {
				stopHosts()
				return Result{}, fmt.Errorf("raftmix: group %d on node %d: %w", g, v, err)
			}
		}
	}
	defer stopHosts()
	heap1 := heapLive()

	// The active groups, spread evenly over the group IDs (and so over
	// the leaders' nodes).
	nActive := int(math.Round(cfg.Active * float64(groups)))
	active := make([]int, nActive)
	for k := range active {
		active[k] = int(int64(k) * int64(groups) / int64(nActive))
	}
	// The toucher: every heartbeat interval it touches every replica of
	// every active group, in batches every 250µs, as the raftmix
	// heartbeat goroutine delivers heartbeats.
	var touches atomic.Int64
	var maxRound atomic.Int64 // the toucher's longest round over the active groups
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if nActive == 0 {
			<-stop
			return
		}
		visited, roundStart := 0, time.Now()
		paced(nActive, hb, stop, func(first, batch int) {
			var n int64
			for i := range batch {
				g := active[(first+i)%nActive]
				for _, v := range voterSets[g%nodes] {
					_ = net.hosts[v-1].Touch(multiraft.GroupID(g))
					n++
				}
			}
			touches.Add(n)
			if visited += batch; visited >= nActive {
				visited -= nActive
				if d := time.Since(roundStart); measuring.Load() && int64(d) > maxRound.Load() {
					maxRound.Store(int64(d))
				}
				roundStart = time.Now()
			}
		})
	}()

	type snap struct {
		st          multiraft.Stats
		ws          wheel.Stats
		touch       int64
		checks, hbs int64
		behind      int // hosts behind
	}
	take := func() snap {
		var s snap
		for _, h := range net.hosts {
			hs := h.Stats()
			s.st.Messages += hs.Messages
			s.st.Batches += hs.Batches
			s.st.TickBatches += hs.TickBatches
			s.st.AnswerBatches += hs.AnswerBatches
			s.st.LooseBatches += hs.LooseBatches
			s.st.ControlBatches += hs.ControlBatches
			s.st.DirectBatches += hs.DirectBatches
			s.st.Liveness += hs.Liveness
			s.st.Delivered += hs.Delivered
			s.st.Hibernations += hs.Hibernations
			s.st.Wakes += hs.Wakes
			s.st.HibernateRefused += hs.HibernateRefused
			s.st.PeersDown += hs.PeersDown
			s.st.LivenessWakes += hs.LivenessWakes
			s.st.Hibernating += hs.Hibernating
			s.st.Groups += hs.Groups
			s.st.BehindSpells += hs.BehindSpells
			s.st.LaggingSkips += hs.LaggingSkips
			s.st.MaxLateness = max(s.st.MaxLateness, hs.MaxLateness)
			if hs.Behind {
				s.behind++
			}
		}
		s.ws, s.touch = w.Stats(), touches.Load()
		s.checks, s.hbs = checks(), net.hbs.Load()
		return s
	}
	sd := et / 2 // the leaders' step-down interval (election's default)
	lr := lateRun
	if cfg.Coalesce {
		sd = hb - hb/10 // the hosts' tick (multiraft's heartbeatTick)
	} else {
		probes, err := startProbes(cfg, w, sd, nActive)
		if err != nil {
			close(stop)
			<-done
			return Result{}, err
		}
		defer probes.stop()
		lr = probes.r
	}
	time.Sleep(cfg.Warmup)
	lr.measuring.Store(true)
	measuring.Store(true)
	var maxStall atomic.Int64
	probeDone := make(chan struct{})
	go func() { // the stall probe
		defer close(probeDone)
		for measuring.Load() {
			t := time.Now()
			time.Sleep(time.Millisecond)
			d := int64(time.Since(t) - time.Millisecond)
			if d > maxStall.Load() {
				maxStall.Store(d)
			}
			ph.stall(time.Duration(d))
		}
	}()
	ph.counts = func() phaseCounts {
		c := phaseCounts{hbs: net.hbs.Load(), checks: checks()}
		for _, h := range net.hosts {
			st := h.Stats()
			c.spells += st.BehindSpells
			c.skips += st.LaggingSkips
		}
		return c
	}
	ph.hbDue = float64(nActive*(replicas-1)) / hb.Seconds()
	ph.checkDue = float64(nActive) / sd.Seconds()
	s0 := take()
	cpu0, wall0 := processCPU(), time.Now()
	crashed := make(chan struct{})
	if cr != nil {
		go func() {
			defer close(crashed)
			time.Sleep(time.Until(wall0.Add(cfg.CrashAt)))
			net.crash(cr, voterSets)
		}()
	} else {
		close(crashed)
	}
	var phases *PhaseResult
	if cfg.BurnCores > 0 {
		pr, err := ph.window(cfg)
		if err != nil {
			measuring.Store(false)
			<-probeDone
			close(stop)
			<-done
			return Result{}, err
		}
		phases = &pr
	} else {
		time.Sleep(cfg.Duration)
	}
	<-crashed
	cpu1, wall1 := processCPU(), time.Now()
	s1 := take()
	measuring.Store(false)
	lr.measuring.Store(false)
	<-probeDone
	close(stop)
	<-done
	heap2 := heapLive()

	secs := wall1.Sub(wall0).Seconds()
	hr := &HostResult{
		Nodes: nodes, Replicas: replicas, Active: cfg.Active, ActiveGroups: nActive, Coalesce: cfg.Coalesce,
		HeapPerGroupAsleep:    (float64(heap1) - float64(heap0)) / float64(groups),
		HeapPerReplicaAsleep:  (float64(heap1) - float64(heap0)) / float64(groups*replicas),
		HeapPerGroupEnd:       (float64(heap2) - float64(heap0)) / float64(groups),
		AwakeReplicas:         s1.st.Groups - s1.st.Hibernating,
		MessagesPerSec:        float64(s1.st.Messages-s0.st.Messages) / secs,
		BatchesPerSec:         float64(s1.st.Batches-s0.st.Batches) / secs,
		TickBatchesPerSec:     float64(s1.st.TickBatches-s0.st.TickBatches) / secs,
		AnswerBatchesPerSec:   float64(s1.st.AnswerBatches-s0.st.AnswerBatches) / secs,
		LooseBatchesPerSec:    float64(s1.st.LooseBatches-s0.st.LooseBatches) / secs,
		ControlBatchesPerSec:  float64(s1.st.ControlBatches-s0.st.ControlBatches) / secs,
		DirectBatchesPerSec:   float64(s1.st.DirectBatches-s0.st.DirectBatches) / secs,
		LivenessBatchesPerSec: float64(s1.st.Liveness-s0.st.Liveness) / secs,
		Delivered:             s1.st.Delivered - s0.st.Delivered,
		TimersFired:           s1.ws.Fired - s0.ws.Fired,
		Touches:               s1.touch - s0.touch,
		Hibernations:          s1.st.Hibernations - s0.st.Hibernations,
		Wakes:                 s1.st.Wakes - s0.st.Wakes,
		HibernateRefused:      s1.st.HibernateRefused - s0.st.HibernateRefused,
		PeersDown:             s1.st.PeersDown,
		LivenessWakes:         s1.st.LivenessWakes,
		MaxStallMs:            float64(maxStall.Load()) / 1e6,
		MaxTouchRoundMs:       float64(maxRound.Load()) / 1e6,
		LateFiresPerSec:       float64(s1.ws.LateFires-s0.ws.LateFires) / secs,
		MaxLatenessMs:         float64(s1.ws.MaxLateness) / 1e6,
		CheckQuorumStepDowns:  stepDowns.Load(),
		BehindSpells:          s1.st.BehindSpells - s0.st.BehindSpells,
		LaggingSkips:          s1.st.LaggingSkips - s0.st.LaggingSkips,
		BehindAtEnd:           s1.behind,
		MaxSweepLatenessMs:    float64(s1.st.MaxLateness) / 1e6,
		TimeoutElections:      timeouts.Load(),
	}
	if hr.BatchesPerSec > 0 {
		hr.Coalescing = hr.MessagesPerSec / hr.BatchesPerSec
	}
	res := Result{
		Impl:              ImplHost,
		Groups:            groups,
		Seconds:           secs,
		Heartbeats:        s1.hbs - s0.hbs,
		HeartbeatPace:     float64(s1.hbs-s0.hbs) / (secs * float64(nActive*(replicas-1)) / hb.Seconds()),
		StepDownFires:     s1.checks - s0.checks,
		StepDownDue:       int64(math.Round(secs * float64(nActive) / sd.Seconds())),
		SpuriousElections: elections.Load(),
		WakeupsPerSec:     float64(s1.ws.Wakeups-s0.ws.Wakeups) / secs,
		TickMs:            float64(w.Tick()) / 1e6,
		WheelPanics:       s1.ws.Panics,
		Host:              hr,
		Phases:            phases,
	}
	if cr != nil {
		r := cr.result(cfg.CrashAt, et)
		res.Crash = &r
	}
	if cpu0 >= 0 && cpu1 >= 0 {
		res.Cores = (cpu1 - cpu0).Seconds() / secs
	} else {
		res.Cores = math.NaN()
	}
	if nActive == 0 {
		res.HeartbeatPace = 0
	}
	res.StepDownDelivered = float64(res.StepDownFires) / float64(max(res.StepDownDue, 1))
	res.StepDownRate = res.StepDownDelivered
	if cfg.Coalesce {
		lateSample.mu.Lock()
		lr.groups = []group{{sample: lateSample}}
		lateSample.mu.Unlock()
	}
	lr.lateness(&res)
	events := int64(hr.Delivered) + hr.TimersFired + hr.Touches
	res.CPUNsPerEvent = float64(cpu1-cpu0) / float64(max(events, 1))
	return res, nil
}

// hostCheckSink is a host's metrics sink in an ImplHost run: it counts
// the leaders' CheckQuorum checks, and with Coalesce samples the
// lateness of every sampleChecks-th of them (see ImplHost). The host's
// tick, and every check judged in it, run on the wheel's driver.
type hostCheckSink struct {
	checkSink // the methods of no interest; AddSample* below
	checks    atomic.Int64
	r         *run
	s         *sampler
	n         atomic.Int64
	// tickAt is when (r.since()) the host's last tick began, tickLate how
	// late it began (ns).
	tickAt, tickLate atomic.Int64
}

// sampleChecks is how often a hostCheckSink samples a check's lateness.
const sampleChecks = 16

// isTickLateness reports whether key is raftick.host.tick_lateness.
func isTickLateness(key []string) bool {
	return len(key) == 3 && key[2] == "tick_lateness" && key[1] == "host" && key[0] == "raftick"
}

func (s *hostCheckSink) AddSampleWithLabels(key []string, v float32, _ []metrics.Label) {
	switch {
	case isCheck(key):
		s.checks.Add(1)
		if s.n.Add(1)%sampleChecks == 0 && s.r.measuring.Load() {
			late := s.tickLate.Load() + s.r.since() - s.tickAt.Load()
			s.s.mu.Lock()
			s.s.late = append(s.s.late, late)
			s.s.mu.Unlock()
		}
	case isTickLateness(key):
		s.tickAt.Store(s.r.since())
		s.tickLate.Store(int64(float64(v) * 1e6))
	}
}

func (s *hostCheckSink) AddSample(key []string, v float32) { s.AddSampleWithLabels(key, v, nil) }

// isQuorumHeard reports whether key is raftick.host.quorum_heard.
func isQuorumHeard(key []string) bool {
	return len(key) == 3 && key[2] == "quorum_heard" && key[1] == "host" && key[0] == "raftick"
}

// IncrCounterWithLabels counts the checks a host's tick passed at its
// start (raftick.host.quorum_heard, after the tick): each was judged as
// late as the tick began, and every sampleChecks-th is sampled so.
func (s *hostCheckSink) IncrCounterWithLabels(key []string, v float32, _ []metrics.Label) {
	if !isQuorumHeard(key) {
		return
	}
	k := int64(v)
	s.checks.Add(k)
	n := s.n.Add(k)
	samples := n/sampleChecks - (n-k)/sampleChecks
	if samples == 0 || !s.r.measuring.Load() {
		return
	}
	late := s.tickLate.Load()
	s.s.mu.Lock()
	for range samples {
		s.s.late = append(s.s.late, late)
	}
	s.s.mu.Unlock()
}

func (s *hostCheckSink) IncrCounter(key []string, v float32) { s.IncrCounterWithLabels(key, v, nil) }

// probes are ImplHost's lateness probes: one repeated.Timer per
// Config.SampleEvery groups on the hosts' wheel, each firing every
// step-down interval, sampled as the timer implementations' step-down
// timers are.
type probes struct {
	r      *run
	timers []repeated.Timer
}

// startProbes starts the probes of a run of cfg with active groups on w,
// one per cfg.SampleEvery active groups (as many awake leaders have
// step-down timers), spread over one period.
func startProbes(cfg Config, w *wheel.Wheel, period time.Duration, active int) (*probes, error) {
	n := (active + cfg.SampleEvery - 1) / cfg.SampleEvery
	p := &probes{
		r:      &run{cfg: cfg, period: period, latePeriod: period, groups: make([]group, n), base: time.Now()},
		timers: make([]repeated.Timer, n),
	}
	for i := range p.r.groups {
		g := &p.r.groups[i]
		g.sample = &sampler{late: make([]int64, 0, int(cfg.Duration/period)+16)}
		if err := p.timers[i].Init(w, "probe", period, func() { p.r.stepDownNow(g) }, repeated.WithJitter(repeated.None())); err != nil {
			p.stop()
			return nil, fmt.Errorf("raftmix: probe %d: %w", i, err)
		}
	}
	p.r.startAll(p)
	return p, nil
}

func (p *probes) start(i int)    { p.timers[i].Start() }
func (p *probes) heartbeat(int)  {}
func (p *probes) wakeups() int64 { return -1 }

func (p *probes) stop() {
	for i := range p.timers {
		p.timers[i].Destroy()
	}
}
