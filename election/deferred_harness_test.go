package election_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/raftick/raftick/election"
)

// lagStorage is a deferred node's storage in the test cluster (see
// cluster.deferred): a state handed to Defer is written to the node's
// MemoryStorage (which a failing disk refuses) after a random delay on the
// virtual wheel, and only then reported durable; a crash loses what is not
// written yet. Load reads the MemoryStorage: what survives a crash.
type lagStorage struct {
	c    *cluster
	id   election.ID
	node *election.Node
	// epoch counts the node's incarnations: a write scheduled for an
	// earlier one does nothing.
	epoch   int
	pending bool
	hs      election.HardState
	seq     uint64
	rng     *rand.Rand
	max     time.Duration
}

func (s *lagStorage) Load() (election.HardState, error) { return s.c.stores[s.id].Load() }

// Defer keeps the latest state and schedules its write unless one is
// scheduled: the write takes whatever is latest then (group commit).
func (s *lagStorage) Defer(hs election.HardState, seq uint64) {
	s.hs, s.seq = hs, seq
	if !s.pending {
		s.pending = true
		s.schedule()
	}
}

func (s *lagStorage) schedule() {
	epoch := s.epoch
	_, err := s.c.v.Wheel.AfterFunc(1+time.Duration(s.rng.Int64N(int64(s.max))), func() { s.write(epoch) })
	if err != nil {
		panic(err) // a virtual wheel that is not stopped accepts timers
	}
}

// write makes the latest state durable and tells the node, or retries
// later if the disk fails.
func (s *lagStorage) write(epoch int) {
	if epoch != s.epoch || !s.pending {
		return
	}
	if err := s.c.stores[s.id].Save(s.hs); err != nil {
		s.schedule()
		return
	}
	s.pending = false
	s.node.Persisted(s.seq)
}

// crashed forgets what was not written.
func (s *lagStorage) crashed() {
	s.epoch++
	s.pending = false
}

// checkDurable reports an error if m, sent by a deferred node, depends on a
// HardState of its sender that is not durable: a vote request or grant
// whose term and vote are not stored, or any message of a term above the
// stored one (a pre-vote asks for the term after its sender's).
func (c *cluster) checkDurable(m election.Message) error {
	hs, _ := c.stores[m.From].Load()
	term := m.Term
	switch m.Type {
	case election.MsgPreVote:
		term--
	case election.MsgPreVoteResp:
		if m.Granted {
			return nil // the candidate's term, not the sender's
		}
	case election.MsgVote:
		if hs.Term == m.Term && hs.Vote != m.From {
			return fmt.Errorf("n%d sent %v before its own vote was durable (stored %+v)", m.From, m, hs)
		}
	case election.MsgVoteResp:
		if m.Granted && hs.Term == m.Term && hs.Vote != m.To {
			return fmt.Errorf("n%d granted %v before the vote was durable (stored %+v)", m.From, m, hs)
		}
	}
	if hs.Term < term {
		return fmt.Errorf("n%d sent %v in a term not durable (stored %+v)", m.From, m, hs)
	}
	return nil
}
