package election

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// MemoryStorage is a Storage in memory. It survives a Node being stopped
// and replaced (pass the same MemoryStorage to the new Node), not a process
// restart. Safe for concurrent use.
type MemoryStorage struct {
	mu      sync.Mutex
	hs      HardState
	saves   uint64
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
func (s *MemoryStorage) Saves() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// FileStorage is a Storage in a small text file. Save writes a temporary
// file in the same directory, syncs it, renames it over the old one and
// syncs the directory, so a crash leaves either the old or the new state.
// Safe for concurrent use.
type FileStorage struct {
	mu   sync.Mutex
	path string
}

// ErrCorrupt is returned by FileStorage.Load for a file it cannot parse or
// whose checksum does not match.
var ErrCorrupt = errors.New("election: corrupt hard state file")

const fileHeader = "raftick-election-hardstate v1"

// NewFileStorage returns a FileStorage at path. The directory must exist;
// the file is created by the first Save. If the file exists it must be
// readable and valid.
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
	return s, nil
}

// Path returns the file's path.
func (s *FileStorage) Path() string { return s.path }

// Load reads the HardState; a missing file is the zero HardState.
func (s *FileStorage) Load() (HardState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return HardState{}, nil
	}
	if err != nil {
		return HardState{}, fmt.Errorf("election: load hard state: %w", err)
	}
	return decodeHardState(string(b))
}

// Save writes hs durably (temporary file, fsync, rename, directory fsync).
func (s *FileStorage) Save(hs HardState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(s.path)
	f, err := os.CreateTemp(dir, filepath.Base(s.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("election: save hard state: %w", err)
	}
	tmp := f.Name()
	_, werr := f.WriteString(encodeHardState(hs))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("election: save hard state: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("election: save hard state: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every platform can sync a directory
		_ = d.Close()
	}
	return nil
}

func encodeHardState(hs HardState) string {
	body := fmt.Sprintf("%s term=%d vote=%d", fileHeader, hs.Term, hs.Vote)
	return fmt.Sprintf("%s crc=%08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

func decodeHardState(s string) (HardState, error) {
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
	return hs, nil
}
