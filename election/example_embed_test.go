package election_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// logEntry is one entry of the replicated log.
type logEntry struct {
	Term uint64
	Cmd  string
}

// appendReq and appendResp are the log layer's AppendEntries. To stay
// short, the leader sends its whole log and followers adopt it; a real log
// sends the suffix after each follower's match index.
type appendReq struct {
	Term    uint64
	Leader  election.ID
	Entries []logEntry
	Commit  int
}

type appendResp struct {
	Term  uint64
	OK    bool
	Match int
}

// replica is one server of a replicated log: an election.Node owns term,
// vote and leadership; the replica owns the entries. The node reads the log
// through Last (the election.LogView), so the replica never calls the node
// while holding its own lock.
type replica struct {
	node   *election.Node
	mu     sync.Mutex
	log    []logEntry
	commit int
}

// Last implements election.LogView.
func (r *replica) Last() (index, term uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.log) == 0 {
		return 0, 0
	}
	return uint64(len(r.log)), r.log[len(r.log)-1].Term
}

// handleAppend is a follower's side of AppendEntries.
func (r *replica) handleAppend(req appendReq) appendResp {
	st := r.node.Status()
	if req.Term < st.Term {
		return appendResp{Term: st.Term} // tells a stale leader our term
	}
	if req.Term > st.Term {
		_ = r.node.ObserveTerm(req.Term, req.Leader) // a newer leader: follow its term
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = slices.Clone(req.Entries)
	r.commit = max(r.commit, min(req.Commit, len(r.log)))
	return appendResp{Term: req.Term, OK: true, Match: len(r.log)}
}

// kvGroup is three replicas on one virtual wheel; election messages travel
// over a MemNetwork, AppendEntries by direct calls over the same links.
type kvGroup struct {
	v        *wheel.Virtual
	net      *election.MemNetwork
	replicas map[election.ID]*replica
	ids      []election.ID
}

// propose appends cmd on the leader id and replicates it; it reports
// whether a quorum stored it (the entry is then committed).
func (g *kvGroup) propose(id election.ID, cmd string) bool {
	r := g.replicas[id]
	st := r.node.Status()
	if st.Role != election.Leader {
		return false
	}
	r.mu.Lock()
	r.log = append(r.log, logEntry{Term: st.Term, Cmd: cmd})
	idx := len(r.log)
	r.mu.Unlock()
	stored := 1
	for _, p := range g.ids {
		if p == id || !g.net.Connected(id, p) {
			continue
		}
		r.mu.Lock()
		req := appendReq{Term: st.Term, Leader: id, Entries: slices.Clone(r.log), Commit: r.commit}
		r.mu.Unlock()
		resp := g.replicas[p].handleAppend(req)
		if resp.Term > st.Term {
			// A follower moved on: the replication path tells the node.
			_ = r.node.ObserveTerm(resp.Term, p)
			fmt.Printf("n%d learnt term %d from n%d's AppendEntries answer: %v\n", id, resp.Term, p, r.node.Status().Role)
			return false
		}
		if resp.OK && resp.Match >= idx {
			stored++
		}
	}
	if stored < len(g.ids)/2+1 {
		return false
	}
	r.mu.Lock()
	r.commit = idx
	r.mu.Unlock()
	return true
}

func (g *kvGroup) leader() election.ID {
	for _, id := range g.ids {
		if st := g.replicas[id].node.Status(); st.Role == election.Leader {
			return id
		}
	}
	return election.None
}

func (g *kvGroup) print() {
	for _, id := range g.ids {
		r := g.replicas[id]
		st := r.node.Status()
		r.mu.Lock()
		var cmds []string
		for _, e := range r.log {
			cmds = append(cmds, fmt.Sprintf("%s@%d", e.Cmd, e.Term))
		}
		fmt.Printf("  n%d %-9v term %d log [%s]\n", id, st.Role, st.Term, strings.Join(cmds, " "))
		r.mu.Unlock()
	}
}

// Embedding election in a full Raft: three replicas of a log, each an
// election.Node plus the entries, on a virtual wheel. The leader commits
// two entries; partitioned away, it keeps believing it leads while the
// others elect a new leader (whose up-to-date log wins the votes through
// LogView). When the link heals, the old leader's AppendEntries is
// answered with the newer term, and ObserveTerm makes it step down.
func Example_embedding() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer v.Stop()
	g := &kvGroup{v: v, net: election.NewMemNetwork(v.Wheel, time.Millisecond),
		replicas: map[election.ID]*replica{}, ids: []election.ID{1, 2, 3}}
	rng := rand.New(rand.NewPCG(4, 2))
	for _, id := range g.ids {
		cfg := election.DefaultConfig()
		cfg.ID, cfg.Voters = id, g.ids
		cfg.ElectionTimeout = 150 * time.Millisecond
		cfg.CheckQuorum = false // so that the partitioned leader keeps leading
		cfg.Rand = rng
		r := &replica{}
		r.node, err = election.NewNode(cfg, v.Wheel, g.net, election.NewMemoryStorage(), r)
		if err != nil {
			panic(err)
		}
		g.replicas[id] = r
		g.net.Attach(r.node)
		if err := r.node.Start(); err != nil {
			panic(err)
		}
	}
	v.AdvanceTo(time.Second)
	old := g.leader()
	fmt.Println("committed x=1:", g.propose(old, "x=1"))
	fmt.Println("committed y=2:", g.propose(old, "y=2"))
	g.print()

	g.net.Isolate(old, g.ids...)
	fmt.Println("committed z=3 while isolated:", g.propose(old, "z=3"))
	v.AdvanceTo(3 * time.Second)
	g.print()

	g.net.Heal()
	g.propose(old, "w=4") // answered with the newer term
	fmt.Println("committed v=5:", g.propose(g.leader(), "v=5"))
	g.print()
	// Output:
	// committed x=1: true
	// committed y=2: true
	//   n1 Follower  term 1 log [x=1@1 y=2@1]
	//   n2 Follower  term 1 log [x=1@1 y=2@1]
	//   n3 Leader    term 1 log [x=1@1 y=2@1]
	// committed z=3 while isolated: false
	//   n1 Leader    term 2 log [x=1@1 y=2@1]
	//   n2 Follower  term 2 log [x=1@1 y=2@1]
	//   n3 Leader    term 1 log [x=1@1 y=2@1 z=3@1]
	// n3 learnt term 2 from n1's AppendEntries answer: Follower
	// committed v=5: true
	//   n1 Leader    term 2 log [x=1@1 y=2@1 v=5@2]
	//   n2 Follower  term 2 log [x=1@1 y=2@1 v=5@2]
	//   n3 Follower  term 2 log [x=1@1 y=2@1 v=5@2]
}
