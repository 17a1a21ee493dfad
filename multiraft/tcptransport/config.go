package tcptransport

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/cfgerr"
	"github.com/raftick/raftick/internal/logging"
)

// ErrInvalidConfig is wrapped by every error Validate returns; errors.As
// finds a *FieldError naming the field.
var ErrInvalidConfig = errors.New("tcptransport: invalid config")

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("tcptransport: closed")

// FieldError reports one invalid field of a Config.
type FieldError = cfgerr.FieldError

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Config configures a Transport. Start from DefaultConfig and set ID,
// Listen and Peers.
type Config struct {
	// ID is this host's node ID (the From of every batch it sends);
	// non-zero.
	ID election.ID
	// Listen is the TCP address to accept peers' connections on, e.g.
	// "10.0.0.1:7100" or "127.0.0.1:0" (a free port; see Addr). Empty
	// means send only (unless Listener is set).
	Listen string
	// Listener, if set, is used instead of listening on Listen: an open
	// listener the caller made (a test's "127.0.0.1:0", or a socket
	// inherited from a supervisor). Close closes it.
	Listener net.Listener
	// Peers maps each peer host's node ID to its address; a batch to a
	// node not in it is dropped and counted (Stats.Unroutable). It must
	// not name ID.
	Peers map[election.ID]string

	// QueueLen is how many batches wait per peer while its connection
	// writes or reconnects; >= 1. Send drops a batch, and counts it, when
	// the queue is full: it never blocks the Host.
	QueueLen int
	// MaxFrame is the largest frame body accepted from a peer, in bytes;
	// in [1 KiB, 1 GiB]. A larger frame closes the connection.
	MaxFrame int
	// DialTimeout bounds one connection attempt (TLS handshake
	// included); > 0.
	DialTimeout time.Duration
	// WriteTimeout bounds one write to a peer's connection; > 0. A peer
	// that stops reading for longer is disconnected and redialled.
	WriteTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait between failed
	// connection attempts to a peer: it starts at BackoffMin, doubles on
	// every failure up to BackoffMax, and each wait is drawn in
	// [d/2, d). 0 < BackoffMin <= BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// BufferSize is the size of each connection's read and write
	// buffers, in bytes; >= 4 KiB.
	BufferSize int

	// TLS, if set, secures every connection: the listener serves with it
	// (Certificates), and dials use it as a client (RootCAs; ServerName
	// defaults to the peer address's host). Set ClientAuth and ClientCAs
	// for mutual TLS.
	TLS *tls.Config

	// Logger receives connection errors (a corrupt stream, a failed
	// dial, a lost connection) at Warn and Error; nil means the
	// project's default logger (standard error, level Warn, named
	// "raftick.tcptransport"). hclog.NewNullLogger() turns logging off.
	Logger hclog.Logger
}

// DefaultConfig returns a Config with 4096-batch queues, 64 MiB frames,
// 64 KiB buffers, 1s dial and 5s write timeouts, and reconnects backing
// off from 50ms to 2s. ID, Listen and Peers must still be set.
func DefaultConfig() Config {
	return Config{
		QueueLen:     4096,
		MaxFrame:     64 << 20,
		DialTimeout:  time.Second,
		WriteTimeout: 5 * time.Second,
		BackoffMin:   50 * time.Millisecond,
		BackoffMax:   2 * time.Second,
		BufferSize:   64 << 10,
	}
}

// Validate reports the first invalid field of c, or nil.
func (c Config) Validate() error {
	switch {
	case c.ID == election.None:
		return fieldErr("ID", c.ID, "must be non-zero")
	case c.QueueLen < 1:
		return fieldErr("QueueLen", c.QueueLen, "must be >= 1")
	case c.MaxFrame < 1<<10 || c.MaxFrame > 1<<30:
		return fieldErr("MaxFrame", c.MaxFrame, "must be in [1024, 1<<30]")
	case c.DialTimeout <= 0:
		return fieldErr("DialTimeout", c.DialTimeout, "must be > 0")
	case c.WriteTimeout <= 0:
		return fieldErr("WriteTimeout", c.WriteTimeout, "must be > 0")
	case c.BackoffMin <= 0:
		return fieldErr("BackoffMin", c.BackoffMin, "must be > 0")
	case c.BackoffMax < c.BackoffMin:
		return fieldErr("BackoffMax", c.BackoffMax, "must be >= BackoffMin (%v)", c.BackoffMin)
	case c.BufferSize < 4<<10:
		return fieldErr("BufferSize", c.BufferSize, "must be >= 4096")
	}
	for id, addr := range c.Peers {
		switch {
		case id == election.None:
			return fieldErr("Peers", c.Peers, "node ID 0 is not a node")
		case id == c.ID:
			return fieldErr("Peers", c.Peers, "must not name this host (%d)", c.ID)
		case addr == "":
			return fieldErr("Peers", c.Peers, "node %d has an empty address", id)
		}
	}
	return nil
}

var defaultLogger = sync.OnceValue(func() hclog.Logger { return logging.Default("raftick.tcptransport") })
