package trial

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMaxTime(t *testing.T) {
	require.Equal(t, DefaultMaxTime, MaxTime(0))
	require.Equal(t, DefaultMaxTime, MaxTime(-time.Second))
	require.Equal(t, 3*time.Second, MaxTime(3*time.Second))
}

func TestShortLogsFit(t *testing.T) {
	for _, tc := range []struct {
		short, nodes int
		want         bool
	}{
		{0, 1, true}, {0, 5, true}, {1, 3, true}, {3, 5, true},
		{4, 5, false}, {1, 2, false}, {-1, 5, false},
	} {
		require.Equal(t, tc.want, ShortLogsFit(tc.short, tc.nodes), "short %d of %d", tc.short, tc.nodes)
	}
}
