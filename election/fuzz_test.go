package election_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/raftick/raftick/election"
)

// FuzzStep drives a small cluster on a virtual wheel with the fuzzer's
// bytes: the first byte picks the options (PreVote, CheckQuorum,
// LeaderStickiness, 3 or 5 voters), the rest is a sequence of operations:
// step an arbitrary message (hostileMessage: any type, sender and term,
// extremes included) into a node, advance virtual time, campaign, crash or
// restart a node. The checker verifies the election safety invariants on
// every event: one leader per term, one vote per node per term, terms
// never decrease or exceed MaxTerm, leaders elected by a majority; and
// after every operation the lease invariant (no lease in a term below
// another leader's), until the input forges a leadership transfer.
//
// Run it with: go test ./election -run '^$' -fuzz FuzzStep -fuzztime 2m
func FuzzStep(f *testing.F) {
	rng := rand.New(rand.NewPCG(10, 1))
	for range 16 {
		b := make([]byte, 16+rng.IntN(240))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	// Issue 10's reproduction, roughly: a vote request with term 2^64-1
	// into node 1, then time.
	f.Add([]byte{0, 0, 0, 2, 0, 4, 10, 0, 0, 0, 0, 0, 1, 255, 1, 255, 1, 255, 1, 255})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			data = data[:1024]
		}
		src := &byteSource{b: data}
		opts := src.byte()
		size := 3
		if opts&8 != 0 {
			size = 5
		}
		const et = 10 * time.Millisecond
		c := newCluster(t, clusterOpts{n: size, delay: et / 20, seed: uint64(opts), config: func(cfg *election.Config) {
			cfg.ElectionTimeout, cfg.HeartbeatInterval, cfg.VoteTimeout = et, et/4, et
			cfg.StepDownInterval = et / 2
			cfg.PreVote, cfg.CheckQuorum, cfg.LeaderStickiness = opts&1 != 0, opts&2 != 0, opts&4 != 0
		}})
		c.leases = true // until a forged transfer (noteForgery)
		c.startAll(t)
		for !src.empty() {
			switch op := src.IntN(8); op {
			case 0, 1, 2:
				c.inject(src)
			case 3, 4:
				c.v.AdvanceBy(time.Duration(src.IntN(64)) * et / 16)
			case 5:
				c.v.AdvanceToNext()
			case 6:
				if n := c.nodes[c.ids[src.IntN(size)]]; n != nil {
					_ = n.Campaign()
				}
			default:
				id := c.ids[src.IntN(size)]
				if c.nodes[id] == nil {
					c.start(t, id)
				} else {
					c.crash(id)
				}
			}
			c.maybeCheckLeases()
		}
		c.v.AdvanceBy(10 * et)
		for _, id := range c.ids {
			c.crash(id)
		}
		if err := c.check.Err(); err != nil {
			t.Fatalf("input %x: %v", data, err)
		}
	})
}
