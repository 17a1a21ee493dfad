package raftadapter

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/raftick/raftick/internal/logging"
)

// NewLogger returns an unnamed go-hclog logger writing to w at the given
// level: "trace", "debug", "info", "warn", "error" or "off" (any case).
// Loggers derived from it with Named carry only their own names, so the
// hashicorp/raft nodes of a Cluster log as "n1", "n2", ..., not under a
// name of raftick's; name it yourself (l.Named("myapp")) to prefix them.
// hashicorp/raft silently treats an unknown level as its default; an
// unknown level is an error here. A nil w is an error.
func NewLogger(w io.Writer, level string) (hclog.Logger, error) {
	if w == nil {
		return nil, fmt.Errorf("raftadapter: NewLogger: nil writer")
	}
	lv := hclog.LevelFromString(level)
	if lv == hclog.NoLevel {
		return nil, fmt.Errorf("raftadapter: log level %q is unknown (want trace, debug, info, warn, error or off)", strings.TrimSpace(level))
	}
	return hclog.New(&hclog.LoggerOptions{Level: lv, Output: w}), nil
}

// defaultLogger is the logger of a configuration that sets none:
// warnings and errors to standard error, named raftick.raftadapter (the
// module's one default, internal/logging).
func defaultLogger() hclog.Logger { return logging.Default("raftick.raftadapter") }
