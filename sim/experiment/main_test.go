package experiment

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/raftick/raftick/sim"
)

const ms = time.Millisecond

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// requireField checks that err is a *sim.FieldError of this package
// about field, and returns it.
func requireField(t *testing.T, err error, field string) *sim.FieldError {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidConfig)
	var fe *sim.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, field, fe.Field)
	return fe
}
