package multiraft

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

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
					require.NotZero(t, x.slotAddr(id))
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

// TestSlotLayout checks that a slot is 16 bytes and a page is aligned to
// a cache line, so that a Touch of an awake group reads and writes one
// line.
func TestSlotLayout(t *testing.T) {
	require.EqualValues(t, 16, unsafe.Sizeof(slot{}))
	var x groupIndex
	for id := range GroupID(4 * pageLen) {
		x.put(&group{id: id})
	}
	for _, p := range x.pages {
		require.Zero(t, uintptr(unsafe.Pointer(p))%lineSize)
	}
}

// TestTouchWord checks the word's encoding: a Touch keeps the awake bit,
// sleep clears it and returns the last Touch, time 0 included.
func TestTouchWord(t *testing.T) {
	var w touchWord
	_, ok := w.last()
	require.False(t, ok, "never touched")
	require.False(t, w.awake())
	require.False(t, w.touch(0), "asleep")
	at, ok := w.last()
	require.True(t, ok)
	require.Zero(t, at)
	w.setAwake()
	require.True(t, w.touch(7*time.Second))
	require.True(t, w.awake())
	at, ok = w.sleep()
	require.True(t, ok)
	require.Equal(t, 7*time.Second, at)
	require.False(t, w.awake())
	require.False(t, w.touch(9*time.Second))
	require.False(t, w.awake(), "a Touch does not wake")
	at, _ = w.last()
	require.Equal(t, 9*time.Second, at)
	w.setAwake()
	require.True(t, w.touch(8*time.Second), "an older touch only reads the word")
	at, _ = w.last()
	require.Equal(t, 9*time.Second, at, "a touch never moves the time back")
	require.True(t, w.awake())

	var x groupIndex
	g := &group{id: 3}
	x.put(g)
	x.word(g).setAwake()
	x.word(g).touch(time.Second)
	x.del(3)
	x.put(g)
	require.Zero(t, x.word(g).v.Load(), "a group indexed again starts asleep, untouched")
}

// TestTouchWordRace runs Touch's side of the word (touch) against
// hibernate's (sleep, then setAwake as a refusal) on two goroutines and
// checks the rule Touch's lock-free path rests on: a sleep sees every
// touch that returned before it began, the bit stays clear until set
// again, and a touch finds the group asleep only right after a sleep that
// saw the touch before it (so every touch is seen by a sleep, or sees
// one).
func TestTouchWordRace(t *testing.T) {
	const n = 200_000
	var w touchWord
	w.setAwake()
	var done atomic.Int64 // touches returned
	asleep := make([]bool, n+1)
	sleptAt := map[int64]bool{} // the last touch each sleep saw (0: none)
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := done.Load()
			at, ok := w.sleep()
			seen := int64(0)
			if ok {
				seen = int64(at)
			}
			if seen < before {
				t.Errorf("a sleep saw touch %d, and touch %d had returned before it began", seen, before)
				return
			}
			sleptAt[seen] = true
			if w.awake() {
				t.Error("the awake bit was set between a sleep and its refusal")
				return
			}
			w.setAwake()
		}
	}()
	for i := 1; i <= n; i++ {
		asleep[i] = !w.touch(time.Duration(i))
		done.Store(int64(i))
	}
	close(stop)
	<-finished
	for i := 1; i <= n; i++ {
		if asleep[i] && !asleep[i-1] && !sleptAt[int64(i-1)] {
			t.Fatalf("touch %d found the group asleep, and no sleep saw touch %d", i, i-1)
		}
	}
}
