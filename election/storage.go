package election

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// HardState is the state a node must persist before answering a vote: its
// current term and the candidate it voted for in that term (None if none).
type HardState struct {
	Term uint64
	Vote ID
}

// Storage persists a node's HardState. Save must be durable when it returns
// nil: the node sends a vote reply (or its own vote requests) only after
// Save succeeded. Load returns the zero HardState for a fresh node.
type Storage interface {
	Load() (HardState, error)
	Save(HardState) error
}

// LogView is the part of the replicated log leader election needs: the
// index and term of the last entry (0, 0 for an empty log). Last is called
// with the node's lock held; it must be quick and must not call the Node.
type LogView interface {
	Last() (index, term uint64)
}

// StaticLog is a LogView with a fixed last entry. Use it in tests and
// simulations to give nodes logs of different lengths.
type StaticLog struct{ Index, Term uint64 }

// Last returns l.Index, l.Term.
func (l StaticLog) Last() (index, term uint64) { return l.Index, l.Term }

// MemoryStorage is a Storage in memory. It survives a Node being stopped
// and replaced (pass the same MemoryStorage to the new Node), not a process
// restart. Safe for concurrent use.
type MemoryStorage struct {
	mu      sync.Mutex
	hs      HardState
	saves   int64
	saveErr error
}

// NewMemoryStorage returns an empty MemoryStorage (term 0, no vote).
func NewMemoryStorage() *MemoryStorage { return &MemoryStorage{} }

// Load returns the last saved HardState.
func (s *MemoryStorage) Load() (HardState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs, nil
}

// Save stores hs, or returns the error set by SetSaveError.
func (s *MemoryStorage) Save(hs HardState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saveErr != nil {
		return s.saveErr
	}
	s.hs = hs
	s.saves++
	return nil
}

// SetSaveError makes every later Save fail with err (nil: succeed again),
// to test how a node handles a failing disk.
func (s *MemoryStorage) SetSaveError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saveErr = err
}

// Saves returns how many Saves succeeded.
func (s *MemoryStorage) Saves() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// FileStorage is a Storage in a small text file. Save writes a temporary
// file in the same directory, syncs it, renames it over the old one and
// syncs the directory, so a crash leaves either the old or the new state;
// NewFileStorage removes the temporary files such a crash leaves behind.
// The file must be a regular file of at most MaxHardStateFileSize bytes
// holding exactly one record. If the path is a symbolic link, Save
// follows it and replaces the file it points to (writing its temporary
// file beside that file), so the link stays. Safe for concurrent use; one
// FileStorage per path at a time.
//
// A Save whose directory sync failed returns an error, and the state it
// renamed into place is not durable: until a directory sync succeeds,
// Load and Save retry it first and return its error, and NewFileStorage
// syncs the directory before it returns, so a node does not act on a
// state whose sync is known to have failed. A sync that succeeds after
// one failed proves less than it seems: on Linux a failed fsync may clear
// the error, so a later one can succeed while the failed write back is
// lost. A storage error should stop the node, not be retried around.
type FileStorage struct {
	mu   sync.Mutex
	path string
	// unsynced is the directory whose sync failed after a rename; "" if
	// every rename is durable.
	unsynced string
}

// ErrCorrupt is returned by FileStorage.Load for a file it cannot parse or
// whose checksum does not match.
var ErrCorrupt = errors.New("election: corrupt hard state file")

const fileHeader = "raftick-election-hardstate v1"

// MaxHardStateFileSize bounds what FileStorage reads: a record takes at
// most about 100 bytes, anything longer is corrupt.
const MaxHardStateFileSize = 1024

// syncDir makes a rename in dir durable; a variable so tests can make it
// fail.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// syncFile makes a file's data durable; a variable so that a test can
// model a crash that loses what was not synced.
var syncFile = (*os.File).Sync

// isTempOf reports whether name is a temporary file of Save for the file
// base: base + ".tmp" + the digits os.CreateTemp puts in place of "*".
func isTempOf(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base+".tmp")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// NewFileStorage returns a FileStorage at path. The directory must exist;
// the file is created by the first Save. If the file exists it must be a
// readable, valid regular file. NewFileStorage removes the temporary files
// of an interrupted Save (path + ".tmp" + digits) and returns an error if
// it cannot.
func NewFileStorage(path string) (*FileStorage, error) {
	if path == "" {
		return nil, fmt.Errorf("election: NewFileStorage: empty path")
	}
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("election: NewFileStorage: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("election: NewFileStorage: %s is not a directory", filepath.Dir(path))
	}
	s := &FileStorage{path: path}
	if _, err := s.Load(); err != nil {
		return nil, err
	}
	target, err := resolveLinks(path)
	if err != nil {
		return nil, fmt.Errorf("election: NewFileStorage: %w", err)
	}
	if err := removeTemps(target); err != nil {
		return nil, fmt.Errorf("election: NewFileStorage: %w", err)
	}
	// The file may have been renamed into place by a Save whose
	// directory sync failed (or never ran) before the process stopped.
	if err := syncDir(filepath.Dir(target)); err != nil {
		return nil, fmt.Errorf("election: NewFileStorage: sync directory %s: %w", filepath.Dir(target), err)
	}
	return s, nil
}

// maxLinks bounds the symbolic links resolveLinks follows, as Linux's
// MAXSYMLINKS does.
const maxLinks = 40

