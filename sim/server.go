package sim

import (
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

// A server is one simulated machine of a Cluster: the election.Node it
// runs (a new one after each restart), its storage and log, and what the
// simulator knows of its state: whether it is up or paused, what waits for
// it while it is blocked, and its disk's schedule. Only the cluster's
// goroutine touches it.
type server struct {
	id       election.ID
	node     *election.Node
	store    *diskStorage
	log      *Log
	up       bool // started and not crashed
	paused   bool
	resume   *wheel.Timer
	held     []election.Message // sent while paused
	queue    []queued           // arrived (or came due) while paused
	diskAt   time.Duration      // instant of the last write issued
	diskEnd  time.Duration      // when the last write issued completes
	sendFree time.Duration      // when the server may send its next request (Network.SendGap)
	rpc      []*rpcPeer         // its RPCs, indexed by peer (Network.CancelBackoff)
	writes   int
	pauseEnd time.Duration // end of the last Pause
	diskBusy time.Duration // blocking disk: frozen until then
	// termAt, termEnd: the instant of the last Save that changed the term
	// and cast a vote, and when its term write (the first) completes.
	termAt, termEnd time.Duration
}

// queued is what waits for a blocked server: a message that arrived, or
// (Network.TimersWait) a timer that came due.
type queued struct {
	msg election.Message
	run func() // a deferred timer; msg is unused then
}

// Log is a mutable election.LogView: experiments give servers logs of
// different lengths and change them between phases.
type Log struct{ index, term uint64 }

// Last returns the index and term of the last entry.
func (l *Log) Last() (index, term uint64) { return l.index, l.term }

// Set sets the last entry.
func (l *Log) Set(index, term uint64) { l.index, l.term = index, term }

// diskStorage keeps a node's HardState in memory (it survives crashes, as
// a disk would) and charges each Save to the node's simulated disk.
type diskStorage struct {
	c     *Cluster
	sv    *server
	inner *election.MemoryStorage
}

func (s *diskStorage) Load() (election.HardState, error) { return s.inner.Load() }

func (s *diskStorage) Save(hs election.HardState) error {
	prev, _ := s.inner.Load()
	if err := s.inner.Save(hs); err != nil {
		return err
	}
	// One write per durable change, as LogCabin makes them: a voter
	// writes when it adopts a higher term and again when it casts its
	// vote, however the node batches them into Saves; a candidate writes
	// its new term and its vote for itself at once. (GroupCommit merges
	// everything of one instant.)
	writes := 0
	if hs.Term != prev.Term {
		writes++
	}
	if hs.Vote != election.None && hs.Vote != s.sv.id && (hs.Vote != prev.Vote || hs.Term != prev.Term) {
		writes++
	}
	first := s.c.diskWrite(s.sv, max(writes, 1))
	if writes == 2 {
		s.sv.termAt, s.sv.termEnd = s.c.w.Now(), first
	}
	return nil
}

// blockingServer is a server's election.ServerLock: the server that blocks
// in Network.TimersWait and Network.RearmAfterTermWrite.
type blockingServer struct {
	c  *Cluster
	sv *server
}

// DeferTimer queues a timer that comes due while the server is blocked by
// a disk write behind the messages that arrived before it.
func (b blockingServer) DeferTimer(run func()) bool {
	c, sv := b.c, b.sv
	if !c.cfg.Network.TimersWait || !sv.up || !sv.paused || sv.diskBusy <= c.w.Now() {
		return false
	}
	sv.queue = append(sv.queue, queued{run: run})
	return true
}

// TermDurableIn is the time left until the term write of the Save just
// made completes.
func (b blockingServer) TermDurableIn() time.Duration {
	c, sv := b.c, b.sv
	if !c.cfg.Network.RearmAfterTermWrite || sv.termAt != c.w.Now() {
		return 0
	}
	return max(sv.termEnd-c.w.Now(), 0)
}

// diskWrite charges n writes to sv's disk, after the writes it already
// issued, and returns when the first of them completes.
func (c *Cluster) diskWrite(sv *server, n int) (first time.Duration) {
	disk := c.cfg.Network.Disk
	now := c.w.Now()
	if disk == nil {
		return now
	}
	if c.cfg.Network.GroupCommit {
		if sv.writes > 0 && sv.diskAt == now {
			return sv.diskEnd // same instant: one write
		}
		n = 1
	}
	end := max(now, sv.diskEnd)
	for i := range n {
		end = addSat(end, disk.Sample(c.rng))
		if i == 0 {
			first = end
		}
	}
	sv.diskAt, sv.diskEnd = now, end
	sv.writes += n
	c.stats.DiskWrites += int64(n)
	if c.cfg.Network.DiskBlocks {
		sv.diskBusy = sv.diskEnd
		_ = c.block(sv, sv.diskEnd)
	}
	return first
}
