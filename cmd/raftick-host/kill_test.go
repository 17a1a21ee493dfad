package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/election/electiontest"
	"github.com/raftick/raftick/multiraft"
)

// The real-process test's knobs. The defaults are the short variant that
// go test ./... runs; the full one is
//
//	go test ./cmd/raftick-host -run TestKill9 -timeout 60m -v -args -rounds 20 -groups 10000 -mem
var (
	flagRounds  = flag.Int("rounds", 2, "TestKill9: kill/restart rounds")
	flagGroups  = flag.Int("groups", 300, "TestKill9: groups")
	flagET      = flag.Duration("et", 500*time.Millisecond, "TestKill9: election timeout")
	flagHB      = flag.Duration("hb", 50*time.Millisecond, "TestKill9: heartbeat interval")
	flagSeed    = flag.Uint64("seed", 0, "TestKill9: seed of the kill points (0: from the clock, printed)")
	flagMem     = flag.Bool("mem", false, "TestKill9: also run the same kill on a MemNetwork in-process, for the failover ratio")
	flagSettleT = flag.Duration("settle", 60*time.Second, "TestKill9: how long to wait for every group to be led")
	flagKeep    = flag.Bool("keep", false, "TestKill9: keep the processes' data directories and logs (the path is logged)")
)

// proc is one raftick-host process of the test's cluster.
type proc struct {
	id     election.ID
	args   []string
	dir    string
	cmd    *exec.Cmd
	exited chan error
	mu     sync.Mutex
	last   status // latest status line
	ready  bool
}

func (p *proc) start(t *testing.T, bin string, extra ...string) {
	t.Helper()
	cmd := exec.Command(bin, append(slices.Clone(p.args), extra...)...)
	stderr, err := os.OpenFile(filepath.Join(p.dir, "stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p.mu.Lock()
	p.cmd, p.ready, p.last = cmd, false, status{}
	p.exited = make(chan error, 1)
	p.mu.Unlock()
	exited := p.exited
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var st status
			if json.Unmarshal(sc.Bytes(), &st) != nil {
				continue
			}
			p.mu.Lock()
			p.last = st
			p.ready = p.ready || st.Ready
			p.mu.Unlock()
		}
		exited <- cmd.Wait()
		_ = stderr.Close()
	}()
}

func (p *proc) status() (status, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.ready
}

func (p *proc) kill(t *testing.T) {
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.exited
}

// freePorts reserves n loopback addresses.
func freePorts(t *testing.T, n int) []string {
	var addrs []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	for _, ln := range lns {
		_ = ln.Close()
	}
	return addrs
}

