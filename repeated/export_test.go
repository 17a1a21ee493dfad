package repeated

import (
	"os"

	"github.com/hashicorp/go-hclog"
)

// QuietDefaultLogger makes DefaultLogger a null logger for the tests of
// the package, which provoke panics and rejections on purpose, unless
// the process is a child that a test runs to see what the default
// logger prints (see TestDefaultLoggerPrintsPanics).
func QuietDefaultLogger() {
	if os.Getenv(ChildEnv) == "" {
		defaultLogger = hclog.NewNullLogger
	}
}

// ChildEnv names the environment variable that tells a test binary it
// runs as a test's child process.
const ChildEnv = "RAFTICK_REPEATED_TEST_CHILD"
