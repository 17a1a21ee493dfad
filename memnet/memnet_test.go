package memnet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type msg struct{ from, to int }

type box struct{ got []msg }

func newNet(t *testing.T, delay time.Duration) (*Network[int, msg, *box], func(), map[int]*box) {
	v := newVirtual(t)
	n := New(v.Wheel, delay, func(m msg) (int, int) { return m.from, m.to }, func(b *box, m msg) { b.got = append(b.got, m) })
	boxes := map[int]*box{}
	for id := 1; id <= 3; id++ {
		boxes[id] = &box{}
		n.Attach(id, boxes[id])
	}
	return n, func() { runUntil(v, func() bool { return false }) }, boxes
}

// TestNetworkLinks: a cut link drops at send and at arrival, Isolate and
// Partition cut both ways, Heal restores everything, and every message
// is counted once.
func TestNetworkLinks(t *testing.T) {
	n, drain, boxes := newNet(t, time.Millisecond)
	n.Send(msg{1, 2})
	n.Cut(1, 2) // while the message is in flight: undelivered on arrival
	n.Send(msg{1, 2})
	n.Send(msg{2, 1}) // the other direction is up
	drain()
	require.Empty(t, boxes[2].got)
	require.Len(t, boxes[1].got, 1)
	require.Equal(t, Stats{Sent: 3, Delivered: 1, Dropped: 1, Undelivered: 1}, n.Stats())

	n.Heal()
	n.Isolate(3, 1, 2, 3)
	require.False(t, n.Connected(3, 1) || n.Connected(2, 3))
	require.True(t, n.Connected(1, 2))
	n.Heal()
	n.Partition([]int{1}, []int{2, 3})
	require.False(t, n.Connected(1, 2) || n.Connected(3, 1))
	require.True(t, n.Connected(2, 3) && n.Connected(3, 2))
	n.Heal()
	require.True(t, n.Connected(1, 2) && n.Connected(3, 1))

	n.Detach(3)
	n.Send(msg{1, 3})
	drain()
	_, ok := n.Endpoint(3)
	require.False(t, ok)
	require.Equal(t, int64(2), n.Stats().Undelivered, "no endpoint attached on arrival")
}

// TestNetworkRoute: a route loses (no delays) and duplicates (several);
// SetDelay removes it.
func TestNetworkRoute(t *testing.T) {
	n, drain, boxes := newNet(t, 0)
	var delays []time.Duration
	n.SetRoute(func(m msg) []time.Duration {
		delays = delays[:0]
		for range m.from - 1 { // from 1: lost; from 2: once; from 3: twice
			delays = append(delays, time.Millisecond)
		}
		return delays
	})
	n.Send(msg{1, 2})
	n.Send(msg{2, 1})
	n.Send(msg{3, 1})
	drain()
	require.Empty(t, boxes[2].got)
	require.Equal(t, []msg{{2, 1}, {3, 1}, {3, 1}}, boxes[1].got)
	require.Equal(t, Stats{Sent: 3, Delivered: 3, Dropped: 1, Duplicated: 1}, n.Stats())
	n.SetDelay(time.Millisecond)
	n.Send(msg{1, 2})
	drain()
	require.Len(t, boxes[2].got, 1)
}