// resolveLinks follows symbolic links from path and returns the path of
// the file they lead to, which need not exist (a dangling link names the
// file Save creates). The directories of each link are resolved as the
// operating system resolves them, so Save writes the file Load reads.
func resolveLinks(path string) (string, error) {
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		if hops == maxLinks {
			return "", fmt.Errorf("%s: more than %d symbolic links", path, maxLinks)
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			// A relative target is relative to the link's real directory:
			// joined to a path through other links, a ".." in it would
			// name another directory than the one the system resolves.
			dir, err := filepath.EvalSymlinks(filepath.Dir(path))
			if err != nil {
				return "", err
			}
			target = filepath.Join(dir, target)
		}
		path = target
	}
}

// syncPending retries the directory sync a Save could not do, and returns
// its error while it fails; s.mu is held.
func (s *FileStorage) syncPending() error {
	if s.unsynced == "" {
		return nil
	}
	if err := syncDir(s.unsynced); err != nil {
		return fmt.Errorf("election: the last saved hard state is not durable: sync directory %s: %w", s.unsynced, err)
	}
	s.unsynced = ""
	return nil
}

// Path returns the file's path.
func (s *FileStorage) Path() string { return s.path }

// removeTemps removes the temporary files Save may have left next to path.
func removeTemps(path string) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type().IsRegular() && isTempOf(e.Name(), base) {
			errs = append(errs, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

// Load reads the HardState; a missing file is the zero HardState. The
// path must name a regular file (Load never blocks on a FIFO or reads a
// device) of at most MaxHardStateFileSize bytes. After a Save whose
// directory sync failed, Load syncs the directory first and returns its
// error if that fails again.
func (s *FileStorage) Load() (HardState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.syncPending(); err != nil {
		return HardState{}, err
	}
	b, err := readSmallRegular(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return HardState{}, nil
	}
	if err != nil {
		return HardState{}, fmt.Errorf("election: load hard state: %w", err)
	}
	return decodeHardState(string(b))
}

// readSmallRegular reads the regular file at path, refusing anything else
// and files above MaxHardStateFileSize. It opens without blocking, so a
// FIFO put at path is refused rather than waited on.
func readSmallRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", ErrCorrupt, path, st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxHardStateFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxHardStateFileSize {
		return nil, fmt.Errorf("%w: %s is longer than %d bytes", ErrCorrupt, path, MaxHardStateFileSize)
	}
	return b, nil
}

// Save writes hs durably (temporary file, fsync, rename, directory fsync),
// beside the file a symbolic link at the path leads to. It returns an
// error, and hs is not durable, if any step fails; see FileStorage for a
// failed directory sync.
func (s *FileStorage) Save(hs HardState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.syncPending(); err != nil {
		return err
	}
	target, err := resolveLinks(s.path)
	if err != nil {
		return fmt.Errorf("election: save hard state: %w", err)
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, filepath.Base(target)+".tmp*")
	if err != nil {
		return fmt.Errorf("election: save hard state: %w", err)
	}
	tmp := f.Name()
	_, werr := f.WriteString(encodeHardState(hs))
	serr := syncFile(f)
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("election: save hard state: %w", err)
	}
	if err := os.Rename(tmp, target); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("election: save hard state: %w", err)
	}
	if err := syncDir(dir); err != nil {
		// The new state is in place but may not survive a crash: the
		// caller must not act on it, nor may anyone who loads it before
		// a sync succeeds.
		s.unsynced = dir
		return fmt.Errorf("election: save hard state: sync directory %s: %w", dir, err)
	}
	return nil
}

func encodeHardState(hs HardState) string {
	body := fmt.Sprintf("%s term=%d vote=%d", fileHeader, hs.Term, hs.Vote)
	return fmt.Sprintf("%s crc=%08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

func decodeHardState(s string) (HardState, error) {
	if i := strings.IndexByte(s, '\n'); i >= 0 && i != len(s)-1 {
		return HardState{}, fmt.Errorf("%w: %d bytes after the record", ErrCorrupt, len(s)-i-1)
	}
	if !strings.HasSuffix(s, "\n") {
		return HardState{}, fmt.Errorf("%w: record not terminated by a newline", ErrCorrupt)
	}
	s = strings.TrimSuffix(s, "\n")
	i := strings.LastIndex(s, " crc=")
	if i < 0 {
		return HardState{}, fmt.Errorf("%w: no checksum", ErrCorrupt)
	}
	body := s[:i]
	var sum uint32
	if _, err := fmt.Sscanf(s[i:], " crc=%08x", &sum); err != nil {
		return HardState{}, fmt.Errorf("%w: bad checksum field", ErrCorrupt)
	}
	if sum != crc32.ChecksumIEEE([]byte(body)) {
		return HardState{}, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	var hs HardState
	rest, ok := strings.CutPrefix(body, fileHeader+" ")
	if !ok {
		return HardState{}, fmt.Errorf("%w: unknown header", ErrCorrupt)
	}
	if _, err := fmt.Sscanf(rest, "term=%d vote=%d", &hs.Term, &hs.Vote); err != nil {
		return HardState{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if enc := encodeHardState(hs); enc != s+"\n" {
		// Trailing bytes inside the record, or a non-canonical form.
		return HardState{}, fmt.Errorf("%w: record is not in canonical form", ErrCorrupt)
	}
	return hs, nil
}