// TestKill9 runs three raftick-host processes on loopback and, round
// after round, kills one with SIGKILL (at a random point of steady
// state, or inside a hard-state write with --crash-at-write), measures
// the failover of every group it led, restarts it on its data directory
// and waits for every group to be led. At the end it checks election
// safety from the processes' event logs and the hard states they
// recovered at each start: no term went back, no vote was cast twice in
// a term, no two leaders in a term, every leader had a majority.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; runs without -short")
	}
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d; reproduce the kill points with: go test ./cmd/raftick-host -run TestKill9 -args -seed %d -rounds %d -groups %d -et %v -hb %v",
		seed, seed, *flagRounds, *flagGroups, *flagET, *flagHB)
	rng := rand.New(rand.NewPCG(seed, 46))
	groups := *flagGroups
	dir := t.TempDir()
	if *flagKeep {
		var err error
		dir, err = os.MkdirTemp("", "raftick-kill9-")
		require.NoError(t, err)
		t.Logf("data directories and logs in %s", dir)
	}
	bin := filepath.Join(dir, "raftick-host")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	addrs := freePorts(t, 3)
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, a))
	}
	// Status lines visit every group: less often for many.
	report := 100 * time.Millisecond
	if groups > 2000 {
		report = 500 * time.Millisecond
	}
	procs := map[election.ID]*proc{}
	for i := range 3 {
		id := election.ID(i + 1)
		pdir := filepath.Join(dir, fmt.Sprint(id))
		require.NoError(t, os.MkdirAll(pdir, 0o755))
		p := &proc{id: id, dir: pdir, args: []string{"--id", fmt.Sprint(id), "--peers", strings.Join(peers, ","),
			"--groups", fmt.Sprint(groups), "--data", pdir, "--election-timeout", flagET.String(),
			"--heartbeat", flagHB.String(), "--report", report.String()}}
		procs[id] = p
		p.start(t, bin)
	}
	defer func() {
		for _, p := range procs {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
	}()
	allLed := func(alive []election.ID) func() bool {
		return func() bool {
			leading := 0
			for _, id := range alive {
				st, ready := procs[id].status()
				if !ready || st.Led != groups {
					return false
				}
				leading += st.Leading
			}
			return leading == groups
		}
	}
	ids := []election.ID{1, 2, 3}
	// waitLed waits until every group is led, or fails with what each
	// process last reported.
	waitLed := func(alive []election.ID, format string, args ...any) {
		t.Helper()
		if assert.Eventually(t, allLed(alive), *flagSettleT, 20*time.Millisecond) {
			return
		}
		for _, id := range alive {
			st, ready := procs[id].status()
			t.Logf("node %d: ready %v, last status %+v", id, ready, st)
		}
		t.Fatalf(format, args...)
	}
	waitLed(ids, "cluster never came up")

	var rounds []round
	for r := range *flagRounds {
		// The victim leads something (a node that lost all its groups in
		// the last round has none to fail over).
		var leaders []election.ID
		for _, id := range ids {
			if st, _ := procs[id].status(); st.Leading > 0 {
				leaders = append(leaders, id)
			}
		}
		victim := leaders[rng.IntN(len(leaders))]
		var alive []election.ID
		for _, id := range ids {
			if id != victim {
				alive = append(alive, id)
			}
		}
		// Steady state: every group asleep (as in memFailover), then
		// a random point of the heartbeat interval.
		require.Eventually(t, func() bool {
			for _, id := range ids {
				if st, _ := procs[id].status(); st.Hibernating != groups {
					return false
				}
			}
			return true
		}, *flagSettleT, 20*time.Millisecond, "round %d: groups never all hibernated", r)
		time.Sleep(time.Duration(rng.Int64N(int64(*flagHB) * 2)))
		rd := round{n: r, victim: victim, kill: time.Now().UnixNano()}
		procs[victim].kill(t)
		waitLed(alive, "round %d: survivors never led every group", r)
		rd.restart = time.Now().UnixNano()
		// Every other round the restarted process dies again inside
		// one of its first three hard-state writes (group commits: it
		// adopts the terms the survivors moved to), before or after
		// the write.
		if r%2 == 1 {
			rd.crashAt, rd.crashBefore = 1+rng.IntN(3), rng.IntN(2) == 0
			procs[victim].start(t, bin, "--crash-at-write", fmt.Sprint(rd.crashAt), fmt.Sprintf("--crash-before-write=%v", rd.crashBefore))
			select {
			case <-procs[victim].exited:
				rd.crashed = true
			case <-time.After(*flagSettleT):
				// It wrote fewer states than asked: killed, and
				// restarted below as if it had crashed.
				procs[victim].kill(t)
			}
		}
		procs[victim].start(t, bin)
		waitLed(ids, "round %d: restarted cluster never led every group", r)
		t.Logf("round %d: killed node %d%s; survivors led every group %v after the kill", r, victim, rd.note(),
			time.Duration(rd.restart-rd.kill).Round(time.Millisecond))
		rounds = append(rounds, rd)
	}
	for _, id := range ids {
		require.NoError(t, procs[id].cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, <-procs[id].exited, "node %d did not exit cleanly on SIGTERM", id)
	}

	res := analyze(t, dir, groups, rounds)
	all := []time.Duration{}
	for _, rd := range res {
		t.Logf("round %d: node %d%s: %d groups lost, failover p50 %v p99 %v max %v; elections in other groups %d, after the restart %d",
			rd.n, rd.victim, rd.note(), len(rd.failovers), pct(rd.failovers, 50), pct(rd.failovers, 99), pct(rd.failovers, 100),
			rd.otherElections, rd.restartElections)
		for _, w := range rd.why {
			t.Logf("  %s", w)
		}
		all = append(all, rd.failovers...)
	}
	t.Logf("all rounds: %d failovers, p50 %v p99 %v max %v", len(all), pct(all, 50), pct(all, 99), pct(all, 100))
	for _, rd := range res {
		require.Equal(t, 0, rd.otherElections, "round %d: elections in groups that kept their leader", rd.n)
	}
	if *flagMem {
		mem := memFailover(t, *flagRounds, groups, *flagET, *flagHB, seed)
		t.Logf("MemNetwork, same config in one process: %d failovers, p50 %v p99 %v max %v; TCP/mem p99 ratio %.2f",
			len(mem), pct(mem, 50), pct(mem, 99), pct(mem, 100), float64(pct(all, 99))/float64(pct(mem, 99)))
	}
}

