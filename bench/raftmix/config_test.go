package raftmix

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestValidateNamesTheField: a bad field is a *election.FieldError
// wrapping ErrInvalidConfig, naming the field and its value.
func TestValidateNamesTheField(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	c.Groups = 0
	err := c.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	var fe *election.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "Groups", fe.Field)
	require.Equal(t, 0, fe.Value)
}
