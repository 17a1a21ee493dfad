package pebblestore

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

func quiet() hclog.Logger { return hclog.NewNullLogger() }

func states(from, n int, term uint64) []multiraft.GroupState {
	out := make([]multiraft.GroupState, n)
	for i := range out {
		out[i] = multiraft.GroupState{Group: multiraft.GroupID(from + i), State: election.HardState{Term: term, Vote: election.ID(1 + i%3)}}
	}
	return out
}

func loadAll(t *testing.T, s *Store) map[multiraft.GroupID]election.HardState {
	t.Helper()
	m := map[multiraft.GroupID]election.HardState{}
	require.NoError(t, s.LoadAll(func(g multiraft.GroupID, hs election.HardState) error { m[g] = hs; return nil }))
	return m
}

// TestSaveLoadReopen: what Save wrote, Load and LoadAll return, after a
// reopen too; a group never saved loads as the zero state.
func TestSaveLoadReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := open(dir, options{fs: vfs.Default, ballast: 1 << 20, logger: quiet()})
	require.NoError(t, err)
	require.NoError(t, s.Save(states(1, 100, 3)))
	require.NoError(t, s.Save(states(50, 10, 4)))
	hs, err := s.Load(55)
	require.NoError(t, err)
	require.Equal(t, election.HardState{Term: 4, Vote: 3}, hs)
	hs, err = s.Load(1000)
	require.NoError(t, err)
	require.Zero(t, hs)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	_, err = s.Load(1)
	require.ErrorIs(t, err, ErrClosed)

	s, err = open(dir, options{fs: vfs.Default, ballast: 1 << 20, logger: quiet()})
	require.NoError(t, err)
	defer s.Close()
	m := loadAll(t, s)
	require.Len(t, m, 100)
	require.Equal(t, election.HardState{Term: 3, Vote: 1}, m[1])
	require.Equal(t, election.HardState{Term: 4, Vote: 1}, m[50])
}

// TestCorruptValue: a value with a bad version, length or checksum, or
// one moved under another group's key, is refused with ErrCorrupt.
func TestCorruptValue(t *testing.T) {
	s, err := open(t.TempDir(), options{fs: vfs.Default, logger: quiet()})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Save(states(1, 2, 5)))
	var buf [valLen]byte
	k1 := append([]byte(nil), s.encodeKey(1)...)
	good := append([]byte(nil), encode(&buf, k1, election.HardState{Term: 5, Vote: 1})...)
	bad := map[string][]byte{
		"short":    good[:10],
		"long":     append(append([]byte(nil), good...), 0),
		"version":  append([]byte{9}, good[1:]...),
		"checksum": append(append([]byte(nil), good[:valLen-1]...), good[valLen-1]^1),
		"term":     append(append([]byte{good[0]}, good[1]^0x80), good[2:]...),
	}
	k2 := append([]byte(nil), s.encodeKey(2)...)
	bad["moved"] = good // group 1's value under group 2's key
	for name, v := range bad {
		key := k1
		if name == "moved" {
			key = k2
		}
		require.NoError(t, s.db.Set(key, v, pebble.Sync))
		g := multiraft.GroupID(binaryGroup(key))
		_, err := s.Load(g)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, s.LoadAll(func(multiraft.GroupID, election.HardState) error { return nil }), ErrCorrupt, name)
		require.NoError(t, s.Save(states(1, 2, 5))) // repair
	}
}

func binaryGroup(k []byte) uint64 {
	var g uint64
	for _, b := range k[2:] {
		g = g<<8 | uint64(b)
	}
	return g
}

