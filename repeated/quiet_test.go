package repeated_test

import (
	"io"
	"os"

	"github.com/raftick/raftick/internal/logging"
	"github.com/raftick/raftick/repeated"
)

// quietDefaultLogger silences the default logger for the tests of the
// package, which provoke panics and rejections on purpose, unless the
// process is a child that a test runs to see what the default logger
// prints to standard error (see TestDefaultLoggerPrintsPanics).
func quietDefaultLogger() {
	if os.Getenv(repeated.ChildEnv) == "" {
		logging.SetOutput(io.Discard)
	}
}