// round is one kill/restart of the test.
type round struct {
	n              int
	victim         election.ID
	kill, restart  int64 // Unix ns
	crashAt        int
	crashBefore    bool
	crashed        bool
	failovers      []time.Duration
	otherElections int
	// restartElections counts elections from the restart to the next
	// kill (or the end): the restarted process disrupting groups, or
	// lost groups still electing.
	restartElections int
	why              []string // the first elections counted in otherElections
}

func (r round) note() string {
	switch {
	case r.crashed:
		return fmt.Sprintf(" (restart died in write %d, before=%v)", r.crashAt, r.crashBefore)
	case r.crashAt > 0:
		return fmt.Sprintf(" (restart asked to die in write %d: never reached)", r.crashAt)
	}
	return ""
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// analyze reads the three event logs, checks election safety with
// electiontest's checker and the recovered hard states, and measures each
// round's failovers: for every group whose leader at the kill was the
// victim, the time from the kill to the first LeaderElected of another
// node; and counts the elections between kill and restart in the other
// groups.
//
// Events may be logged before their hard state is durable (a deferred
// Store logs them at once and holds the messages): those whose state
// never became durable before the process died were never seen by
// anyone, and are left out (see durableEvents). Every hard state a
// process recovers must hold what it had written durably before it died.
func analyze(t *testing.T, dir string, groups int, rounds []round) []round {
	var recs []record
	dropped := 0
	for id := 1; id <= 3; id++ {
		f, err := os.Open(filepath.Join(dir, fmt.Sprint(id), "events.jsonl"))
		require.NoError(t, err)
		var node []record
		require.NoError(t, readEvents(f, func(r record) error { node = append(node, r); return nil }))
		_ = f.Close()
		kept, storeErrs := durableEvents(node)
		require.Empty(t, storeErrs, "node %d: hard states recovered against those written", id)
		states := 0
		for _, r := range node {
			if r.Type == typeRecovered || r.Type == typeDurable {
				states++
			}
		}
		dropped += len(node) - states - len(kept)
		recs = append(recs, kept...)
	}
	t.Logf("events: %d checked, %d left out (their state was not durable when the process died)", len(recs), dropped)
	slices.SortStableFunc(recs, func(a, b record) int { return cmpInt(a.T, b.T) })
	voters := []election.ID{1, 2, 3}
	check := electiontest.NewGroups[multiraft.GroupID](func(multiraft.GroupID) int { return 3 })
	leader := make([]election.ID, groups+1)
	leaderTerm := make([]uint64, groups+1)
	for g := 1; g <= groups; g++ {
		leader[g], leaderTerm[g] = bootstrapLeader(voters, multiraft.GroupID(g)), 1
		check.Group(multiraft.GroupID(g)).SetLeader(1, leader[g])
	}
	ri := 0
	lastStepDown := map[uint64]string{}
	var lost map[uint64]time.Duration // group -> 0 until failed over
	var lostRound *round
	startRound := func(i int) {
		rd := &rounds[i]
		lost = map[uint64]time.Duration{}
		for g := 1; g <= groups; g++ {
			if leader[g] == rd.victim {
				lost[uint64(g)] = 0
			}
		}
		lostRound = rd
	}
	finishRound := func() {
		if lostRound == nil {
			return
		}
		for g, d := range lost {
			if d == 0 {
				t.Errorf("round %d: group %d never failed over", lostRound.n, g)
				continue
			}
			lostRound.failovers = append(lostRound.failovers, d)
		}
		lostRound = nil
	}
	for _, r := range recs {
		for ri < len(rounds) && r.T > rounds[ri].kill {
			finishRound()
			startRound(ri)
			ri++
		}
		e, err := toEvent(r)
		require.NoError(t, err)
		check.Observe(multiraft.GroupID(r.Group), e)
		// The group's leader is the winner of its highest term: a
		// deposed leader's win may be logged after a later term's
		// (the two never met).
		if e.Type == election.EventLeaderElected && e.Term >= leaderTerm[r.Group] {
			leader[r.Group], leaderTerm[r.Group] = e.Node, e.Term
		}
		if e.Type == election.EventStepDown {
			lastStepDown[r.Group] = fmt.Sprintf("node %d stepped down in term %d (%s) at kill%+v", r.Node, r.Term, r.Reason,
				time.Duration(r.T-rounds[max(ri-1, 0)].kill).Round(time.Millisecond))
		}
		if lostRound == nil {
			continue
		}
		d, isLost := lost[r.Group]
		switch {
		case isLost && d == 0 && e.Type == election.EventLeaderElected && e.Node != lostRound.victim:
			lost[r.Group] = time.Duration(r.T - lostRound.kill)
		case !isLost && r.T < lostRound.restart && e.Type == election.EventElectionStart:
			lostRound.otherElections++
			if len(lostRound.why) < 3 {
				lostRound.why = append(lostRound.why, fmt.Sprintf("g%d: node %d campaigns for term %d (%s) %v after the kill; %s",
					r.Group, r.Node, r.Term, r.Reason, time.Duration(r.T-lostRound.kill).Round(time.Millisecond), lastStepDown[r.Group]))
			}
		case r.T >= lostRound.restart && e.Type == election.EventElectionStart:
			lostRound.restartElections++
		}
	}
	finishRound()
	require.NoError(t, check.Err())
	return rounds
}

// hardState is a term and the vote cast in it.
type hardState struct {
	term uint64
	vote election.ID
}

// durableEvents takes one node's log in file order and returns its
// election events whose hard state was durable before the process died,
// and the recovered states that lost a durable write.
//
// A life of the process (a segment, per group) starts at the group's
// Recovered record; the group's durable state at the end of the life is
// the latest Durable record in it (or what it recovered). An event of
// that life is kept if that state covers it: a vote granted in term t
// for p if the durable term is above t, or is t with the vote p; any
// other event of term t if the durable term is at least t. An event not
// covered was logged before its state was written (a deferred Store) and
// the process died first: the node sent nothing that depended on it, so
// it is not part of the group's history. The next Recovered state must
// then be at least the durable one: a higher term, or the same term with
// the same vote (or a vote where there was none).
func durableEvents(recs []record) (kept []record, storeErrs []string) {
	type life struct {
		g uint64
		n int
	}
	lives := map[uint64]int{} // group -> number of Recovered records seen
	durable := map[life]hardState{}
	lifeOf := make([]int, len(recs))
	for i, r := range recs {
		switch r.Type {
		case typeRecovered:
			rec := hardState{r.Term, r.Leader}
			if lives[r.Group] > 0 {
				prev := durable[life{r.Group, lives[r.Group]}]
				if rec.term < prev.term || rec.term == prev.term && prev.vote != election.None && rec.vote != prev.vote {
					storeErrs = append(storeErrs, fmt.Sprintf("group %d: recovered term %d vote %d, but had written term %d vote %d",
						r.Group, rec.term, rec.vote, prev.term, prev.vote))
				}
			}
			lives[r.Group]++
			durable[life{r.Group, lives[r.Group]}] = rec
		case typeDurable:
			l := life{r.Group, lives[r.Group]}
			if d := durable[l]; r.Term > d.term || r.Term == d.term && r.Leader != election.None {
				durable[l] = hardState{r.Term, r.Leader}
			}
		}
		lifeOf[i] = lives[r.Group]
	}
	for i, r := range recs {
		if r.Type == typeRecovered || r.Type == typeDurable {
			continue
		}
		if r.PreVote {
			kept = append(kept, r) // changes no state
			continue
		}
		d := durable[life{r.Group, lifeOf[i]}]
		covered := d.term >= r.Term
		if r.Type == election.EventVoteGranted.String() {
			covered = d.term > r.Term || d.term == r.Term && d.vote == r.Peer
		}
		if covered {
			kept = append(kept, r)
		}
	}
	return kept, storeErrs
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
