// Package pebblestore is a multiraft.Store on pebble, CockroachDB's
// embedded key-value store: each Save is one pebble batch committed with
// a sync, so a host's group commit of thousands of HardStates costs one
// fsync of pebble's write-ahead log. Only this package imports pebble:
// servers that bring their own engine implement multiraft.Store and skip
// it.
//
//	st, err := pebblestore.Open(dir)
//	defer st.Close() // after Host.Stop
//	cfg.Store = st
//
// Keys are "hs" and the group ID (8 bytes, big-endian), so that LoadAll
// reads every group in order with one scan. A value is a version byte
// (1), the term and the vote (8 bytes each, big-endian) and a CRC-32C of
// the key and the 17 bytes before it: Load and LoadAll refuse a value
// that does not match (ErrCorrupt), and pebble checks its own files'
// blocks and log records.
//
// A full disk is reported, not fatal: the store keeps a ballast file in
// its directory, and when a write finds the disk full it removes the
// ballast, so that pebble's own writes in flight complete, and refuses
// later Saves (ErrDiskFull) until it could write the ballast again.
package pebblestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// Errors of a Store.
var (
	// ErrCorrupt is returned by Load and LoadAll for a value whose
	// version, length or checksum is wrong.
	ErrCorrupt = errors.New("pebblestore: corrupt hard state")
	// ErrDiskFull is returned by Save while the disk is full (see the
	// package documentation); nothing of that Save was written.
	ErrDiskFull = errors.New("pebblestore: disk full")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("pebblestore: closed")
)

// Store is a multiraft.Store in a pebble database. Safe for concurrent
// use; one Store per directory at a time (pebble locks it).
type Store struct {
	// mu serializes Save, Close and the ballast.
	mu      sync.Mutex
	db      *pebble.DB
	fs      vfs.FS // the file system under pebble's disk-full wrapper
	ballast string
	size    int64 // of the ballast
	full    atomic.Bool
	closed  atomic.Bool
	// key and val are Save's scratch buffers (the batch copies them).
	key [keyLen]byte
	val [valLen]byte
}

var _ multiraft.Store = (*Store)(nil)

const (
	keyLen  = 2 + 8
	valLen  = 1 + 8 + 8 + 4
	version = 1
	// ballastSize is the space the store keeps in reserve for a full
	// disk: pebble's writes in flight when the disk fills, a memtable
	// flush among them.
	ballastSize = 16 << 20
	ballastName = "raftick-ballast"
)

// options are Open's, changed by tests.
type options struct {
	fs      vfs.FS
	ballast int64
	logger  hclog.Logger
}

// Open opens (or creates) the store in directory dir on the operating
// system's file system.
func Open(dir string) (*Store, error) {
	return open(dir, options{fs: vfs.Default, ballast: ballastSize})
}

func open(dir string, o options) (*Store, error) {
	if o.logger == nil {
		o.logger = hclog.Default()
	}
	s := &Store{fs: o.fs, size: o.ballast}
	if err := o.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebblestore: %w", err)
	}
	s.ballast = o.fs.PathJoin(dir, ballastName)
	if err := s.fillBallast(); err != nil {
		return nil, fmt.Errorf("%w: ballast: %v", ErrDiskFull, err)
	}
	pl := o.logger.Named("pebble")
	opts := &pebble.Options{
		FS:     vfs.OnDiskFull(o.fs, s.onDiskFull),
		Logger: logger{pl},
		EventListener: &pebble.EventListener{
			// A corrupt file fails the read that found it (Load and
			// LoadAll return the error) instead of ending the process.
			DataCorruption:  func(info pebble.DataCorruptionInfo) { pl.Error("corruption", "info", info.String()) },
			BackgroundError: func(err error) { pl.Error("background error", "error", err) },
		},
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s.db = db
	return s, nil
}

// Close closes the database. Call it after the Host using the store
// stopped (Host.Stop waits for a write in progress).
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

func (s *Store) encodeKey(g multiraft.GroupID) []byte {
	s.key[0], s.key[1] = 'h', 's'
	binary.BigEndian.PutUint64(s.key[2:], uint64(g))
	return s.key[:]
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode writes hs's value for key into val.
func encode(val *[valLen]byte, key []byte, hs election.HardState) []byte {
	val[0] = version
	binary.BigEndian.PutUint64(val[1:], hs.Term)
	binary.BigEndian.PutUint64(val[9:], uint64(hs.Vote))
	c := crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, val[:17])
	binary.BigEndian.PutUint32(val[17:], c)
	return val[:]
}

