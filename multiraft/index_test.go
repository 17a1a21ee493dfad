package multiraft

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/testseed"
)

// TestGroupIndex checks the index against a map over dense, sparse and
// huge IDs, with deletes, and that sparse IDs do not make it allocate
// pages beyond its budget.
func TestGroupIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t), 1))
	for _, tc := range []struct {
		name string
		id   func(i int) GroupID
	}{
		{"dense", func(i int) GroupID { return GroupID(i) }},
		{"sparse", func(int) GroupID { return GroupID(rng.Uint64N(maxDenseID)) }},
		{"huge", func(int) GroupID { return GroupID(rng.Uint64()) }},
		{"mixed", func(i int) GroupID {
			if i%3 == 0 {
				return GroupID(rng.Uint64())
			}
			return GroupID(i)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x groupIndex
			want := map[GroupID]*group{}
			for i := range 20_000 {
				id := tc.id(i)
				if want[id] != nil {
					continue
				}
				g := &group{id: id}
				x.put(g)
				want[id] = g
				if i%7 == 0 { // delete an earlier one now and then
					for k := range want {
						x.del(k)
						delete(want, k)
						break
					}
				}
			}
			require.Equal(t, len(want), x.n)
			for id, g := range want {
				require.Same(t, g, x.get(id))
				if tc.name == "dense" { // every dense ID lives in a page
					require.NotZero(t, x.slot(id))
					require.Empty(t, x.other)
				}
			}
			for range 1000 {
				id := GroupID(rng.Uint64N(maxDenseID))
				require.Equal(t, want[id], x.get(id))
			}
			require.LessOrEqual(t, x.npages*pageLen, pageBudget*20_000+16*pageLen, "page budget")
			x.del(GroupID(maxDenseID + 12345)) // absent: no effect
			require.Equal(t, len(want), x.n)
		})
	}
}
