package etcdadapter

import (
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// NullLogger returns a raft.Logger that drops everything but Panic and
// Fatal, which panic (Config.Logger: nil logs warnings and errors).
func NullLogger() raft.Logger { return discardLogger{} }

// discardLogger is a raft.Logger that drops everything but Panic and Fatal,
// which panic as etcd expects (raft calls them on broken invariants and
// relies on them not returning). Fatal panics instead of exiting the
// process: a library must not exit.
type discardLogger struct{}

var _ raft.Logger = discardLogger{}

func (discardLogger) Debug(...any)            {}
func (discardLogger) Debugf(string, ...any)   {}
func (discardLogger) Error(...any)            {}
func (discardLogger) Errorf(string, ...any)   {}
func (discardLogger) Info(...any)             {}
func (discardLogger) Infof(string, ...any)    {}
func (discardLogger) Warning(...any)          {}
func (discardLogger) Warningf(string, ...any) {}
func (discardLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (discardLogger) Fatalf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}
func (discardLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }

// bootstrapStorage returns a MemoryStorage holding the initial state of a
// group whose voters are peers: a snapshot at index 1, term 1, carrying
// their ConfState (the bootstrap etcd's interaction tests use, which
// avoids configuration-change entries a node would have to apply before
// it may campaign).
func bootstrapStorage(peers []uint64) (*raft.MemoryStorage, error) {
	st := raft.NewMemoryStorage()
	snap := pb.EnsureSnapshot(nil)
	snap.Metadata.Index = new(uint64(1))
	snap.Metadata.Term = new(uint64(1))
	snap.Metadata.ConfState.Voters = append([]uint64(nil), peers...)
	if err := st.ApplySnapshot(snap); err != nil {
		return nil, &FieldError{Field: "Peers", Value: peers, Reason: "etcd raft's storage refused them: " + err.Error(), Err: ErrInvalidConfig, Cause: err}
	}
	return st, nil
}
