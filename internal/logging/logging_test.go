package logging_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/logging"
)

// TestDefaultLevelAndOutput: a default logger writes warnings and errors,
// named, to the output set (even one set after the logger was made), and
// not routine Info lines; restore brings the previous output back.
func TestDefaultLevelAndOutput(t *testing.T) {
	defer logging.SetOutput(io.Discard)()
	l := logging.Default("raftick.test")
	var buf bytes.Buffer
	restore := logging.SetOutput(&buf)
	l.Info("routine")
	l.Warn("careful", "k", 1)
	l.Error("broken")
	restore()
	got := buf.String()
	require.NotContains(t, got, "routine")
	require.Contains(t, got, "[WARN]  raftick.test: careful: k=1")
	require.Contains(t, got, "[ERROR] raftick.test: broken")
	require.Equal(t, 2, strings.Count(got, "\n"))

	var after bytes.Buffer
	restore = logging.SetOutput(&after)
	restore()
	l.Warn("to the old output")
	require.Zero(t, after.Len(), "restore must bring the previous output back")
}

// TestSetOutputNil: nil discards rather than panicking at the first write.
func TestSetOutputNil(t *testing.T) {
	restore := logging.SetOutput(nil)
	defer restore()
	logging.Default("raftick.test").Error("dropped")
}
