package wheeltest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
	"github.com/raftick/raftick/wheel/wheeltest"
)

// TestNewInBubble: a real-time wheel in a bubble fires on the bubble's
// clock, exactly, however loaded the machine.
func TestNewInBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := wheeltest.NewInBubble(wheel.DefaultConfig())
		require.NoError(t, err)
		start := time.Now()
		fired := make(chan time.Duration, 1)
		_, err = w.AfterFunc(150*time.Millisecond, func() { fired <- time.Since(start) })
		require.NoError(t, err)
		late := <-fired
		require.GreaterOrEqual(t, late, 150*time.Millisecond)
		require.Less(t, late, 150*time.Millisecond+2*wheel.DefaultConfig().Tick)
		w.Stop()
		<-w.Done()
	})
}
