// Package logging is the default logger of every raftick package: where a
// configuration names no logger, a package logs through Default, which
// writes warnings and errors to standard error, as hashicorp/raft's
// default does, so that a failure is never silent. Routine events (a
// leader elected, a role change) are Info or Debug and stay quiet unless
// the user passes a logger of a lower level; hclog.NewNullLogger() turns
// logging off.
//
// SetOutput redirects every default logger at once, those made before
// the call included: a program that owns standard error (a CLI drawing a
// progress bar) or a test that checks or silences the logs uses it.
package logging

import (
	"io"
	"os"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Level is the level of every default logger.
const Level = hclog.Warn

// Default returns a default logger named name (by convention
// "raftick.<package>"): level Level, writing to the current output
// (standard error unless SetOutput changed it).
func Default(name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: Level, Output: output{}})
}

var (
	mu  sync.RWMutex
	out io.Writer = os.Stderr
)

// SetOutput makes every default logger write to w (nil: io.Discard) and
// returns the function that restores the previous output.
func SetOutput(w io.Writer) (restore func()) {
	if w == nil {
		w = io.Discard
	}
	mu.Lock()
	old := out
	out = w
	mu.Unlock()
	return func() {
		mu.Lock()
		out = old
		mu.Unlock()
	}
}

// output is the writer of every default logger: the current output, read
// at each write (hclog serializes a logger's writes itself).
type output struct{}

func (output) Write(p []byte) (int, error) {
	mu.RLock()
	w := out
	mu.RUnlock()
	return w.Write(p)
}
