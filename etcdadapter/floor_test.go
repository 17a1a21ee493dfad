package etcdadapter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTickFloors: a tick interval in nanoseconds, or an election timeout
// (ElectionTick ticks) below election's floor, is refused naming
// TickInterval and its value with the unit.
func TestTickFloors(t *testing.T) {
	c := DefaultConfig()
	c.TickInterval = 100
	err := c.ValidateTiming()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Contains(t, err.Error(), "TickInterval 100ns: is below the floor of 1µs")
	c.TickInterval = 10 * time.Microsecond // 10 ticks: 100µs
	err = c.ValidateTiming()
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.Contains(t, err.Error(), "TickInterval 10µs: gives an election timeout of 100µs")
	c.TickInterval = time.Millisecond
	require.NoError(t, c.ValidateTiming())
}