// decode checks and decodes a value stored under key.
func decode(key, val []byte) (election.HardState, error) {
	if len(val) != valLen {
		return election.HardState{}, fmt.Errorf("%w: value of %d bytes, want %d", ErrCorrupt, len(val), valLen)
	}
	if val[0] != version {
		return election.HardState{}, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, val[0], version)
	}
	c := crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, val[:17])
	if got := binary.BigEndian.Uint32(val[17:]); got != c {
		return election.HardState{}, fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, c)
	}
	return election.HardState{Term: binary.BigEndian.Uint64(val[1:]), Vote: election.ID(binary.BigEndian.Uint64(val[9:]))}, nil
}

// Save writes states in one pebble batch committed with a sync.
func (s *Store) Save(states []multiraft.GroupState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if s.full.Load() {
		if err := s.fillBallast(); err != nil {
			return fmt.Errorf("%w: %v", ErrDiskFull, err)
		}
		s.full.Store(false)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, gs := range states {
		k := s.encodeKey(gs.Group)
		if err := b.Set(k, encode(&s.val, k, gs.State), nil); err != nil {
			return fmt.Errorf("pebblestore: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: %w", err)
	}
	return nil
}

// Load returns group's HardState, the zero one if it was never saved.
func (s *Store) Load(group multiraft.GroupID) (election.HardState, error) {
	if s.closed.Load() {
		return election.HardState{}, ErrClosed
	}
	var kb [keyLen]byte
	kb[0], kb[1] = 'h', 's'
	binary.BigEndian.PutUint64(kb[2:], uint64(group))
	v, closer, err := s.db.Get(kb[:])
	if errors.Is(err, pebble.ErrNotFound) {
		return election.HardState{}, nil
	}
	if err != nil {
		return election.HardState{}, fmt.Errorf("pebblestore: group %d: %w", group, err)
	}
	defer closer.Close()
	hs, err := decode(kb[:], v)
	if err != nil {
		return election.HardState{}, fmt.Errorf("group %d: %w", group, err)
	}
	return hs, nil
}

// LoadAll calls fn with every group's HardState, in group order.
func (s *Store) LoadAll(fn func(multiraft.GroupID, election.HardState) error) (err error) {
	if s.closed.Load() {
		return ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte("hs"), UpperBound: []byte("ht")})
	if err != nil {
		return fmt.Errorf("pebblestore: %w", err)
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("pebblestore: %w", cerr)
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != keyLen {
			return fmt.Errorf("%w: key of %d bytes", ErrCorrupt, len(k))
		}
		g := multiraft.GroupID(binary.BigEndian.Uint64(k[2:]))
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("pebblestore: group %d: %w", g, err)
		}
		hs, err := decode(k, v)
		if err != nil {
			return fmt.Errorf("group %d: %w", g, err)
		}
		if err := fn(g, hs); err != nil {
			return err
		}
	}
	return nil
}

// onDiskFull is pebble's callback when a write finds the disk full: the
// ballast goes, so that the write (retried once by pebble) and those in
// flight complete, and Saves are refused until the ballast is back.
func (s *Store) onDiskFull() {
	s.full.Store(true)
	_ = s.fs.Remove(s.ballast)
}

// fillBallast creates the ballast file, or checks it is whole; on a full
// disk it removes what it wrote and returns the error.
func (s *Store) fillBallast() (err error) {
	if s.size <= 0 {
		return nil
	}
	if fi, err := s.fs.Stat(s.ballast); err == nil && fi.Size() == s.size {
		return nil
	}
	f, err := s.fs.Create(s.ballast, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = s.fs.Remove(s.ballast)
		}
	}()
	buf := make([]byte, 64<<10)
	for n := int64(0); n < s.size; n += int64(len(buf)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), s.size-n)]); err != nil {
			return err
		}
	}
	return f.Sync()
}

// logger is pebble's Logger on hclog. Fatalf is pebble's last resort (a
// write-ahead log that cannot be written): it logs and panics, as the
// database can no longer promise durability.
type logger struct{ l hclog.Logger }

func (l logger) Infof(format string, args ...any)  { l.l.Debug(fmt.Sprintf(format, args...)) }
func (l logger) Errorf(format string, args ...any) { l.l.Error(fmt.Sprintf(format, args...)) }
func (l logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.l.Error(msg)
	panic(errors.New(msg))
}

var _ io.Closer = (*Store)(nil)
