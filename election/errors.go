package election

import (
	"errors"
)

// Sentinel errors.
var (
	ErrStopped        = errors.New("election: node stopped")
	ErrNotStarted     = errors.New("election: node not started")
	ErrAlreadyStarted = errors.New("election: node already started")
	ErrNotLeader      = errors.New("election: not the leader")
	ErrIsLeader       = errors.New("election: already the leader")
	ErrUnknownNode    = errors.New("election: unknown node")
	ErrNilArgument    = errors.New("election: nil argument")
	// ErrLeaderAlive is returned by Campaign without PreVote while the
	// node's vote is promised to a leader's lease.
	ErrLeaderAlive = errors.New("election: a leader was heard within the election timeout")
)
