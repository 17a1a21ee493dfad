package peers_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/bench/peers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAdapters checks every adapter: a 1ms timer fires exactly once, not
// before its deadline, and a 1s timer disarmed right away never fires. Each
// runs in a synctest bubble, so time is the bubble's: the test waits for no
// real clock and asserts nothing a loaded machine could break. (go-zero may
// fire up to one 1ms tick early, so its deadline check allows that tick.)
func TestAdapters(t *testing.T) {
	for _, impl := range peers.Impls {
		t.Run("impl="+impl.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var counts [2]atomic.Int32
				firedAt := make(chan time.Time, 4)
				ts, err := impl.New(2, func(i int) {
					counts[i].Add(1)
					if i == 0 {
						firedAt <- time.Now()
					}
				})
				require.NoError(t, err)
				defer ts.Close()

				armed := time.Now()
				ts.Arm(0, time.Millisecond)
				ts.Arm(1, time.Second)
				ts.Disarm(1)
				ts.Sync()

				at := <-firedAt
				slack := time.Duration(0)
				if impl.Name == "gozero" {
					slack = peers.GoZeroInterval
				}
				require.GreaterOrEqual(t, at.Sub(armed), time.Millisecond-slack, "fired early")
				// Wait past the disarmed timer's deadline (plus a tick or two).
				time.Sleep(time.Second + 200*time.Millisecond)
				synctest.Wait()
				require.Equal(t, int32(1), counts[0].Load(), "1ms timer fires exactly once")
				require.Equal(t, int32(0), counts[1].Load(), "disarmed 1s timer never fires")
			})
		})
	}
}
