package etcdadapter

import (
	"fmt"

	"github.com/hashicorp/go-hclog"
	"go.etcd.io/raft/v3"

	"github.com/raftick/raftick/internal/logging"
)

// hclogLogger is a raft.Logger over an hclog.Logger: etcd raft's levels
// map onto hclog's, and Fatal and Panic log at Error and then panic, as
// raft expects them not to return (Fatal does not exit: a library must
// not end the process).
type hclogLogger struct{ l hclog.Logger }

var _ raft.Logger = hclogLogger{}

// defaultLogger is the raft.Logger of a Config that sets none: etcd raft's
// warnings and errors to standard error (the module's one default,
// internal/logging), named raftick.etcd.
func defaultLogger() raft.Logger { return hclogLogger{logging.Default("raftick.etcd")} }

func (h hclogLogger) Debug(v ...any)              { h.l.Debug(fmt.Sprint(v...)) }
func (h hclogLogger) Debugf(f string, v ...any)   { h.l.Debug(fmt.Sprintf(f, v...)) }
func (h hclogLogger) Info(v ...any)               { h.l.Info(fmt.Sprint(v...)) }
func (h hclogLogger) Infof(f string, v ...any)    { h.l.Info(fmt.Sprintf(f, v...)) }
func (h hclogLogger) Warning(v ...any)            { h.l.Warn(fmt.Sprint(v...)) }
func (h hclogLogger) Warningf(f string, v ...any) { h.l.Warn(fmt.Sprintf(f, v...)) }
func (h hclogLogger) Error(v ...any)              { h.l.Error(fmt.Sprint(v...)) }
func (h hclogLogger) Errorf(f string, v ...any)   { h.l.Error(fmt.Sprintf(f, v...)) }
func (h hclogLogger) Fatal(v ...any)              { h.fail(fmt.Sprint(v...)) }
func (h hclogLogger) Fatalf(f string, v ...any)   { h.fail(fmt.Sprintf(f, v...)) }
func (h hclogLogger) Panic(v ...any)              { h.fail(fmt.Sprint(v...)) }
func (h hclogLogger) Panicf(f string, v ...any)   { h.fail(fmt.Sprintf(f, v...)) }

func (h hclogLogger) fail(msg string) {
	h.l.Error(msg)
	panic(msg)
}
