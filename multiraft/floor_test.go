package multiraft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/multiraft"
)

// TestDurationFloors: a host duration in nanoseconds (a unit forgotten)
// is refused by Validate, naming the field, the value with its unit and
// the floor; so is the election template's, under its path.
func TestDurationFloors(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*multiraft.Config)
		value string
	}{
		{"Election.ElectionTimeout", func(c *multiraft.Config) { c.Election.ElectionTimeout = 150 }, "150ns"},
		{"HibernateAfter", func(c *multiraft.Config) { c.HibernateAfter = 100 }, "100ns"},
		{"LivenessInterval", func(c *multiraft.Config) { c.LivenessInterval = 10 }, "10ns"},
		{"LivenessTimeout", func(c *multiraft.Config) { c.LivenessTimeout = 900 }, "900ns"},
		{"CoalesceWindow", func(c *multiraft.Config) { c.CoalesceWindow = 5 }, "5ns"},
	} {
		c := multiraft.DefaultConfig()
		c.ID = 1
		tc.edit(&c)
		err := c.Validate()
		require.ErrorIs(t, err, multiraft.ErrInvalidConfig, tc.field)
		require.Contains(t, err.Error(), tc.field+" "+tc.value+": is below the floor of", tc.field)
	}
	c := multiraft.DefaultConfig()
	c.ID, c.HibernateAfter = 1, time.Second
	require.NoError(t, c.Validate())
}