// TestCorruptFiles damages each of the database's files in turn (a byte
// flipped in the middle, cut to half, emptied) and reopens it: Open or
// LoadAll fails with an error, or the states it loads are ones that were
// saved (none invented); nothing panics.
func TestCorruptFiles(t *testing.T) {
	src := t.TempDir()
	s, err := open(src, options{fs: vfs.Default, ballast: 64 << 10, logger: quiet()})
	require.NoError(t, err)
	written := map[multiraft.GroupID]map[election.HardState]bool{}
	for term := uint64(1); term <= 20; term++ {
		batch := states(int(term)*7%50, 50, term)
		require.NoError(t, s.Save(batch))
		for _, gs := range batch {
			if written[gs.Group] == nil {
				written[gs.Group] = map[election.HardState]bool{}
			}
			written[gs.Group][gs.State] = true
		}
	}
	require.NoError(t, s.db.Flush()) // an sstable too, besides the log
	require.NoError(t, s.Save(states(0, 10, 21)))
	for _, gs := range states(0, 10, 21) {
		if written[gs.Group] == nil {
			written[gs.Group] = map[election.HardState]bool{}
		}
		written[gs.Group][gs.State] = true
	}
	latest := loadAll(t, s)
	require.NoError(t, s.Close())
	files, err := os.ReadDir(src)
	require.NoError(t, err)
	refused, tried, lost := 0, 0, 0
	for _, f := range files {
		if f.Name() == "LOCK" || f.Name() == ballastName || f.IsDir() {
			continue
		}
		for _, mode := range []string{"flip", "half", "empty"} {
			tried++
			dir := t.TempDir()
			copyDir(t, src, dir)
			damage(t, filepath.Join(dir, f.Name()), mode)
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v", r)
						t.Errorf("%s %s: %v", f.Name(), mode, err)
					}
				}()
				s, err := open(dir, options{fs: vfs.Default, ballast: 64 << 10, logger: quiet()})
				if err != nil {
					return err
				}
				defer s.Close()
				got := map[multiraft.GroupID]election.HardState{}
				err = s.LoadAll(func(g multiraft.GroupID, hs election.HardState) error {
					if !written[g][hs] {
						t.Errorf("%s %s: group %d loaded %+v, never saved", f.Name(), mode, g, hs)
					}
					got[g] = hs
					return nil
				})
				if err == nil && (len(got) != len(latest) || func() bool {
					for g, hs := range latest {
						if got[g] != hs {
							return true
						}
					}
					return false
				}()) {
					lost++
					t.Logf("%s %s: opened without an error but lost acknowledged states", f.Name(), mode)
				}
				return err
			}()
			if err != nil {
				refused++
			}
		}
	}
	t.Logf("%d damaged copies: %d refused with an error, %d opened without one but lost acknowledged states (a damaged log tail reads as a torn write), the others intact; none invented a state", tried, refused, lost)
	require.NotZero(t, refused)
}

func copyDir(t *testing.T, from, to string) {
	files, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(from, f.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, f.Name()), b, 0o644))
	}
}

func damage(t *testing.T, path, mode string) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	switch mode {
	case "flip":
		if len(b) > 0 {
			b[len(b)/2] ^= 0x5a
		}
	case "half":
		b = b[:len(b)/2]
	case "empty":
		b = nil
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// capFS is a file system of cap bytes over another: a write past the
// capacity fails with ENOSPC, and removing a file gives its space back.
type capFS struct {
	vfs.FS
	mu    chan struct{} // a one-slot lock usable from the files
	used  int64
	cap   int64
	sizes map[string]int64
}

func newCapFS(inner vfs.FS, capacity int64) *capFS {
	fs := &capFS{FS: inner, mu: make(chan struct{}, 1), cap: capacity, sizes: map[string]int64{}}
	return fs
}

func (fs *capFS) lock()   { fs.mu <- struct{}{} }
func (fs *capFS) unlock() { <-fs.mu }

func (fs *capFS) setCap(c int64) { fs.lock(); fs.cap = c; fs.unlock() }
func (fs *capFS) usedBytes() int64 {
	fs.lock()
	defer fs.unlock()
	return fs.used
}

// grow accounts for name growing to end; it fails past the capacity.
func (fs *capFS) grow(name string, end int64) error {
	fs.lock()
	defer fs.unlock()
	if d := end - fs.sizes[name]; d > 0 {
		if fs.used+d > fs.cap {
			return &os.PathError{Op: "write", Path: name, Err: noSpace}
		}
		fs.used += d
		fs.sizes[name] = end
	}
	return nil
}

func (fs *capFS) forget(name string) {
	fs.lock()
	fs.used -= fs.sizes[name]
	delete(fs.sizes, name)
	fs.unlock()
}

func (fs *capFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	fs.forget(name)
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &capFile{File: f, fs: fs, name: name}, nil
}

func (fs *capFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &capFile{File: f, fs: fs, name: name}, nil
}

func (fs *capFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(old, name, c)
	if err != nil {
		return nil, err
	}
	fs.lock()
	fs.sizes[name] = fs.sizes[old]
	delete(fs.sizes, old)
	fs.unlock()
	return &capFile{File: f, fs: fs, name: name}, nil
}

func (fs *capFS) Remove(name string) error {
	if err := fs.FS.Remove(name); err != nil {
		return err
	}
	fs.forget(name)
	return nil
}

func (fs *capFS) Rename(old, name string) error {
	if err := fs.FS.Rename(old, name); err != nil {
		return err
	}
	fs.forget(name)
	fs.lock()
	fs.sizes[name] = fs.sizes[old]
	delete(fs.sizes, old)
	fs.unlock()
	return nil
}

type capFile struct {
	vfs.File
	fs   *capFS
	name string
	pos  int64
}

func (f *capFile) Write(p []byte) (int, error) {
	if err := f.fs.grow(f.name, f.pos+int64(len(p))); err != nil {
		return 0, err
	}
	n, err := f.File.Write(p)
	f.pos += int64(n)
	return n, err
}

func (f *capFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.grow(f.name, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

// TestDiskFull fills a disk of limited size (capFS over pebble's
// in-memory file system): a Save that fills it still succeeds (the
// ballast gives pebble room), later ones fail with ErrDiskFull and write
// nothing, and once space is freed Saves succeed again; every
// acknowledged state survives a reopen.
func TestDiskFull(t *testing.T) {
	fs := newCapFS(vfs.NewMem(), 1<<40)
	const ballast = 1 << 20
	s, err := open("db", options{fs: fs, ballast: ballast, logger: quiet()})
	require.NoError(t, err)
	acked := map[multiraft.GroupID]election.HardState{}
	save := func(term uint64) error {
		batch := states(0, 500, term)
		err := s.Save(batch)
		if err == nil {
			for _, gs := range batch {
				acked[gs.Group] = gs.State
			}
		}
		return err
	}
	require.NoError(t, save(1))
	fs.setCap(fs.usedBytes() + 64<<10)
	term := uint64(2)
	var full error
	for ; term < 1000 && full == nil; term++ {
		full = save(term)
	}
	require.ErrorIs(t, full, ErrDiskFull, "a full disk is reported")
	require.ErrorIs(t, save(term), ErrDiskFull, "and stays reported while full")
	fs.setCap(1 << 40) // space freed
	require.NoError(t, save(term+1))
	require.NoError(t, save(term+2))
	require.NoError(t, s.Close())

	s, err = open("db", options{fs: fs, ballast: ballast, logger: quiet()})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, acked, loadAll(t, s))
}

// TestKillDuringWrites runs a child process that saves states in a loop
// and prints each acknowledged Save, kills it with SIGKILL at a random
// point and reopens the store: every acknowledged state is there, and
// nothing that was never saved (a group's term is at most one Save ahead
// of the last acknowledged).
func TestKillDuringWrites(t *testing.T) {
	if dir := os.Getenv("PEBBLESTORE_CHILD"); dir != "" {
		childWrites(dir)
		return
	}
	kills := 3
	if testing.Short() {
		kills = 2
	}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 41))
	for k := range kills {
		dir := t.TempDir()
		last := runAndKill(t, dir, 20+rng.IntN(300))
		s, err := open(dir, options{fs: vfs.Default, ballast: ballastSize, logger: quiet()})
		require.NoError(t, err, "kill %d", k)
		m := loadAll(t, s)
		require.NoError(t, s.Close())
		for g := range multiraft.GroupID(groupsPerKill) {
			hs := m[g]
			// Save i writes term i to groups i%groupsPerKill and the next
			// one: the last acknowledged Save that touched g gave its
			// floor, and at most Save last+1 went further.
			floor := lastTouching(last, g)
			require.GreaterOrEqual(t, hs.Term, floor, "kill %d: group %d lost an acknowledged term", k, g)
			require.LessOrEqual(t, hs.Term, last+1, "kill %d: group %d has a term never saved", k, g)
			if hs.Term > 0 {
				require.True(t, touches(hs.Term, g), "kill %d: group %d has term %d, never saved to it", k, g, hs.Term)
				require.Equal(t, election.ID(hs.Term%7+1), hs.Vote)
			}
		}
	}
}

