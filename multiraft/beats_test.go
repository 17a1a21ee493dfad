package multiraft_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
	"github.com/raftick/raftick/wheel"
)

// checkCounter counts a host's CheckQuorum checks: those its tick vouched
// for (raftick.host.quorum_heard) and those the leaders judged themselves
// (raftick.election.leader.last_contact).
type checkCounter struct {
	metrics.BlackholeSink
	mu           sync.Mutex
	heard, own   int
	lastContacts int
}

func (s *checkCounter) IncrCounterWithLabels(key []string, v float32, _ []metrics.Label) {
	if strings.Join(key, ".") == "raftick.host.quorum_heard" {
		s.mu.Lock()
		s.heard += int(v)
		s.mu.Unlock()
	}
}

func (s *checkCounter) AddSampleWithLabels(key []string, _ float32, _ []metrics.Label) {
	if strings.Join(key, ".") == "raftick.election.leader.last_contact" {
		s.mu.Lock()
		s.own++
		s.mu.Unlock()
	}
}

func (s *checkCounter) take() (heard, own int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	heard, own = s.heard, s.own
	s.heard, s.own = 0, 0
	return heard, own
}

// TestQuorumHeardPerPeer: with Coalesce, a host judges its leaders'
// CheckQuorum from its peers' answers to its last heartbeat tick, at the
// tick's start: while every answer comes, no leader judges its own acks.
// A group whose answers stop is judged on its own and its leader steps
// down, although the peers' answer batches are as long as before (the
// group's entries missing, another group's repeated): the tally counts
// an answer only as the first to its heartbeat.
func TestQuorumHeardPerPeer(t *testing.T) {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	require.NoError(t, err)
	defer v.Stop()
	net := multiraft.NewMemNetwork(v.Wheel, time.Millisecond)
	const groups = 8
	const et, hb = 150 * time.Millisecond, 50 * time.Millisecond
	const deaf, repeated = multiraft.GroupID(5), multiraft.GroupID(6)
	var cut bool // host 1 hears no answer for deaf; repeated's come twice
	send := net.Transport()
	tr := multiraft.TransportFunc(func(b multiraft.Batch) {
		if cut && b.To == 1 && len(b.Responses) > 0 {
			var rs []multiraft.HeartbeatResponse
			for _, r := range b.Responses {
				switch r.Group {
				case deaf:
				case repeated:
					rs = append(rs, r, r)
				default:
					rs = append(rs, r)
				}
			}
			b.Responses = rs
		}
		send.Send(b)
	})
	var (
		mu        sync.Mutex
		stepDowns = map[multiraft.GroupID][]string{}
	)
	sink := &checkCounter{}
	var hosts []*multiraft.Host
	for id := election.ID(1); id <= 3; id++ {
		cfg := multiraft.DefaultConfig()
		cfg.ID = id
		cfg.HibernateAfter = 0
		cfg.Election.CheckQuorum, cfg.Election.PreVote = true, true
		cfg.Election.ElectionTimeout, cfg.Election.HeartbeatInterval = et, hb
		cfg.Election.Logger = hclog.NewNullLogger()
		cfg.Election.Rand = rand.New(rand.NewPCG(uint64(id), 1))
		if id == 1 {
			cfg.Election.Metrics = sink
			cfg.Observer = func(g multiraft.GroupID, e election.Event) {
				if e.Type == election.EventStepDown {
					mu.Lock()
					stepDowns[g] = append(stepDowns[g], e.Reason)
					mu.Unlock()
				}
			}
		}
		h, err := multiraft.NewHost(cfg, v.Wheel, tr)
		require.NoError(t, err)
		defer h.Stop()
		net.Attach(h)
		hosts = append(hosts, h)
	}
	for _, h := range hosts {
		for g := multiraft.GroupID(1); g <= groups; g++ {
			require.NoError(t, h.AddGroup(multiraft.GroupConfig{ID: g, Voters: []election.ID{1, 2, 3},
				Storage: election.NewMemoryStorage(), Leader: 1}))
		}
	}
	v.AdvanceBy(time.Second)
	sink.take()
	v.AdvanceBy(time.Second)
	heard, own := sink.take()
	ticks := int(time.Second / (hb - hb/10)) // a tick every nine tenths of hb
	require.GreaterOrEqual(t, heard, (ticks-1)*groups, "the tick vouches for every leader")
	require.Zero(t, own, "no leader judges its own acks")

	cut = true
	v.AdvanceBy(time.Second)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, stepDowns[deaf], "the leader that hears no answer steps down")
	require.Contains(t, stepDowns[deaf][0], election.ReasonCheckQuorum)
	for g := multiraft.GroupID(1); g <= groups; g++ {
		if g != deaf {
			require.Empty(t, stepDowns[g], "group %d", g)
			st, err := hosts[0].Status(g)
			require.NoError(t, err)
			require.Equal(t, election.Leader, st.Status.Role, "group %d", g)
		}
	}
	_, own = sink.take()
	require.Positive(t, own, "with an answer missing, the leaders judge their own acks")
	require.True(t, slices.ContainsFunc(stepDowns[deaf], func(r string) bool { return strings.Contains(r, election.ReasonCheckQuorum) }))
}
