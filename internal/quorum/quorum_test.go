package quorum

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMajority(t *testing.T) {
	for _, tc := range []struct{ voters, size, spare int }{
		{-1, 1, 0}, {0, 1, 0}, {1, 1, 0}, {2, 2, 0}, {3, 2, 1}, {4, 3, 1}, {5, 3, 2}, {6, 4, 2}, {7, 4, 3},
	} {
		m := Majority(tc.voters)
		require.Equal(t, tc.size, m.Size(), "voters %d", tc.voters)
		require.Equal(t, tc.spare, m.Spare(), "voters %d", tc.voters)
		// Two quorums always intersect: that is what a majority is for.
		if tc.voters > 0 {
			require.Greater(t, 2*m.Size(), tc.voters, "voters %d", tc.voters)
		}
		require.True(t, m.Reached(m.Size()))
		require.False(t, m.Reached(m.Size()-1))
		require.False(t, m.Lost(m.Spare()))
		require.True(t, m.Lost(m.Spare()+1))
	}
}

func TestVotes(t *testing.T) {
	var v Votes[int]
	require.False(t, v.Active())
	require.False(t, v.Record(2, true), "no round open")
	v.Reset(Majority(5), 1)
	require.True(t, v.Active() && v.Answered(1))
	require.Equal(t, Pending, v.Result())
	require.True(t, v.Record(2, false))
	require.False(t, v.Record(2, true), "a repeat answer changes nothing")
	g, r := v.Tally()
	require.Equal(t, [2]int{1, 1}, [2]int{g, r})
	require.True(t, v.Record(3, false))
	require.Equal(t, Pending, v.Result(), "2 refusals of 5 leave a quorum possible")
	require.True(t, v.Record(4, false))
	require.Equal(t, Lost, v.Result())
	v.Reset(Majority(3), 1)
	require.True(t, v.Record(3, true))
	require.Equal(t, Won, v.Result())
	require.Equal(t, "won", v.Result().String())
	v.Clear()
	require.False(t, v.Active() || v.Answered(1))
}