const groupsPerKill = 16

func touches(i uint64, g multiraft.GroupID) bool {
	a := multiraft.GroupID(i % groupsPerKill)
	return g == a || g == (a+1)%groupsPerKill
}

func lastTouching(last uint64, g multiraft.GroupID) uint64 {
	for i := last; i > 0; i-- {
		if touches(i, g) {
			return i
		}
	}
	return 0
}

// runAndKill starts the child on dir, kills it after it acknowledged acks
// Saves (or more: it runs on while the parent reads) and returns the last
// acknowledged Save.
func runAndKill(t *testing.T, dir string, acks int) uint64 {
	cmd := newChild(dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var last uint64
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 1024)
	seen := 0
	for seen < acks {
		n, err := out.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			var v uint64
			if _, err := fmt.Sscanf(string(buf[:i]), "ack %d", &v); err == nil {
				last = v
				seen++
			}
			buf = buf[i+1:]
		}
		if err != nil {
			break
		}
	}
	require.NoError(t, cmd.Process.Kill())
	// Acks printed before the kill and still in the pipe count too.
	rest, _ := io.ReadAll(out)
	for _, line := range strings.Split(string(buf)+string(rest), "\n") {
		var v uint64
		if _, err := fmt.Sscanf(line, "ack %d", &v); err == nil {
			last = v
		}
	}
	_ = cmd.Wait()
	require.NotZero(t, last, "the child acknowledged nothing")
	return last
}

// childWrites is the child: Save i writes term i (vote i%7+1) to groups
// i%groupsPerKill and the next one, and prints "ack i" once it returned.
func childWrites(dir string) {
	s, err := open(dir, options{fs: vfs.Default, ballast: ballastSize, logger: quiet()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := uint64(1); ; i++ {
		a := multiraft.GroupID(i % groupsPerKill)
		hs := election.HardState{Term: i, Vote: election.ID(i%7 + 1)}
		err := s.Save([]multiraft.GroupState{{Group: a, State: hs}, {Group: (a + 1) % groupsPerKill, State: hs}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", i)
	}
}

var noSpace = errNoSpace()

func init() {
	if noSpace == nil {
		panic(errors.New("no ENOSPC on this platform"))
	}
}
